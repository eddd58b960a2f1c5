// Export as Markdown (core/chat/markdownExport.ts): the document and its file name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Conversation } from '../../../src/core/chat/conversation';
import { conversationToMarkdown, exportFileName, type MarkdownExportLabels } from '../../../src/core/chat/markdownExport';

const labels: MarkdownExportLabels = {
  untitled: 'New conversation',
  user: 'You',
  assistant: 'ChatGLM3',
  statusNote: (status, error) => (status === 'failed' ? `Failed — partial answer: ${error}` : `(${status})`),
};

const conversation: Conversation = {
  id: 'c1', title: 'Reverse a list', createdAt: 1, updatedAt: 2,
  messages: [
    { id: 'u1', role: 'user', content: 'How do I reverse a list?\n\n```py\nxs = [1, 2]\n```', status: 'complete', createdAt: 1 },
    { id: 'a1', role: 'assistant', content: 'Use `xs[::-1]`.\n', status: 'complete', createdAt: 2 },
    { id: 'u2', role: 'user', content: 'And in place?', status: 'complete', createdAt: 3 },
    { id: 'a2', role: 'assistant', content: 'Call', status: 'failed', error: 'connection\nreset', createdAt: 4 },
    { id: 'u3', role: 'user', content: 'Again?', status: 'complete', createdAt: 5 },
    { id: 'a3', role: 'assistant', content: '', status: 'stopped', createdAt: 6 },
  ],
};

describe('conversationToMarkdown', () => {
  it('writes the title, each message verbatim under its speaker, and notes on partial answers', () => {
    assert.equal(conversationToMarkdown(conversation, labels), [
      '# Reverse a list',
      '## You', 'How do I reverse a list?\n\n```py\nxs = [1, 2]\n```',
      '## ChatGLM3', 'Use `xs[::-1]`.',
      '## You', 'And in place?',
      '## ChatGLM3', 'Call', '> *Failed — partial answer: connection reset*',
      '## You', 'Again?',
      '## ChatGLM3', '> *(stopped)*',
    ].join('\n\n') + '\n');
  });

  it('names an untitled conversation and keeps a title on one line', () => {
    assert.match(conversationToMarkdown({ ...conversation, title: '', messages: [] }, labels), /^# New conversation\n$/);
    assert.match(conversationToMarkdown({ ...conversation, title: 'a\n# b', messages: [] }, labels), /^# a # b\n$/);
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
