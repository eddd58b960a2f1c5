// HTTP plumbing of the OpenAI endpoint on node's own server: the request body under a size limit, the API key
// compared in constant time, JSON and SSE answers written with backpressure, and which addresses count as this
// machine only.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { OpenAiError } from './errors';

/** Largest request body read (ChatGLM3's own limits are a 256 KiB prompt and a 1 MiB history). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Addresses that only this machine reaches: a server bound to anything else needs an API key. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** `Authorization: Bearer <key>` against the key, in time that does not depend on where they differ. */
export function authorized(req: IncomingMessage, apiKey: string): boolean {
  const header = req.headers.authorization ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  // Compare fixed-length digests: timingSafeEqual needs equal lengths, and the key's length stays hidden too.
  return timingSafeEqual(digest(m ? m[1] : ''), digest(apiKey)) && m !== null;
}

/**
 * A loopback server answers only requests addressed to a loopback name: a web page whose own domain was made to
 * resolve to 127.0.0.1 (DNS rebinding) sends its own Host and is refused.
 */
export function hostAllowed(req: IncomingMessage, boundHost: string): boolean {
  if (!isLoopbackHost(boundHost)) return true;
  const host = req.headers.host ?? '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  return isLoopbackHost(name);
}

/** JSON bodies only: a cross-site form post (text/plain, form encodings) never reaches the model. */
export function isJsonRequest(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type);
}

/** The body as JSON; too large, unreadable or not JSON is an OpenAI-shaped 4xx. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const tooLarge = () => new OpenAiError(413, `The request body exceeds ${maxBytes} bytes.`, 'invalid_request_error', null, 'request_too_large');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(b);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new OpenAiError(400, 'The request body is empty; send a JSON object.', 'invalid_request_error', null, 'invalid_json');
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new OpenAiError(400, `The request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`, 'invalid_request_error', null, 'invalid_json');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: OpenAiError, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(error.body());
  res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  res.end(text);
}

/** Server-sent events: `data: <json>` lines, each written when the socket has room. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {}

  open(): void {
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    this.res.flushHeaders();
  }

  async data(payload: unknown): Promise<void> {
    await this.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  async done(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    this.res.end();
  }

  private async write(text: string): Promise<void> {
    if (this.res.destroyed) return;
    if (!this.res.write(text)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    }
  }
}
