// A loopback HTTP server speaking the few Triton endpoints the extension host uses (health, repository index,
// model ready, generate_stream, stats), with scripted answers. It records every request and whether the client
// closed a stream early (which is how Triton learns that a request was cancelled).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubRequest {
  path: string;
  body: Record<string, unknown>;
  at: number;
}

export interface StubTriton {
  url: string;
  requests: StubRequest[];
  /** Streams whose connection the client closed before the final event. */
  closedEarly: number;
  /** Concurrent generate_stream requests seen at most. */
  maxConcurrent: number;
  /** generate_stream requests running now. */
  active: number;
  /** The one model it serves (its repository entry and every model URL): chatglm3-6b unless a test switches it. */
  model: string;
  close(): Promise<void>;
}

export interface StubOptions {
  /** Served as GET /metrics (Prometheus text), e.g. the scheduler's figures; absent: 404. */
  metrics?: () => string;
  /**
   * A team proxy's replicas (name → the HTTP status of its readiness), served as GET /team/replicas and
   * /team/replicas/<name>/ready (deploy/team's nginx); absent or undefined: 404, as plain Triton.
   */
  team?: () => Record<string, number> | undefined;
}

/**
 * Answers: a prompt containing "slow" streams a delta every 20 ms until the client goes away; one containing
 * "long answer" ends at the length limit (finish_reason `length`), as max_new_tokens would end it; one containing
 * "lose the connection" sends a delta and then drops the connection the first time it is asked (the server itself
 * stays up: a connection lost on the way), and answers normally when it is asked again. Edit Selection's prompts
 * ("Rewrite this…") get their code back upper-cased, in a fenced block between two sentences.
 */
export async function startStubTriton(options: StubOptions = {}): Promise<StubTriton> {
  const requests: StubRequest[] = [];
  const state = { closedEarly: 0, active: 0, maxConcurrent: 0, cut: new Set<string>(), name: 'chatglm3-6b', model: 'READY' as 'READY' | 'UNAVAILABLE' | 'LOADING' };
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => void handle(req, res));
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try { body = text ? JSON.parse(text) as Record<string, unknown> : {}; } catch { /* not JSON */ }
    const path = req.url ?? '';
    const MODEL = state.name;
    requests.push({ path, body, at: Date.now() });
    const json = (status: number, value: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(value)); };
    if (path === '/v2/health/live' || path === '/v2/health/ready') return void res.writeHead(200).end();
    if (path === '/v2/repository/index') return json(200, [{ name: MODEL, version: '1', state: state.model, ...(state.model === 'UNAVAILABLE' ? { reason: 'unloaded' } : {}) }]);
    if (path === `/v2/models/${MODEL}/ready`) return void res.writeHead(state.model === 'READY' ? 200 : 400).end();
    // Unload at once; a load takes 50 ms (LOADING meanwhile), as the explicit model control of Triton does.
    if (path === `/v2/repository/models/${MODEL}/unload`) { state.model = 'UNAVAILABLE'; return json(200, {}); }
    if (path === `/v2/repository/models/${MODEL}/load`) {
      state.model = 'LOADING';
      await new Promise((r) => setTimeout(r, 50));
      state.model = 'READY';
      return json(200, {});
    }
    // The limits differ from the rendered defaults, so a reader that ignored them would show.
    if (path === `/v2/models/${MODEL}/config`) return json(200, { name: MODEL, parameters: { max_input_tokens: { string_value: '4096' }, max_new_tokens_limit: { string_value: '1024' } } });
    if (path === `/v2/models/${MODEL}/stats`) {
      return json(200, { model_stats: [{ name: MODEL, version: '1', inference_count: 4, execution_count: 2, inference_stats: { success: { count: 4, ns: 8e6 }, queue: { count: 4, ns: 4e6 } } }] });
    }
    if (path === `/v2/models/${MODEL}/generate_stream`) return stream(body, res);
    const team = options.team?.();
    if (team && path === '/team/replicas') return json(200, { replicas: Object.keys(team).map((name) => ({ name, health: `/team/replicas/${name}/ready` })) });
    const replica = /^\/team\/replicas\/([a-z0-9-]+)\/ready$/.exec(path)?.[1];
    if (team && replica && team[replica] !== undefined) return void res.writeHead(team[replica]).end();
    if (path === '/metrics' && options.metrics) return void res.writeHead(200, { 'content-type': 'text/plain' }).end(options.metrics());
    json(404, { error: `unknown path ${path}` });
  }

  async function stream(body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    state.active++;
    state.maxConcurrent = Math.max(state.maxConcurrent, state.active);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let finished = false;
    res.on('close', () => {
      state.active--;
      if (!finished) state.closedEarly++;
    });
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    const prompt = String(body.prompt ?? '');
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Code completion (the `infill` contract, triton/README.md): a prefix containing "slow" streams until the
    // client goes away; otherwise "compute_total()" and a second line (LINE mode keeps the first), then the final.
    if (typeof body.infill === 'string') {
      const infill = JSON.parse(body.infill) as { prefix: string; mode: string };
      const parts = infill.prefix.includes('slow') ? Array.from({ length: 500 }, (_, i) => `s${i}`) : ['compute', '_total()', '\n', 'print(1)\n'];
      for (const part of parts) {
        if (res.destroyed) return;
        send({ response: part });
        await sleep(infill.prefix.includes('slow') ? 20 : 2);
      }
      finished = true;
      send({ response: '', finish_reason: 'stop', prompt_tokens: 9, completion_tokens: parts.length, history_trimmed: 0, history: '[]' });
      res.end();
      return;
    }
    if (prompt.includes('lose the connection') && !state.cut.has(prompt)) {
      state.cut.add(prompt);
      send({ response: 'half an ' });
      await sleep(20);
      res.socket?.destroy();
      return;
    }
    // Edit Selection: the code of the prompt's fence, upper-cased, in a fenced block with prose around it. Rewrites
    // wait (like explanations below) for a second one, briefly; "slowly" streams four characters every 30 ms.
    if (prompt.startsWith('Rewrite this')) {
      const code = /\n(`{3,})[^\n]*\n([\s\S]*)\n\1$/.exec(prompt)?.[2] ?? '';
      for (const giveUp = Date.now() + 1_000; state.active < 2 && Date.now() < giveUp && !res.destroyed;) await sleep(5);
      const reply = `Sure, here it is:\n\n\`\`\`python\n${code.toUpperCase()}\n\`\`\`\n\nEvery name is upper case now.`;
      for (const part of reply.match(/[\s\S]{1,4}/g) ?? []) {
        if (res.destroyed) return;
        send({ response: part });
        await sleep(prompt.includes('slowly') ? 30 : 2);
      }
      finished = true;
      send({ response: '', finish_reason: 'stop', prompt_tokens: 3, completion_tokens: 2, history_trimmed: 0, history: '[]' });
      res.end();
      return;
    }
    if (prompt.includes('slow')) {
      for (let i = 0; i < 500 && !res.destroyed; i++) {
        send({ response: `w${i} ` });
        await sleep(20);
      }
      return;
    }
    // Explanations wait (like a batcher's queue) until a second one is in flight, so concurrency is observed by
    // events, not by how fast this machine is; a client that sends them one at a time still ends, after 3 s.
    if (prompt.includes('```')) {
      for (const giveUp = Date.now() + 3_000; state.active < 2 && Date.now() < giveUp && !res.destroyed;) await sleep(5);
    } else {
      await sleep(50);
    }
    const answer = prompt.includes('```') ? `Explains ${prompt.length} chars.` : `Echo: ${prompt}`;
    for (const part of [answer.slice(0, 5), answer.slice(5)]) {
      send({ response: part });
      await sleep(5);
    }
    finished = true;
    send({ response: '', finish_reason: prompt.includes('long answer') ? 'length' : 'stop', prompt_tokens: 3, completion_tokens: 2, history_trimmed: 0, history: '[]' });
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get closedEarly() { return state.closedEarly; },
    get maxConcurrent() { return state.maxConcurrent; },
    get active() { return state.active; },
    get model() { return state.name; },
    set model(name: string) { state.name = name; },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
