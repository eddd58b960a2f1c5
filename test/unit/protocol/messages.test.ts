import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_STRINGS,
  format,
  isProtocolError,
  LIMITS,
  mergeStrings,
  parseHostToWebview,
  parseWebviewToHost,
  type HostToWebview,
  type WebviewToHost,
} from '../../../src/protocol';

const validFromWebview: WebviewToHost[] = [
  { type: 'ready' },
  { type: 'send', text: '你好' },
  { type: 'stop' },
  { type: 'regenerate', messageId: '0b6f1f6e-4d4b-4a57-8d0b-2f2d7bfa8f4a' },
  { type: 'editQuestion', messageId: 'abc_DEF-1', text: 'again, with `code`' },
  { type: 'continueAnswer', messageId: 'm2' },
  { type: 'copyMessage', messageId: 'm1' },
  { type: 'focusChanged', focused: false },
  { type: 'copyCode', code: 'print(1)' },
  { type: 'insertCode', code: '' },
  { type: 'applyCode', code: 'return math.pi * r ** 2' },
  { type: 'applyCode', code: '' },
  { type: 'openInEditor', code: 'int main(){}', language: 'c++' },
  { type: 'startServer' },
  { type: 'loadModel' },
  { type: 'openSettings' },
  { type: 'retry', messageId: 'm2' },
  { type: 'setupAction', action: 'startChatglm' },
  { type: 'setupAction', action: 'recheck' },
  { type: 'setupAction', action: 'chooseWeights', check: 'weights' },
  { type: 'setupAction', action: 'installNvidiaToolkit', check: 'nvidia-runtime' },
  { type: 'removeAttachment', id: 'att-1' },
  { type: 'toggleActiveFile', enabled: false },
  { type: 'addFile' },
  { type: 'openAttachment', id: 'att_2' },
  { type: 'addContext', source: 'file' },
  { type: 'addContext', source: 'changes' },
  { type: 'addContext', source: 'symbol' },
  { type: 'openLink', url: 'https://example.com/docs', text: 'the docs' },
  { type: 'openLink', url: 'mailto:a@example.com', text: '' },
];

const chip = { id: 'att-1', kind: 'selection', path: 'src/geometry.py', fullPath: '/w/src/geometry.py', startLine: 3, endLine: 4, tokens: 40 } as const;

const validFromHost: HostToWebview[] = [
  {
    type: 'state',
    activeId: 'c1',
    messages: [
      { id: 'm1', role: 'user', content: 'hi', status: 'complete' },
      { id: 'm2', role: 'assistant', content: 'part', status: 'failed', error: 'boom' },
    ],
    server: { server: 'running', model: 'unloaded', reason: 'not loaded yet', actions: ['loadModel'] },
    busy: false,
    modelName: 'ChatGLM3-6B',
  },
  { type: 'state', activeId: null, messages: [], server: { server: 'unknown', model: 'unknown', actions: [] }, busy: false, modelName: 'ChatGLM3-6B', previousQuestion: '上一个问题' },
  { type: 'delta', conversationId: 'c1', messageId: 'm2', text: '好' },
  { type: 'messageDone', conversationId: 'c1', messageId: 'm2', status: 'complete', finishReason: 'length', promptTokens: 10, completionTokens: 256, historyTrimmed: 2 },
  { type: 'error', message: 'Server unreachable' },
  { type: 'error', message: 'The connection to the server was lost.', retry: 'm2' },
  { type: 'l10n', strings: { send: '发送', 'server.stopped': 'Triton 服务器未运行。' } },
  { type: 'focusInput' },
  {
    type: 'setup',
    setup: {
      visible: true, phase: 'needed', checking: false, summary: '还有 2 项检查需要处理，之后才能启动 ChatGLM3。', primary: 'recheck',
      items: [
        { id: 'docker', level: 'error', label: 'Docker', detail: 'Docker was not found.', fixes: ['installDocker', 'openSettings'] },
        { id: 'daemon', level: 'blocked', label: 'Docker daemon', fixes: [] },
        { id: 'gpu-memory', level: 'unknown', label: 'GPU memory', detail: 'Unknown: nvidia-smi is not installed here.', fixes: [] },
        { id: 'image', level: 'pending', label: 'Serving image', fixes: ['cancelBuild'] },
      ],
    },
  },
  { type: 'setup', setup: { visible: false, phase: 'running', checking: false, summary: '', items: [] } },
  { type: 'attachments', items: [chip, { id: 'f1', kind: 'file', path: 'README.md', fullPath: '/w/README.md' }], activeFile: { path: 'geometry.py', fullPath: '/w/geometry.py', enabled: true, untrusted: false, tokens: 120 } },
  { type: 'attachments', items: [], activeFile: { path: 'big.log', fullPath: '/w/big.log', enabled: false, untrusted: true, refusal: 'big.log is too large to attach.' } },
  { type: 'attachments', items: [], activeFile: null },
  { type: 'draft', text: 'the question that was not sent' },
  {
    type: 'attachments',
    items: [
      { id: 's1', kind: 'symbol', label: 'circle_area', path: 'src/geometry.py', fullPath: '/w/src/geometry.py', startLine: 3, endLine: 4, tokens: 30 },
      { id: 'p1', kind: 'problems', path: 'src/geometry.py', fullPath: '/w/src/geometry.py', tokens: 12 },
      { id: 'c1', kind: 'changes', path: 'project', fullPath: '/w', tokens: 640 },
    ],
    activeFile: { path: 'geometry.py', fullPath: '/w/geometry.py', suggested: true, enabled: false, untrusted: false, tokens: 120 },
  },
  { type: 'budget', systemTokens: 0, historyTurns: [], maxInputTokens: 6144, templateTokens: { explain: 30, fix: 40, tests: 40, doc: 40 } },
  { type: 'budget', systemTokens: 15, historyTurns: [120, 80], maxInputTokens: 6144, templateTokens: { explain: 30, fix: 40, tests: 40, doc: 40 } },
  { type: 'keybindings', explain: { key: 'ctrl+alt+e', mac: 'cmd+alt+e' }, edit: { key: 'ctrl+k ctrl+u' } },
  { type: 'keybindings' },
  {
    type: 'state', activeId: 'c1', busy: false, modelName: 'ChatGLM3-6B', server: { server: 'running', model: 'ready', actions: [] },
    messages: [{ id: 'm1', role: 'user', content: 'what does it return?', status: 'complete', attachments: [{ id: 'att-1', kind: 'selection', path: 'src/geometry.py', fullPath: '/w/src/geometry.py', startLine: 3, endLine: 4 }] }],
  },
];

describe('webview protocol', () => {
  it('accepts every valid message in both directions, unchanged', () => {
    for (const m of validFromWebview) assert.deepEqual(parseWebviewToHost(m), m);
    for (const m of validFromHost) assert.deepEqual(parseHostToWebview(m), m);
  });

  it('rejects unknown types, missing/extra fields, wrong types and bad ids', () => {
    const bad: unknown[] = [
      null, undefined, 42, 'send', [], {}, { type: 'nope' }, { type: 'send' }, { type: 'send', text: 3 },
      { type: 'send', text: '' }, { type: 'send', text: '   \n ' }, { type: 'send', text: 'x', extra: true },
      { type: 'selectConversation', id: '../../etc/passwd' }, { type: 'selectConversation', id: '' },
      { type: 'selectConversation', id: 'a'.repeat(65) }, { type: 'openInEditor', code: 'x', language: 'py"><script>' },
      { type: 'openInEditor', code: 'x' }, { type: 'stop', conversationId: 'c1' }, { type: '__proto__' },
      { type: 'renameConversation', id: 'abc', title: 'removed from the protocol' },
      { type: 'retry' }, { type: 'retry', messageId: '../m1' },
      // a setup action is one the checklist can offer, never a command or a URL of the webview's choosing
      { type: 'setupAction', action: 'workbench.action.terminal.new' }, { type: 'setupAction', action: 'https://example.com' },
      { type: 'setupAction', action: 'chooseWeights', check: '../weights' }, { type: 'setupAction' },
      { type: 'setupAction', action: 'recheck', url: 'https://example.com' },
      // the per-message actions name their message by a well-formed id, and an edit carries real text
      { type: 'regenerate' }, { type: 'regenerate', messageId: '../m1' }, { type: 'continueAnswer', messageId: '' },
      { type: 'copyMessage', messageId: 7 }, { type: 'editQuestion', messageId: 'm1' }, { type: 'editQuestion', messageId: 'm1', text: ' \n ' },
      { type: 'editQuestion', messageId: 'm1', text: 'x'.repeat(LIMITS.userText + 1) }, { type: 'editQuestion', text: 'no id' },
      { type: 'continueAnswer', messageId: 'm1', text: 'extra' },
      { type: 'focusChanged' }, { type: 'focusChanged', focused: 'yes' },
      // removed with the panel's own history list and buttons (the view title and the history quick pick do these)
      { type: 'editLast', text: 'again' }, { type: 'newChat' }, { type: 'selectConversation', id: 'c1' }, { type: 'deleteConversation', id: 'c1' },
      { type: 'removeAttachment', id: '../x' }, { type: 'removeAttachment' }, { type: 'toggleActiveFile', enabled: 'yes' },
      { type: 'toggleActiveFile' }, { type: 'addFile', path: '/etc/passwd' }, { type: 'openAttachment', id: 'a'.repeat(65) },
      { type: 'openAttachment', uri: 'file:///etc/passwd' },
      // `#` names a source; what it attaches is the host's to read, never a path or a command of the webview's choosing
      { type: 'addContext' }, { type: 'addContext', source: 'terminal' }, { type: 'addContext', source: 'file', path: '/etc/passwd' },
      { type: 'addContext', source: ['file'] },
      { type: 'openLink', url: '', text: 'x' }, { type: 'openLink', url: 'https://example.com' }, { type: 'openLink', url: 5, text: '' },
      { type: 'openLink', url: 'https://example.com', text: 'x', target: '_blank' },
      // Apply to Selection carries the code only: the host takes the range from the editor, never from the webview
      { type: 'applyCode' }, { type: 'applyCode', code: 7 }, { type: 'applyCode', code: 'x', uri: 'file:///etc/passwd' },
      { type: 'applyCode', code: 'x', range: { start: 0, end: 1 } },
    ];
    for (const raw of bad) {
      const r = parseWebviewToHost(raw);
      assert.ok(isProtocolError(r), `accepted ${JSON.stringify(raw)}`);
      assert.match(r.error, /invalid message/);
    }
    const badHost: unknown[] = [
      { type: 'delta', conversationId: 'c1', messageId: 'm1' },
      { type: 'messageDone', conversationId: 'c1', messageId: 'm1', status: 'streaming' },
      { type: 'messageDone', conversationId: 'c1', messageId: 'm1', status: 'complete', promptTokens: -1 },
      { type: 'state', activeId: null, messages: [], server: { server: 'running', model: 'ready', actions: ['rm -rf'] }, busy: false, modelName: 'm' },
      { type: 'state', activeId: null, messages: [{ id: 'm', role: 'system', content: '', status: 'complete' }], server: { server: 'running', model: 'ready', actions: [] }, busy: false, modelName: 'm' },
      // the state names the model, holds no conversation list any more, and a recalled question is bounded
      { type: 'state', activeId: null, messages: [], server: { server: 'running', model: 'ready', actions: [] }, busy: false },
      { type: 'state', activeId: null, messages: [], server: { server: 'running', model: 'ready', actions: [] }, busy: false, modelName: '' },
      { type: 'state', activeId: null, messages: [], server: { server: 'running', model: 'ready', actions: [] }, busy: false, modelName: 'm', conversations: [] },
      { type: 'state', activeId: null, messages: [], server: { server: 'running', model: 'ready', actions: [] }, busy: false, modelName: 'm', previousQuestion: 'x'.repeat(LIMITS.userText + 1) },
      { type: 'l10n', strings: { send: 5 } },
      { type: 'l10n', strings: JSON.parse('{"__proto__": "x"}') },
      { type: 'error', message: '' },
      { type: 'error', message: 'lost', retry: '' }, { type: 'error', message: 'lost', retry: ['m1'] },
      { type: 'setup', setup: { visible: true, phase: 'needed', checking: false, summary: 'x', items: [{ id: 'docker', level: 'error', label: 'Docker', fixes: ['rm -rf'] }] } },
      { type: 'setup', setup: { visible: true, phase: 'needed', checking: false, summary: 'x', items: [{ id: 'kernel', level: 'ok', label: 'Linux', fixes: [] }] } },
      { type: 'setup', setup: { visible: true, phase: 'done', checking: false, summary: 'x', items: [] } },
      { type: 'setup', setup: { visible: true, phase: 'ready', checking: false, summary: 'x', items: [], primary: 'startServer' } },
      { type: 'setup', setup: { visible: true, phase: 'ready', checking: false, summary: 'x', items: [], link: 'https://example.com' } },
      // removed from the protocol: a host that still sends it is caught
      { type: 'messageDone', conversationId: 'c1', messageId: 'm1', status: 'complete', notice: 'x' },
      // chips never carry content, need a path, have positive lines and a bounded count
      { type: 'attachments', items: [{ ...chip, content: 'def f(): pass' }], activeFile: null },
      { type: 'attachments', items: [{ ...chip, path: '' }], activeFile: null },
      { type: 'attachments', items: [{ ...chip, startLine: 0 }], activeFile: null },
      { type: 'attachments', items: [{ ...chip, kind: 'folder' }], activeFile: null },
      { type: 'attachments', items: [{ ...chip, kind: 'symbol', label: '' }], activeFile: null },
      { type: 'attachments', items: [], activeFile: { path: 'a.py', fullPath: '/w/a.py', suggested: 'yes', enabled: false, untrusted: false } },
      // the meter's figures: whole, non-negative counts, a budget of at least one token, every template and no more
      { type: 'budget', systemTokens: -1, historyTurns: [], maxInputTokens: 6144, templateTokens: { explain: 1, fix: 1, tests: 1, doc: 1 } },
      { type: 'budget', systemTokens: 0, historyTurns: [1.5], maxInputTokens: 6144, templateTokens: { explain: 1, fix: 1, tests: 1, doc: 1 } },
      { type: 'budget', systemTokens: 0, historyTurns: [], maxInputTokens: 0, templateTokens: { explain: 1, fix: 1, tests: 1, doc: 1 } },
      { type: 'budget', systemTokens: 0, historyTurns: [], maxInputTokens: 6144, templateTokens: { explain: 1, fix: 1, tests: 1 } },
      { type: 'budget', systemTokens: 0, historyTurns: [], maxInputTokens: 6144, templateTokens: { explain: 1, fix: 1, tests: 1, doc: 1, new: 1 } },
      { type: 'budget', systemTokens: 0, historyTurns: Array.from({ length: LIMITS.messages + 1 }, () => 1), maxInputTokens: 6144, templateTokens: { explain: 1, fix: 1, tests: 1, doc: 1 } },
      { type: 'attachments', items: Array.from({ length: LIMITS.attachments + 1 }, (_, i) => ({ ...chip, id: `a${i}` })), activeFile: null },
      { type: 'attachments', items: [] },
      { type: 'attachments', items: [], activeFile: { path: 'a.py', fullPath: '/a.py', enabled: 'yes', untrusted: false } },
      { type: 'draft', text: 'x'.repeat(LIMITS.userText + 1) },
      // keys are shown as text: package.json's own spelling only, nothing else carried along
      { type: 'keybindings', explain: { key: '<img src=x onerror=alert(1)>' } },
      { type: 'keybindings', explain: { key: 'ctrl+e', label: 'x' } },
      { type: 'keybindings', edit: { key: '' } },
      { type: 'keybindings', edit: { key: 'ctrl+' + 'e'.repeat(60) } },
      { type: 'state', conversations: [], activeId: null, busy: false, server: { server: 'running', model: 'ready', actions: [] },
        messages: [{ id: 'm', role: 'user', content: 'q', status: 'complete', attachments: [{ ...chip, path: 'p'.repeat(LIMITS.attachmentPath + 1) }] }] },
    ];
    for (const raw of badHost) assert.ok(isProtocolError(parseHostToWebview(raw)), `accepted ${JSON.stringify(raw)}`);
  });

  it('rejects oversized text', () => {
    assert.ok(!isProtocolError(parseWebviewToHost({ type: 'send', text: 'x'.repeat(LIMITS.userText) })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'send', text: 'x'.repeat(LIMITS.userText + 1) })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'insertCode', code: 'x'.repeat(LIMITS.code + 1) })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'applyCode', code: 'x'.repeat(LIMITS.code + 1) })));
    assert.deepEqual(parseWebviewToHost({ type: 'applyCode', code: 'x'.repeat(LIMITS.code) }), { type: 'applyCode', code: 'x'.repeat(LIMITS.code) });
    assert.ok(isProtocolError(parseHostToWebview({ type: 'delta', conversationId: 'c', messageId: 'm', text: 'x'.repeat(LIMITS.delta + 1) })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'openLink', url: `https://example.com/${'x'.repeat(LIMITS.url)}`, text: '' })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'openLink', url: 'https://example.com/', text: 't'.repeat(LIMITS.linkText + 1) })));
  });

  it('never throws, whatever it is given (fuzz)', () => {
    const types = [...validFromWebview, ...validFromHost].map((m) => m.type);
    const messageLike = fc.record({ type: fc.constantFrom(...types), text: fc.anything(), id: fc.anything(), messageId: fc.anything(), code: fc.anything(), strings: fc.anything() }, { requiredKeys: ['type'] });
    const arb = fc.oneof(fc.anything({ withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true }), messageLike);
    fc.assert(fc.property(arb, (raw) => {
      const a = parseWebviewToHost(raw);
      const b = parseHostToWebview(raw);
      for (const r of [a, b]) assert.ok(isProtocolError(r) || (typeof r === 'object' && typeof r.type === 'string'));
    }), { numRuns: 2000 });
  });

  it('a parsed message never carries fields beyond its schema', () => {
    fc.assert(fc.property(fc.constantFrom(...validFromWebview), fc.string({ minLength: 1, maxLength: 10 }), fc.anything(), (m, key, value) => {
      const r = parseWebviewToHost({ ...m, [key]: value });
      if (!isProtocolError(r)) assert.deepEqual(Object.keys(r).sort(), Object.keys(m).sort());
    }), { numRuns: 500 });
  });

  it('l10n: defaults fill missing keys, unknown keys are ignored, format fills placeholders', () => {
    const s = mergeStrings({ send: '发送', bogus: 'x', stop: '' });
    assert.equal(s.send, '发送');
    assert.equal(s.stop, DEFAULT_STRINGS.stop);
    assert.equal((s as Record<string, string>).bogus, undefined);
    assert.equal(format('{0} prompt, {1} answer, {2}', 3, 'x'), '3 prompt, x answer, {2}');
  });
});
