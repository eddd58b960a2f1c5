// Incremental rendering of the streamed answer: however the text arrives (whole, per character, in random chunks,
// in chunks cut inside tags, entities and fence markers), the final render is exactly the one-shot render of the
// whole answer, and while it streams the view shows the same text (the open block is committed in pieces).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';
import { CORPUS, randomCuts, trickyCuts } from './support/hostile-corpus';
import { longBlock } from './support/long-block-cost';
import { FAST_FRAMES } from './support/page-scripts';
import { syntheticTokens } from './support/render-cost';
import { everyCharacter, streamText } from './support/stream';

let harness: Harness;
let panel: Panel;
before(async () => {
  harness = await startHarness();
  panel = await harness.open({ init: [FAST_FRAMES] });
});
after(async () => {
  await panel?.page.close();
  await harness?.close();
});

const ordered = longBlock('list', 8000).replace(/^- /gm, '1. ');
const sentences = (n: number, sep: string) => Array.from({ length: n }, (_, i) => `Sentence ${i} has **bold ${i}**, \`code_${i}\` and [a link](https://example.com/${i}).`).join(sep);

/** Inputs whose streamed view must show the same text as the final one (no construct spans a cut). */
const SAME_TEXT: Record<string, string> = {
  synthetic: syntheticTokens(1500).join(''),
  paragraph: longBlock('paragraph', 8000),
  list: longBlock('list', 8000),
  ordered,
  table: longBlock('table', 8000),
  closedFence: `${longBlock('fence', 8000)}\n\`\`\`\n\nafter the fence`,
  openFence: `intro\n${longBlock('fence', 8000)}`,
  blockquote: sentences(120, '\n> ').replace(/^/, '> '),
  indentedCode: Array.from({ length: 400 }, (_, i) => `    line_${i} = ${i}`).join('\n'),
  cjk: '模型输出逐步显示，每一帧只渲染末尾。'.repeat(400),
  multiLineParagraph: sentences(150, '\n'),
  mixed: `# Title\n${sentences(40, ' ')}\n- item one\n- item two\n${longBlock('table', 3000)}> quote ${sentences(30, ' ')}\n\n${longBlock('list', 3000)}`,
  noCutPoint: `${'x'.repeat(40_000)} tail`,
  largeFence: `big:\n\n\`\`\`text\n${Array.from({ length: 2500 }, (_, i) => `row ${i}: ${'v'.repeat(i % 50)}`).join('\n')}\n\`\`\`\n\ndone`,
};

/** Inputs where constructs span cuts (the streamed view may differ; the final render may not). */
const FINAL_ONLY: Record<string, string> = {
  corpus: CORPUS,
  references: `${sentences(80, ' ')} See [the spec][spec] and [x].\n\n[spec]: https://example.com/spec\n[x]: https://example.com/x`,
  loose: Array.from({ length: 60 }, (_, i) => `- item ${i}\n\n  continued ${i}`).join('\n\n'),
  setext: `${sentences(100, ' ')}\n===========\n\nafter`,
  crlf: 'Line one\r\nline two\r\n\r\n```js\r\nlet a = 1;\r\n```\r\n\r\n- a\r\n- b\r\n',
  surrogates: `${'😀 emoji 🚀 text 中文 '.repeat(30)}\n\n\`\`\`\n${'tag\u{E0041}\u{E0042} 😀 '.repeat(40)}\n\`\`\``,
  nestedFence: Array.from({ length: 30 }, (_, i) => `${i + 1}. step ${i}\n   \`\`\`bash\n   echo ${i}\n   \`\`\``).join('\n'),
  unclosedEverything: '**bold `code [link](https://example.com/',
};

let seq = 0;

interface Rendered { html: string; text: string; pieces: number; olNumbers: number[] }

async function capture(id: string): Promise<Rendered> {
  return panel.page.evaluate((messageId) => {
    const body = document.querySelector(`article[data-id="${messageId}"] .message-body`) as HTMLElement;
    const clone = body.cloneNode(true) as HTMLElement;
    for (const t of Array.from(clone.querySelectorAll('.code-toolbar'))) t.remove();
    const olNumbers: number[] = [];
    for (const ol of Array.from(body.querySelectorAll(':scope > div > div > .stream-group > ol, :scope > div > div > ol, :scope > div > .stream-group > ol, :scope > ol'))) {
      const start = Number(ol.getAttribute('start') ?? '1');
      Array.from(ol.children).forEach((_, i) => olNumbers.push(start + i));
    }
    return { html: body.innerHTML, text: (clone.textContent ?? '').replace(/\s+/g, ''), pieces: body.querySelectorAll('.stream-soft > .stream-group > *').length, olNumbers };
  }, id);
}

async function oneShot(text: string): Promise<Rendered> {
  const id = `one${seq += 1}`;
  await panel.send(stateMsg([user('u1', 'q'), assistant(id, text)]));
  return capture(id);
}

async function streamed(text: string, cuts: readonly number[]): Promise<{ during: Rendered; final: Rendered }> {
  const id = `str${seq += 1}`;
  await panel.send(stateMsg([user('u1', 'q'), assistant(id, '', 'streaming')]));
  await streamText(panel, 'c1', id, text, cuts);
  const during = await capture(id);
  await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: id, status: 'complete' });
  return { during, final: await capture(id) };
}

function chunkings(text: string): Record<string, number[]> {
  const out: Record<string, number[]> = { whole: [], random: randomCuts(text.length, 64, text.length), mid_tag_entity_fence: trickyCuts(text) };
  if (text.length <= 4000) out.per_character = everyCharacter(text);
  else out.fixed_500 = Array.from({ length: Math.floor((text.length - 1) / 500) }, (_, i) => (i + 1) * 500);
  return out;
}

describe('streaming render', () => {
  for (const [name, text] of Object.entries({ ...SAME_TEXT, ...FINAL_ONLY })) {
    it(`${name}: the final render equals the one-shot render, however the text arrives`, async () => {
      const reference = await oneShot(text);
      for (const [how, cuts] of Object.entries(chunkings(text))) {
        const { during, final } = await streamed(text, cuts);
        assert.equal(final.html, reference.html, `${name}, ${how}: final render`);
        if (name in SAME_TEXT) assert.equal(during.text, reference.text, `${name}, ${how}: the streamed view shows the whole text`);
        if (name === 'ordered' && cuts.length > 20) {
          assert.deepEqual(during.olNumbers, reference.olNumbers, 'item numbers continue across pieces');
          assert.ok(during.pieces > 1, 'the list was committed in pieces');
        }
        if (['paragraph', 'list', 'table', 'blockquote', 'indentedCode', 'cjk', 'multiLineParagraph', 'noCutPoint'].includes(name) && cuts.length > 20) {
          assert.ok(during.pieces > 1, `${name}, ${how}: the open block was committed in pieces (${during.pieces})`);
        }
      }
    });
  }

  it('the page reported no errors', () => {
    assert.deepEqual(panel.errors, []);
  });
});
