// The OpenAI-compatible endpoint: GET /v1/models, POST /v1/chat/completions, POST /v1/completions on node's http
// server, in front of the Triton client of whoever runs it (the CLI's `serve-openai`, the extension's setting).
// Policy: it listens on 127.0.0.1 unless told otherwise, and any other address needs an API key; every request is
// validated (schemas.ts) and fails alone with OpenAI's error shape; a client that goes away cancels its request on
// Triton.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { isTritonError, type TritonClient } from '../triton';
import { fromTritonError, fromZodError, OpenAiError } from './errors';
import { generate, type GenerationEvent } from './generation';
import { mapChatCompletion, mapCompletion, unknownModel, type MappedRequest, type SamplingDefaults } from './mapping';
import {
  chatCompletionRequestSchema, completionRequestSchema,
  type ChatCompletion, type ChatCompletionChunk, type Completion, type ModelList, type Usage,
} from './schemas';
import { authorized, DEFAULT_MAX_BODY_BYTES, hostAllowed, isJsonRequest, isLoopbackHost, readJsonBody, sendError, sendJson, SseWriter } from './http';

export const DEFAULT_OPENAI_HOST = '127.0.0.1';
export const DEFAULT_OPENAI_PORT = 8003;

/** What the endpoint serves from: the running server's client (undefined while there is none) and its model. */
export interface OpenAiBackend {
  client(): TritonClient | undefined;
  model: string;
  defaults(): SamplingDefaults;
  /** Fail a request when Triton sends nothing for this long. */
  idleTimeoutMs: number;
}

export interface OpenAiServerOptions {
  backend: OpenAiBackend;
  host?: string;
  port?: number;
  /** Required on any address but loopback; when set, every request needs `Authorization: Bearer <key>`. */
  apiKey?: string;
  maxBodyBytes?: number;
  /** Failures of the endpoint itself (never the request bodies). */
  log?: (line: string) => void;
}

export class OpenAiConfigError extends Error {
  override readonly name = 'OpenAiConfigError';
}

/** Refuses a configuration that would expose the model without a key. */
export function checkOpenAiOptions(host: string, apiKey: string | undefined): void {
  if (!isLoopbackHost(host) && !apiKey) {
    throw new OpenAiConfigError(`The OpenAI endpoint would listen on ${host}, which other machines can reach: set an API key (--api-key, or TRITON_CHATGLM_OPENAI_API_KEY), or use 127.0.0.1.`);
  }
}

export interface RunningOpenAiServer {
  /** http://host:port/v1 — what clients take as their base URL. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startOpenAiServer(options: OpenAiServerOptions): Promise<RunningOpenAiServer> {
  const host = options.host ?? DEFAULT_OPENAI_HOST;
  checkOpenAiOptions(host, options.apiKey);
  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    void handle(req, res, options).catch((e: unknown) => {
      options.log?.(`openai endpoint: ${e instanceof Error ? e.message : String(e)}`);
      sendError(res, new OpenAiError(500, 'The endpoint failed to answer this request.', 'server_error', null, 'server_error'));
      if (!res.writableEnded) res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_OPENAI_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${shown}:${port}/v1`, port, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Open streams are cut: their Triton requests are cancelled as with any client that leaves.
    server.closeAllConnections();
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, options: OpenAiServerOptions): Promise<void> {
  if (!hostAllowed(req, options.host ?? DEFAULT_OPENAI_HOST)) {
    sendError(res, new OpenAiError(403, 'This endpoint answers requests to 127.0.0.1 or localhost only.', 'invalid_request_error', null, 'host_not_allowed'));
    return;
  }
  if (options.apiKey && !authorized(req, options.apiKey)) {
    sendError(res, new OpenAiError(401, 'Missing or wrong API key: send Authorization: Bearer <key>.', 'authentication_error', null, 'invalid_api_key'), { 'www-authenticate': 'Bearer' });
    return;
  }
  const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
  const { backend } = options;
  const route = ROUTES[path];
  if (!route) {
    const model = /^\/v1\/models\/(.+)$/.exec(path);
    if (model && req.method === 'GET') return modelInfo(res, decodeURIComponent(model[1]), backend.model);
    sendError(res, new OpenAiError(404, `Unknown path ${path}: this endpoint serves /v1/models, /v1/chat/completions and /v1/completions.`, 'not_found_error', null, 'unknown_url'));
    return;
  }
  if (req.method !== route.method) {
    sendError(res, new OpenAiError(405, `${path} takes ${route.method} requests.`, 'invalid_request_error', null, 'method_not_allowed'), { allow: route.method });
    return;
  }
  if (route.method === 'POST' && !isJsonRequest(req)) {
    sendError(res, new OpenAiError(415, 'Send the request body as JSON (Content-Type: application/json).', 'invalid_request_error', null, 'unsupported_media_type'));
    return;
  }
  try {
    await route.run(req, res, options);
  } catch (e) {
    if (e instanceof OpenAiError) sendError(res, e);
    else if (isTritonError(e)) sendError(res, fromTritonError(e));
    else throw e;
  }
}

interface Route {
  method: 'GET' | 'POST';
  run(req: IncomingMessage, res: ServerResponse, options: OpenAiServerOptions): Promise<void>;
}

const ROUTES: Record<string, Route> = {
  '/v1/models': { method: 'GET', run: async (_req, res, { backend }) => sendJson(res, 200, modelList(backend.model)) },
  '/v1/chat/completions': { method: 'POST', run: (req, res, options) => completions(req, res, options, 'chat') },
  '/v1/completions': { method: 'POST', run: (req, res, options) => completions(req, res, options, 'text') },
};

const created = () => Math.floor(Date.now() / 1000);
const modelEntry = (model: string) => ({ id: model, object: 'model' as const, created: 0, owned_by: 'triton-chatglm' });

function modelList(model: string): ModelList {
  return { object: 'list', data: [modelEntry(model)] };
}

function modelInfo(res: ServerResponse, name: string, model: string): void {
  if (name !== model) sendError(res, unknownModel(name, model));
  else sendJson(res, 200, modelEntry(model));
}

function parse<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, body: unknown): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OpenAiError(400, 'The request body must be a JSON object.', 'invalid_request_error', null, 'invalid_type');
  }
  const r = schema.safeParse(body);
  if (!r.success) throw fromZodError(r.error);
  return r.data;
}

type Kind = 'chat' | 'text';

async function completions(req: IncomingMessage, res: ServerResponse, options: OpenAiServerOptions, kind: Kind): Promise<void> {
  const { backend } = options;
  const body = await readJsonBody(req, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  let mapped: MappedRequest;
  let echo = '';
  let model: string;
  if (kind === 'chat') {
    const parsed = parse(chatCompletionRequestSchema, body);
    model = parsed.model;
    mapped = mapChatCompletion(parsed, backend.defaults());
  } else {
    const parsed = parse(completionRequestSchema, body);
    model = parsed.model;
    const m = mapCompletion(parsed, backend.defaults());
    mapped = m;
    if (m.echo) echo = m.request.prompt;
  }
  if (model !== backend.model) throw unknownModel(model, backend.model);
  const client = backend.client();
  if (!client) throw new OpenAiError(503, 'The Triton server is not running: start it first.', 'service_unavailable', null, 'server_not_running');

  // The client leaving (a closed connection) aborts the Triton stream, which cancels the request there.
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const events = generate(client, backend.model, mapped, { signal: gone.signal, idleTimeoutMs: backend.idleTimeoutMs });
  const frame = new Framer(kind, backend.model);
  if (!mapped.stream) {
    let text = echo;
    for await (const ev of events) {
      if (ev.type === 'text') text += ev.text;
      else return sendJson(res, 200, frame.whole(text, ev));
    }
    return;
  }
  // The first event before the headers: a request the model refuses still gets a plain HTTP error.
  const first = await events.next();
  const sse = new SseWriter(res);
  sse.open();
  try {
    await sse.data(frame.chunk(echo, null, true));
    let next = first;
    while (!next.done) {
      const ev = next.value;
      if (ev.type === 'text') await sse.data(frame.chunk(ev.text, null));
      else {
        await sse.data(frame.chunk('', ev.finishReason));
        if (mapped.includeUsage) await sse.data(frame.usageChunk(ev.usage));
      }
      if (gone.signal.aborted) return;
      next = await events.next();
    }
    await sse.done();
  } catch (e) {
    if (gone.signal.aborted) return;
    // After the headers an error can only travel as an event; the openai clients raise it.
    const error = e instanceof OpenAiError ? e : isTritonError(e) ? fromTritonError(e) : new OpenAiError(500, 'The answer failed.', 'server_error', null, 'server_error');
    await sse.data(error.body());
    res.end();
    if (!(e instanceof OpenAiError) && !isTritonError(e)) throw e;
  } finally {
    await events.return();
  }
}

/** The response objects of one request: one id and creation time for every chunk. */
class Framer {
  readonly id: string;
  readonly created = created();

  constructor(private readonly kind: Kind, private readonly model: string) {
    this.id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  }

  whole(text: string, end: Extract<GenerationEvent, { type: 'end' }>): ChatCompletion | Completion {
    const head = { id: this.id, created: this.created, model: this.model };
    if (this.kind === 'chat') {
      return { ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: end.finishReason, logprobs: null }], usage: end.usage };
    }
    return { ...head, object: 'text_completion', choices: [{ index: 0, text, finish_reason: end.finishReason, logprobs: null }], usage: end.usage };
  }

  chunk(text: string, finishReason: 'stop' | 'length' | null, first = false): ChatCompletionChunk | Completion {
    const head = { id: this.id, created: this.created, model: this.model };
    if (this.kind === 'chat') {
      const delta = first ? { role: 'assistant' as const, content: text } : finishReason ? {} : { content: text };
      return { ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] };
    }
    return { ...head, object: 'text_completion', choices: [{ index: 0, text, finish_reason: finishReason, logprobs: null }] };
  }

  usageChunk(usage: Usage): ChatCompletionChunk | Completion {
    const head = { id: this.id, created: this.created, model: this.model };
    return this.kind === 'chat'
      ? { ...head, object: 'chat.completion.chunk', choices: [], usage }
      : { ...head, object: 'text_completion', choices: [], usage };
  }
}
