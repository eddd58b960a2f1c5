// Export as Markdown (core/chat/markdownExport.ts): the document and its file name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Conversation } from '../../../src/core/chat/conversation';
import { conversationToMarkdown, exportFileName, type MarkdownExportLabels } from '../../../src/core/chat/markdownExport';
import { sanitizeForExport } from '../../../src/core/chat/exportSanitizer';
import { modelDisplayName } from '../../../src/core/models/choice';
import MarkdownIt from 'markdown-it';
import { ALL, CORPUS } from '../../webview/support/hostile-corpus';

const labels: MarkdownExportLabels = {
  untitled: 'New conversation',
  user: 'You',
  // As the extension names them: the model that wrote the answer, else the one served now (ChatGLM3-6B here).
  assistant: (model) => modelDisplayName(model ?? 'chatglm3-6b'),
  safetyNote: 'Raw HTML is shown as text and images as links.',
  statusNote: (status, error) => (status === 'failed' ? `Failed — partial answer: ${error}` : `(${status})`),
};

const conversation: Conversation = {
  id: 'c1', title: 'Reverse a list', createdAt: 1, updatedAt: 2,
  messages: [
    { id: 'u1', role: 'user', content: 'How do I reverse a list?\n\n```py\nxs = [1, 2]\n```', status: 'complete', createdAt: 1 },
    { id: 'a1', role: 'assistant', content: 'Use `xs[::-1]`.\n', status: 'complete', createdAt: 2, model: 'glm-4-9b-chat' },
    { id: 'u2', role: 'user', content: 'And in place?', status: 'complete', createdAt: 3 },
    { id: 'a2', role: 'assistant', content: 'Call', status: 'failed', error: 'connection\nreset', createdAt: 4 },
    { id: 'u3', role: 'user', content: 'Again?', status: 'complete', createdAt: 5 },
    { id: 'a3', role: 'assistant', content: '', status: 'stopped', createdAt: 6 },
  ],
};

describe('conversationToMarkdown', () => {
  it('writes the title, each message verbatim under its speaker (an answer under its model), and notes on partial answers', () => {
    assert.equal(conversationToMarkdown(conversation, labels), [
      '# Reverse a list',
      '> Raw HTML is shown as text and images as links.',
      '## You', 'How do I reverse a list?\n\n```py\nxs = [1, 2]\n```',
      '## GLM-4-9B-Chat', 'Use `xs[::-1]`.',
      '## You', 'And in place?',
      '## ChatGLM3-6B', 'Call', '> *Failed — partial answer: connection reset*',
      '## You', 'Again?',
      '## ChatGLM3-6B', '> *(stopped)*',
    ].join('\n\n') + '\n');
  });

  it('names an untitled conversation and keeps a title on one line', () => {
    assert.match(conversationToMarkdown({ ...conversation, title: '', messages: [] }, labels), /^# New conversation\n\n> Raw HTML/);
    assert.match(conversationToMarkdown({ ...conversation, title: 'a\n# b', messages: [] }, labels), /^# a \\# b\n\n> Raw HTML/);
  });
});

describe('sanitizeForExport', () => {
  const rendered = new MarkdownIt({ html: true });
  /** What a renderer with HTML on makes of it: no HTML or image token may be left. */
  const live = (markdown: string) => rendered.parse(markdown, {}).flatMap((t) => [t, ...(t.children ?? [])])
    .filter((t) => t.type === 'html_block' || t.type === 'html_inline' || t.type === 'image').map((t) => `${t.type}: ${t.content}`);

  it('escapes raw HTML (blocks and inline) and makes images links; leaves code and the rest as written', () => {
    assert.equal(sanitizeForExport('<img src=x onerror=alert(1)>\n\ntext'), '&lt;img src=x onerror=alert(1)>\n\ntext');
    assert.equal(sanitizeForExport('a <b onclick="x">bold</b> `<i>` c'), 'a &lt;b onclick="x">bold&lt;/b> `<i>` c');
    assert.equal(sanitizeForExport('![alt](https://attacker.example/p.png "t") and ![r][ref]\n\n[ref]: https://attacker.example/q.png'),
      '[alt](https://attacker.example/p.png "t") and [r][ref]\n\n[ref]: https://attacker.example/q.png');
    const code = '```html\n<script>alert(1)</script>\n```\n\n    <img src=x>\n\nInline `<b>` and <https://example.com/auto>, a < b.';
    assert.equal(sanitizeForExport(code), code, 'code, autolinks and a lone < untouched');
    assert.equal(sanitizeForExport('- item <span>x</span>\n\n> <div>\n> quoted\n> </div>'), '- item &lt;span>x&lt;/span>\n\n> &lt;div>\n> quoted\n> &lt;/div>');
  });

  it('leaves nothing live in the hostile corpus, in any renderer that allows HTML', () => {
    for (const x of ALL) assert.deepEqual(live(sanitizeForExport(x.markdown)), [], x.id);
    assert.deepEqual(live(sanitizeForExport(CORPUS)), []);
    assert.ok(live(CORPUS).length > 40, 'the corpus itself has plenty');
    const whole = conversationToMarkdown({ ...conversation, messages: [{ id: 'a', role: 'assistant', content: CORPUS, status: 'complete', createdAt: 1 }] }, labels);
    assert.deepEqual(live(whole), []);
  });
});

describe('exportFileName', () => {
  it('keeps readable titles, replaces what file systems refuse, shortens, falls back', () => {
    assert.equal(exportFileName('Explain utils.py:12–30'), 'Explain utils.py-12–30.md');
    assert.equal(exportFileName('a/b\\c?*<>|"d'), 'a-b-c-d.md');
    assert.equal(exportFileName('  ..hidden  '), 'hidden.md');
    assert.equal(exportFileName('你好，世界'), '你好，世界.md');
    assert.equal(exportFileName('x'.repeat(100)), `${'x'.repeat(60)}.md`);
    assert.equal(exportFileName('///'), 'conversation.md');
    assert.equal(exportFileName('a\u0001b\u007fc\td'), 'a-b-c d.md', 'control characters go, a tab is a space');
    assert.equal(exportFileName('', '对话'), '对话.md');
  });
});

describe('conversationToMarkdown: title and notes are text', () => {
  const rendered = new MarkdownIt({ html: true });
  it('escapes a file name in the title and a server error in the note', () => {
    const hostile: Conversation = {
      ...conversation, title: 'Explain <img src=x onerror=alert(1)>.py ![p](https://attacker.example/t.png)',
      messages: [{ id: 'a', role: 'assistant', content: 'x', status: 'failed', error: '<img src=y onerror=alert(2)> &amp; `c` *e*', createdAt: 1 }],
    };
    const doc = conversationToMarkdown(hostile, labels);
    const html = rendered.render(doc);
    assert.doesNotMatch(html, /<img/, html);
    assert.match(html, /<h1>Explain &lt;img src=x onerror=alert\(1\)&gt;\.py !\[p\]\(https:\/\/attacker\.example\/t\.png\)<\/h1>/);
    assert.match(html, /<em>Failed — partial answer: &lt;img src=y onerror=alert\(2\)&gt; &amp;amp; `c` \*e\*<\/em>/);
  });

  it('escapes the name of a model the catalog does not know (an external server\'s) in an answer\'s heading', () => {
    const doc = conversationToMarkdown({ ...conversation, messages: [{ id: 'a', role: 'assistant', content: 'x', status: 'complete', createdAt: 1, model: '<img src=z onerror=alert(3)>\n# m' }] }, labels);
    assert.match(doc, /\n## \\<img src=z onerror=alert\(3\)\\> \\# m\n/);
    assert.doesNotMatch(rendered.render(doc), /<img/);
  });
});
