// Our clients never call /generate on the streaming model: Triton's /generate on a decoupled model answers HTTP 200
// with an error and the model still generates the whole answer (triton/README.md, "Streaming framing"). A local
// server plays that model (its /generate answers as Triton does) and records every path: the chat's answers with
// streaming on and off, chatOnce, and the CLI's chat (--url) must all go to /generate_stream.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCommand } from '../../../src/cli/commands';
import { parseCli } from '../../../src/cli/options';
import { requestAnswer } from '../../../src/core/chat/answerRunner';
import { chatOnce, streamChat } from '../../../src/core/triton/chatglm';
import { TritonClient } from '../../../src/core/triton/client';

const M = 'chatglm3-6b';
const FINAL = { response: 'lo', finish_reason: 'stop', prompt_tokens: 3, completion_tokens: 2, history_trimmed: 0, history: '[]' };
const paths: string[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const route = `${req.method} ${req.url}`;
    paths.push(route);
    const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    switch (route) {
      case `POST /v2/models/${M}/generate`: // what Triton 2.51 answers for a decoupled model (after generating it all)
        json({ error: 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses' });
        return;
      case `POST /v2/models/${M}/generate_stream`:
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: {"response":"Hel"}\n\ndata: ${JSON.stringify(FINAL)}\n\n`);
        return;
      case 'GET /v2/health/live': case 'GET /v2/health/ready': case `GET /v2/models/${M}/ready`:
        res.writeHead(200).end();
        return;
      case 'GET /v2':
        json({ name: 'triton', version: '2.51.0', extensions: ['model_repository'] });
        return;
      case 'POST /v2/repository/index':
        json([{ name: M, version: '1', state: 'READY' }]);
        return;
      case `GET /v2/models/${M}/config`:
        json({ name: M, max_batch_size: 8, model_transaction_policy: { decoupled: true } });
        return;
      default:
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no route"}');
    }
  });
});
let base = '';

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => { server.closeAllConnections(); server.close(); });

const generateCalls = () => paths.filter((p) => p.startsWith('POST ') && p.endsWith('/generate'));

test('the chat answers with streaming on and off, chatOnce and streamChat never call /generate', async () => {
  const client = new TritonClient({ baseUrl: base });
  paths.length = 0;
  for (const streaming of [true, false]) {
    const deltas: string[] = [];
    const final = await requestAnswer(client, { prompt: 'hi', history: [] }, { model: M, streaming, idleTimeoutMs: 5_000, timeoutMs: 5_000, onDelta: (d) => deltas.push(d) });
    assert.equal(final.completionTokens, 2);
    assert.deepEqual(deltas, streaming ? ['Hel', 'lo'] : ['Hello'], `streaming ${streaming}: the answer`);
  }
  assert.equal((await chatOnce(client, M, { prompt: 'hi', history: [] })).text, 'Hello');
  for await (const _ of streamChat(client, M, { prompt: 'hi', history: [] })) { /* drain */ }
  await client.close();
  assert.deepEqual(generateCalls(), []);
  assert.equal(paths.filter((p) => p.endsWith('/generate_stream')).length, 4);
});

test('the CLI\'s chat never calls /generate', async () => {
  paths.length = 0;
  const out: string[] = [];
  const err: string[] = [];
  const cfg = parseCli(['chat', 'hi', '--url', base], { HOME: '/nonexistent-home' });
  const code = await runCommand(cfg, { out: (t) => out.push(t), err: (t) => err.push(t), signal: new AbortController().signal, packageRoot: '/nonexistent' });
  assert.equal(code, 0, err.join(''));
  assert.equal(out.join(''), 'Hello\n');
  assert.deepEqual(generateCalls(), []);
  assert.ok(paths.includes(`POST /v2/models/${M}/generate_stream`), paths.join(', '));
});

test('no source file builds a /generate path (only /generate_stream)', () => {
  const src = join(__dirname, '../../../src');
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 50, 'the sources were found');
  // A path ends a string or a template (`${modelPath(model)}/generate`), or a query follows it; prose does not.
  const offenders = files.filter((f) => /\/generate['"`?]/.test(readFileSync(join(src, f), 'utf8')));
  assert.deepEqual(offenders, []);
});
