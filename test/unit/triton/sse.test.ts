import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseParser } from '../../../src/core/triton/sse';

const enc = (s: string) => Buffer.from(s, 'utf8');

test('parses complete events from one chunk', () => {
  const p = new SseParser();
  const evs = p.push(enc('data: {"response":"a"}\n\ndata: {"response":"b"}\n\n'));
  assert.deepEqual(evs.map((e) => e.data), ['{"response":"a"}', '{"response":"b"}']);
  assert.equal(p.pending, '');
});

test('an event split across chunks is emitted once complete', () => {
  const p = new SseParser();
  assert.deepEqual(p.push(enc('data: {"resp')), []);
  assert.deepEqual(p.push(enc('onse":"x"}\n')), []);
  const evs = p.push(enc('\ndata: {"response":"y"}'));
  assert.deepEqual(evs.map((e) => e.data), ['{"response":"x"}']);
  assert.deepEqual(p.push(enc('\n\n')).map((e) => e.data), ['{"response":"y"}']);
});

test('multi-byte characters split between chunks stay intact', () => {
  const text = 'data: {"response":"你好🙂"}\n\n';
  const bytes = enc(text);
  // Split at every possible byte position, including inside the 3-byte and 4-byte sequences.
  for (let cut = 1; cut < bytes.length; cut++) {
    const p = new SseParser();
    const evs = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut))];
    assert.equal(evs.length, 1, `cut ${cut}`);
    assert.equal(JSON.parse(evs[0]!.data).response, '你好🙂', `cut ${cut}`);
  }
});

test('byte-by-byte feeding yields the same events', () => {
  const bytes = enc('data: {"response":"é"}\n\ndata: {"response":"中"}\n\n');
  const p = new SseParser();
  const evs = [];
  for (const b of bytes) evs.push(...p.push(Uint8Array.of(b)));
  assert.deepEqual(evs.map((e) => JSON.parse(e.data).response), ['é', '中']);
});

test('CRLF line endings, including a CRLF split across chunks', () => {
  const p = new SseParser();
  const evs = [...p.push(enc('data: {"a":1}\r\n\r')), ...p.push(enc('\ndata: {"a":2}\r\n\r\n'))];
  assert.deepEqual(evs.map((e) => e.data), ['{"a":1}', '{"a":2}']);
});

test('an error event in the middle of a stream is delivered as an ordinary event', () => {
  const p = new SseParser();
  const evs = p.push(enc('data: {"response":"ok"}\n\ndata: {"error":"boom"}\n\ndata: {"response":"late"}\n\n'));
  assert.deepEqual(evs.map((e) => JSON.parse(e.data)), [{ response: 'ok' }, { error: 'boom' }, { response: 'late' }]);
});

test('a trailing event without its blank line is returned by end(); an empty tail returns nothing', () => {
  const p = new SseParser();
  assert.deepEqual(p.push(enc('data: {"response":"1"}\n\ndata: {"response":"2"}')).length, 1);
  assert.deepEqual(p.end().map((e) => e.data), ['{"response":"2"}']);
  const q = new SseParser();
  q.push(enc('data: {"x":1}\n\n'));
  assert.deepEqual(q.end(), []);
});

test('comments, event names and multi-line data follow the SSE rules', () => {
  const p = new SseParser();
  const evs = p.push(enc(': keep-alive\n\nevent: delta\ndata: line1\ndata: line2\n\ndata:nospace\n\n'));
  assert.deepEqual(evs, [{ data: 'line1\nline2', event: 'delta' }, { data: 'nospace' }]);
});
