// The client half of the `infill` contract (core/completion/infillClient.ts) against a loopback stand-in for the
// model's /generate_stream (only the contract: the real served model is exercised by the server's tests), and the
// whole path of CompletionService: cache, debounce + cancel-previous, post-processing, line ends.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CompletionService, type InfillRequester } from '../../../src/core/completion/completionService';
import { buildInfillBody, buildInfillPayload, requestInfill, type InfillOptions, type InfillPayload } from '../../../src/core/completion/infillClient';
import type { CompletionSettings } from '../../../src/core/completion/settings';
import { TritonClient } from '../../../src/core/triton/client';

interface Seen { body: Record<string, unknown>; closedEarly: boolean }

/** Streams `chunks` as `response` events (one per 10 ms), then a final; records each request and whether the client left early. */
function stubServer(chunks: string[], final: Record<string, unknown> = { finish_reason: 'stop' }) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => { raw += c.toString('utf8'); });
    req.on('end', () => {
      const entry: Seen = { body: JSON.parse(raw) as Record<string, unknown>, closedEarly: false };
      seen.push(entry);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const timer = setInterval(() => {
        if (i < chunks.length) res.write(`data: ${JSON.stringify({ response: chunks[i++] })}\n\n`);
        else { clearInterval(timer); res.end(`data: ${JSON.stringify({ response: '', ...final })}\n\n`); }
      }, 10);
      res.on('close', () => { if (!res.writableEnded) { entry.closedEarly = true; clearInterval(timer); } });
    });
  });
  return { server, seen };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const payload: InfillPayload = buildInfillPayload({ prefix: 'def add(a, b):\n    return ', suffix: '\n', path: 'm.py', language: 'python', mode: 'line', references: [{ path: 'u.py', text: 'x = 1\n' }] });

describe('infill request', () => {
  it('the body is prompt "" beside the infill JSON and the mode\'s token limit', () => {
    const body = buildInfillBody(payload, { maxNewTokens: 64 });
    assert.equal(body.prompt, '');
    assert.deepEqual(JSON.parse(body.infill as string), payload);
    assert.deepEqual(Object.keys(JSON.parse(body.infill as string) as object), ['prefix', 'suffix', 'path', 'language', 'mode', 'references']);
    assert.equal(body.max_new_tokens, 64);
    assert.equal(body.history, undefined);
    assert.throws(() => buildInfillBody({ ...payload, mode: 'word' } as unknown as InfillPayload, { maxNewTokens: 1 }));
  });

  const stub = stubServer(['a', ' + b', '\n    ', 'print(a)', '\n']);
  let client: TritonClient;
  before(async () => { client = new TritonClient({ baseUrl: await listen(stub.server) }); });
  after(async () => { await client.destroy(); stub.server.close(); });

  it('streams the middle text until the final', async () => {
    const result = await requestInfill(client, 'codegeex4-all-9b', payload, { maxNewTokens: 256 });
    assert.deepEqual(result, { text: 'a + b\n    print(a)\n', finishReason: 'stop' });
    assert.equal(stub.seen.at(-1)!.closedEarly, false);
  });

  it('a LINE completion leaves the stream once the line is complete: the connection closes, so the server cancels', async () => {
    const result = await requestInfill(client, 'codegeex4-all-9b', payload, { maxNewTokens: 64, enough: (t) => t.includes('\n') });
    assert.deepEqual(result, { text: 'a + b\n    ', finishReason: 'enough' });
    await waitFor(() => stub.seen.at(-1)!.closedEarly);
  });

  it('aborting closes the connection too', async () => {
    const ctrl = new AbortController();
    const pending = requestInfill(client, 'codegeex4-all-9b', payload, { maxNewTokens: 64, signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 15);
    await assert.rejects(pending, (e: unknown) => (e as { code?: string }).code === 'cancelled');
    await waitFor(() => stub.seen.at(-1)!.closedEarly);
  });

  it('an error event (a model without infilling refuses) is a TritonError with the server\'s text', async () => {
    const refusing = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ error: 'chatglm3-6b has no fill-in-the-middle' })}\n\n`);
    });
    const c = new TritonClient({ baseUrl: await listen(refusing) });
    try {
      await assert.rejects(requestInfill(c, 'chatglm3-6b', payload, { maxNewTokens: 64 }), /fill-in-the-middle/);
    } finally {
      await c.destroy();
      refusing.close();
    }
  });
});

const settings: CompletionSettings = { enabled: true, languages: { '*': true }, debounceMs: 0, exclude: [], maxNewTokens: { line: 64, block: 256 } };
const doc = (text: string) => ({ text: text.replace('|', ''), offset: text.indexOf('|'), path: 'a.py', languageId: 'python' });

describe('CompletionService', () => {
  it('asks once, post-processes, then serves typing-through from the cache; CRLF documents get CRLF', async () => {
    const calls: Array<{ payload: InfillPayload; options: InfillOptions }> = [];
    const send: InfillRequester = async (p, options) => {
      calls.push({ payload: p, options });
      return p.mode === 'block' ? { text: 'total = 0\n    return total\nprint(1)', finishReason: 'stop' } : { text: 'compute(1)\nmore', finishReason: 'stop' };
    };
    const service = new CompletionService(send, { settings: () => settings });
    const first = await service.complete({ documentKey: 'a', document: doc('x = |\n'), immediate: true });
    assert.deepEqual(first, { kind: 'text', text: 'compute(1)', mode: 'line', source: 'server' });
    assert.equal(calls[0]!.options.maxNewTokens, 64);
    assert.equal(calls[0]!.payload.language, 'Python', 'CodeGeeX4\'s language tag, not the editor\'s id');
    assert.ok(calls[0]!.options.enough?.('abc\n'), 'LINE mode ends at the first complete line');
    const typed = await service.complete({ documentKey: 'a', document: doc('x = comp|\n'), immediate: true });
    assert.deepEqual(typed, { kind: 'text', text: 'ute(1)', mode: 'line', source: 'cache' });
    assert.equal(calls.length, 1, 'no second request while typing through');
    const block = await service.complete({ documentKey: 'b', document: doc('def f():\r\n    |\r\n'), immediate: true });
    assert.deepEqual(block, { kind: 'text', text: 'total = 0\r\n    return total', mode: 'block', source: 'server' });
    assert.equal(calls[1]!.payload.mode, 'block');
    assert.equal(calls[1]!.payload.prefix, 'def f():\n    ');
    assert.equal(calls[1]!.options.maxNewTokens, 256);
    assert.deepEqual(await service.complete({ documentKey: 'a', document: doc('x = f|oo\n'), immediate: true }), { kind: 'none', reason: 'mid-word' });
  });

  it('a keystroke during a request aborts it (its signal) and only the newest answers', async () => {
    const signals: AbortSignal[] = [];
    const send: InfillRequester = (_p, options) => new Promise((resolve, reject) => {
      signals.push(options.signal!);
      options.signal!.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
      setTimeout(() => resolve({ text: 'done', finishReason: 'stop' }), 30);
    });
    const service = new CompletionService(send, { settings: () => ({ ...settings, debounceMs: 5 }) });
    const first = service.complete({ documentKey: 'a', document: doc('x = |') });
    await waitFor(() => signals.length === 1);
    const second = service.complete({ documentKey: 'a', document: doc('x = y|') });
    assert.deepEqual(await first, { kind: 'none', reason: 'cancelled' });
    assert.equal(signals[0]!.aborted, true);
    assert.deepEqual(await second, { kind: 'text', text: 'done', mode: 'line', source: 'server' });
    assert.deepEqual(service.gate.counts, { started: 2, cancelled: 1 });
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), 'condition not reached');
}
