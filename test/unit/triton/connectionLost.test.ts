// A stream cut on the way is told apart from a dead server by the server's health right after the cut: through
// the TCP proxy of the fault tests (test/support/tcp-proxy.mjs) in front of a small local Triton stand-in.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { streamChat } from '../../../src/core/triton/chatglm';
import { TritonClient } from '../../../src/core/triton/client';
import { classifyCut, TritonError } from '../../../src/core/triton/errors';

interface Proxy { url: string; stats: { cut: number }; setMode(m: { cutAfterBytes?: number }): void; close(): Promise<void> }
type StartProxy = (o: { targetPort: number; mode?: { cutAfterBytes?: number } }) => Promise<Proxy>;
let startTcpProxy: StartProxy;

const M = 'chatglm3-6b';
let server: Server;
let port = 0;
const health: string[] = [];

before(async () => {
  ({ startTcpProxy } = (await import(pathToFileURL(join(__dirname, '../../support/tcp-proxy.mjs')).href)) as { startTcpProxy: StartProxy });
  // Health answers; generate_stream sends a delta every 10 ms and never ends by itself.
  server = createServer((req, res) => {
    if (req.url === '/v2/health/live') {
      health.push(req.url);
      res.writeHead(200).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const timer = setInterval(() => res.write(`data: ${JSON.stringify({ response: `part ${i++} ` })}\n\n`), 10);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
after(() => { server.closeAllConnections(); server.close(); });

const request = { prompt: 'cut me', history: [] };

async function consume(client: TritonClient, onDelta: (received: string) => void | Promise<void> = () => undefined): Promise<{ text: string; error: unknown }> {
  let text = '';
  try {
    for await (const ev of streamChat(client, M, request)) {
      if (ev.type === 'delta') {
        text += ev.text;
        await onDelta(text);
      }
    }
  } catch (error) {
    return { text, error };
  }
  return { text, error: undefined };
}

test('the proxy cuts the stream while the server runs: connection-lost, after asking the server\'s health', async (t) => {
  const proxy = await startTcpProxy({ targetPort: port, mode: { cutAfterBytes: 400 } });
  const client = new TritonClient({ baseUrl: proxy.url });
  t.after(async () => { await client.destroy(); await proxy.close(); });
  const asked = health.length;
  const { text, error } = await consume(client);
  assert.equal(proxy.stats.cut, 1, 'the proxy cut the connection');
  assert.ok(error instanceof TritonError, String(error));
  assert.equal(error.code, 'connection-lost', error.message);
  assert.equal(error.details.serverLive, true);
  assert.ok(error.details.networkCode, 'the network code of the cut is kept');
  assert.match(error.message, /lost .*still running/);
  assert.ok(text.startsWith('part 0 '), 'what arrived before the cut was delivered');
  assert.equal(health.length, asked + 1, 'the server was asked once (through the same proxy, now passing bytes again)');
});

test('the server is gone after the cut (nothing listens any more): still server-not-running', async () => {
  const proxy = await startTcpProxy({ targetPort: port });
  const client = new TritonClient({ baseUrl: proxy.url });
  try {
    // Mid-answer the "server" disappears: every connection dropped and the port closed.
    const { text, error } = await consume(client, async (received) => { if (received.length > 20) await proxy.close(); });
    assert.ok(error instanceof TritonError, String(error));
    assert.equal(error.code, 'server-not-running', error.message);
    assert.equal(error.details.serverLive, false);
    assert.ok(text.length > 20);
  } finally {
    await client.destroy();
  }
});

test('classifyCut asks only about cut connections; refused, timed out and cancelled requests are left as they are', async () => {
  let asked = 0;
  const live = async () => { asked++; return true; };
  const err = (code: TritonError['code'], networkCode?: string) => new TritonError(code, 'x', { operation: 'generate-stream', ...(networkCode ? { networkCode } : {}) });
  for (const [code, networkCode] of [['server-not-running', 'ECONNREFUSED'], ['server-not-running', 'ENOTFOUND'], ['timeout', 'UND_ERR_BODY_TIMEOUT'], ['cancelled', 'ABORT_ERR'], ['invalid-request', undefined]] as const) {
    const e = err(code, networkCode);
    assert.equal(await classifyCut(e, live), e, `${code}/${networkCode}`);
  }
  assert.equal(asked, 0);
  for (const networkCode of ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED']) {
    assert.equal((await classifyCut(err('server-not-running', networkCode), live)).code, 'connection-lost', networkCode);
    const dead = await classifyCut(err('server-not-running', networkCode), async () => false);
    assert.equal(dead.code, 'server-not-running');
    assert.equal(dead.details.serverLive, false);
    // A health check that fails outright counts as a dead server too.
    assert.equal((await classifyCut(err('server-not-running', networkCode), async () => { throw new Error('boom'); })).code, 'server-not-running');
  }
  assert.equal(asked, 4);
});
