// Export as Markdown's sanitiser (core/chat/exportSanitizer.ts) against answers written to slip past it: copies of
// a tag before the real one (escaped, in a code span, a link title, a URL), images hidden behind escapes, HTML in
// table cells, headings, quotes and list items. Nothing may stay live in a renderer that allows HTML.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import MarkdownIt from 'markdown-it';
import { sanitizeForExport } from '../../../src/core/chat/exportSanitizer';

const TAG = '<img src=x onerror=alert(1)>';
const PIC = 'https://attacker.example/p.png';

/** Each case holds live HTML or an image as written. */
const CASES: Record<string, string> = {
  'escaped copy before the tag': `\\${TAG} ${TAG}`,
  'copy in a link title': `[a](https://example.com "${TAG}") ${TAG}`,
  'copy in a multi-line code span': `\`a\n${TAG}\` ${TAG}`,
  'copy in a URL': `[a](https://example.com/?q=<b>) <b onclick=alert(1)>x</b>`,
  'escaped image before an image': `\\![a] ![b](${PIC})`,
  'copy in a code span': `\`${TAG}\` ${TAG}`,
  'copy in a fence, tag in the next paragraph': `\`\`\`\n${TAG}\n\`\`\`\ntext ${TAG}`,
  'HTML in an image alt': `![${TAG}](${PIC})`,
  'image inside a link': `[![a](${PIC})](https://example.com)`,
  'escaped backslash before an image': `\\\\![b](${PIC})`,
  'two bangs': `!![a](${PIC})`,
  'a tag that hides the end of an image': `![a<b c="](${PIC})">`,
  'table cells with an escaped pipe': `| a \\| <b onclick=x> | ${TAG} |\n|---|---|\n| \\<i> | <i onclick=y> |`,
  'table in a quote': `> | ${TAG} | b |\n> |---|---|\n> | \\${TAG} ${TAG} | c |`,
  'ATX heading with an escaped copy': `# \\${TAG} ${TAG} #`,
  'setext heading': `\\${TAG} <b onclick=x>t</b>\n===`,
  'list item with a multi-line code span copy': `- a\n  \`x\n  ${TAG}\` ${TAG}`,
  'lazy line in a quote': `> \\${TAG}\nlazy ${TAG}`,
  'HTML block': `<div>\n${TAG}\n</div>`,
  'comment then a tag': `<!-- x --> ${TAG}`,
  'autolink then a tag': `<https://example.com/a> ${TAG}`,
  'reference image with a title copy': `![a][r] \\${TAG} ${TAG}\n\n[r]: ${PIC} "${TAG}"`,
  'tab-indented continuation': `- a\n\t\\${TAG} ${TAG}`,
  'entity copy': `&lt;img src=x onerror=alert(1)> ${TAG}`,
  'CRLF lines': `a\r\n\\${TAG} ${TAG}\r\nb`,
  'tag over three lines': 'text <img\nsrc=x\nonerror=alert(1)>',
  'tag over two quoted lines': '> text <img\n> src=x onerror=alert(1)>',
  'trailing no-break space': `\\${TAG} ${TAG}\u00a0`,
  'copy in link text': `[\\${TAG}](https://example.com) ${TAG}`,
  'angle destination with a title copy': `[a](<https://example.com/x> "${TAG}") ${TAG}`,
  'nested emphasis and a copy': `*a **\\${TAG}** ${TAG}*`,
  'image in a table cell': `| ![a](${PIC}) | \\![b] ![c](${PIC}) |\n|---|---|`,
  'nesting deeper than the parser follows': `${'>'.repeat(120)} ${TAG}`,
};

// A renderer that follows nesting further than the sanitiser's parser does.
const renderer = new MarkdownIt({ html: true });
Object.assign(renderer.options, { maxNesting: 1000 });
const flat = (tokens: MarkdownIt.Token[]): MarkdownIt.Token[] => tokens.flatMap((t) => [t, ...flat(t.children ?? [])]);
const live = (markdown: string) => flat(renderer.parse(markdown, {}))
  .filter((t) => t.type === 'html_block' || t.type === 'html_inline' || t.type === 'image').map((t) => `${t.type}: ${t.content}`);

describe('sanitizeForExport: hostile corpus', () => {
  it(`has ${Object.keys(CASES).length} cases, each live as written`, () => {
    assert.ok(Object.keys(CASES).length >= 26);
    for (const [name, markdown] of Object.entries(CASES)) assert.notDeepEqual(live(markdown), [], name);
  });

  for (const [name, markdown] of Object.entries(CASES)) {
    it(`leaves nothing live: ${name}`, () => {
      const out = sanitizeForExport(markdown);
      assert.deepEqual(live(out), [], out);
      const html = renderer.render(out);
      // markdown-it quotes every attribute it writes; an unquoted or event attribute in a tag is someone else's.
      assert.doesNotMatch(html, /<img|<[a-z][a-z0-9]*(\s+[a-z-]+="[^"]*")*\s+(on[a-z]+|[a-z]+=[^"\s>])/i, html);
    });
  }

  it('escapes the live copy, not an earlier one, and keeps the rest as written', () => {
    assert.equal(sanitizeForExport(CASES['escaped copy before the tag']!), `\\${TAG} &lt;img src=x onerror=alert(1)>`);
    assert.equal(sanitizeForExport(CASES['copy in a link title']!), `[a](https://example.com "${TAG}") &lt;img src=x onerror=alert(1)>`);
    assert.equal(sanitizeForExport(CASES['copy in a multi-line code span']!), `\`a\n${TAG}\` &lt;img src=x onerror=alert(1)>`);
    assert.equal(sanitizeForExport(CASES['copy in a URL']!), '[a](https://example.com/?q=<b>) &lt;b onclick=alert(1)>x&lt;/b>');
    assert.equal(sanitizeForExport(CASES['escaped image before an image']!), `\\![a] [b](${PIC})`);
    assert.equal(sanitizeForExport(CASES['table cells with an escaped pipe']!),
      `| a \\| &lt;b onclick=x> | &lt;img src=x onerror=alert(1)> |\n|---|---|\n| \\<i> | &lt;i onclick=y> |`);
    assert.equal(sanitizeForExport(CASES['ATX heading with an escaped copy']!), `# \\${TAG} &lt;img src=x onerror=alert(1)> #`);
    assert.equal(sanitizeForExport(CASES['tag over two quoted lines']!), '> text &lt;img\n> src=x onerror=alert(1)>');
    assert.equal(sanitizeForExport(CASES['a tag that hides the end of an image']!), `[a&lt;b c="](${PIC})">`);
  });

  it('exports what it cannot map back, or cannot make inert, whole as a code block', () => {
    const deep = sanitizeForExport(CASES['nesting deeper than the parser follows']!);
    assert.match(deep, /^```text\n>{120} <img/);
    assert.equal(sanitizeForExport('a ```` b'), 'a ```` b', 'inert text is unchanged');
  });
});
