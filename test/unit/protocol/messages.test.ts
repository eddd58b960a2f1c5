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
  { type: 'regenerate' },
  { type: 'editLast', text: 'again' },
  { type: 'newChat' },
  { type: 'selectConversation', id: '0b6f1f6e-4d4b-4a57-8d0b-2f2d7bfa8f4a' },
  { type: 'deleteConversation', id: 'abc_DEF-1' },
  { type: 'copyCode', code: 'print(1)' },
  { type: 'insertCode', code: '' },
  { type: 'openInEditor', code: 'int main(){}', language: 'c++' },
  { type: 'startServer' },
  { type: 'loadModel' },
  { type: 'openSettings' },
  { type: 'retry', messageId: 'm2' },
];

const validFromHost: HostToWebview[] = [
  {
    type: 'state',
    conversations: [{ id: 'c1', title: 'hello', createdAt: 1, updatedAt: 2, messageCount: 2 }],
    activeId: 'c1',
    messages: [
      { id: 'm1', role: 'user', content: 'hi', status: 'complete' },
      { id: 'm2', role: 'assistant', content: 'part', status: 'failed', error: 'boom' },
    ],
    server: { server: 'running', model: 'unloaded', reason: 'not loaded yet', actions: ['loadModel'] },
    busy: false,
  },
  { type: 'state', conversations: [], activeId: null, messages: [], server: { server: 'unknown', model: 'unknown', actions: [] }, busy: false },
  { type: 'delta', conversationId: 'c1', messageId: 'm2', text: '好' },
  { type: 'messageDone', conversationId: 'c1', messageId: 'm2', status: 'complete', finishReason: 'length', promptTokens: 10, completionTokens: 256, historyTrimmed: 2 },
  { type: 'error', message: 'Server unreachable' },
  { type: 'error', message: 'The connection to the server was lost.', retry: 'm2' },
  { type: 'l10n', strings: { send: '发送', 'server.stopped': 'Triton 服务器未运行。' } },
  { type: 'focusInput' },
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
      { type: 'state', conversations: [], activeId: null, messages: [], server: { server: 'running', model: 'ready', actions: ['rm -rf'] }, busy: false },
      { type: 'state', conversations: [], activeId: null, messages: [{ id: 'm', role: 'system', content: '', status: 'complete' }], server: { server: 'running', model: 'ready', actions: [] }, busy: false },
      { type: 'l10n', strings: { send: 5 } },
      { type: 'l10n', strings: JSON.parse('{"__proto__": "x"}') },
      { type: 'error', message: '' },
      { type: 'error', message: 'lost', retry: '' }, { type: 'error', message: 'lost', retry: ['m1'] },
      // removed from the protocol: a host that still sends it is caught
      { type: 'messageDone', conversationId: 'c1', messageId: 'm1', status: 'complete', notice: 'x' },
    ];
    for (const raw of badHost) assert.ok(isProtocolError(parseHostToWebview(raw)), `accepted ${JSON.stringify(raw)}`);
  });

  it('rejects oversized text', () => {
    assert.ok(!isProtocolError(parseWebviewToHost({ type: 'send', text: 'x'.repeat(LIMITS.userText) })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'send', text: 'x'.repeat(LIMITS.userText + 1) })));
    assert.ok(isProtocolError(parseWebviewToHost({ type: 'insertCode', code: 'x'.repeat(LIMITS.code + 1) })));
    assert.ok(isProtocolError(parseHostToWebview({ type: 'delta', conversationId: 'c', messageId: 'm', text: 'x'.repeat(LIMITS.delta + 1) })));
  });

  it('never throws, whatever it is given (fuzz)', () => {
    const types = [...validFromWebview, ...validFromHost].map((m) => m.type);
    const messageLike = fc.record({ type: fc.constantFrom(...types), text: fc.anything(), id: fc.anything(), code: fc.anything(), strings: fc.anything() }, { requiredKeys: ['type'] });
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
