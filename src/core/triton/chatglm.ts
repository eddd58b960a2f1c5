// Bridge between the chat layer (ChatRequest / ChatStreamEvent) and the chatglm3-6b model's I/O contract
// (triton/README.md): snake_case inputs, history as a JSON string, deltas in `response`, finals with usage.
import type { ChatMessage, ChatRequest, ChatRole, ChatStreamEvent, FinishReason } from '../chat/messages';
import type { TritonClient } from './client';
import type { CallOptions, StreamOptions } from './types';
import { TritonError } from './errors';

/**
 * The model's range of `repetition_penalty` (chatglm.serving.request): below 0.01 the penalty overflows the scores
 * of seen tokens and the request could only fail while sampling. 1 = off.
 */
export const MIN_REPETITION_PENALTY = 0.01;
export const MAX_REPETITION_PENALTY = 10;

export type ChatFinalEvent = Extract<ChatStreamEvent, { type: 'final' }>;

export interface ChatOnceResult {
  text: string;
  final: ChatFinalEvent;
}

/** Body of /generate(_stream): top-level keys named like the model's inputs become tensors. */
export function buildGenerateBody(req: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    prompt: req.prompt,
    history: JSON.stringify(req.history.map(toWireMessage)),
  };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) body.top_k = req.topK;
  if (req.repetitionPenalty !== undefined) body.repetition_penalty = req.repetitionPenalty;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.maxNewTokens !== undefined) body.max_new_tokens = req.maxNewTokens;
  if (req.historyLen !== undefined) body.history_len = req.historyLen;
  return body;
}

function toWireMessage(m: ChatMessage): ChatMessage {
  return m.metadata !== undefined ? { role: m.role, content: m.content, metadata: m.metadata } : { role: m.role, content: m.content };
}

/**
 * Streams one answer: `delta` events, then exactly one `final`. Errors (typed TritonError) are thrown from the
 * iterator; aborting `signal` or leaving the loop early cancels the request on the server.
 */
export function streamChat(client: TritonClient, modelName: string, req: ChatRequest, options: StreamOptions = {}): AsyncGenerator<ChatStreamEvent, void, undefined> {
  return streamGenerateBody(client, modelName, buildGenerateBody(req), options);
}

/** streamChat over a /generate_stream body built by the caller (the OpenAI endpoint adds `raw_prompt`, `stop`). */
export async function* streamGenerateBody(client: TritonClient, modelName: string, body: Record<string, unknown>, options: StreamOptions = {}): AsyncGenerator<ChatStreamEvent, void, undefined> {
  for await (const event of client.generateStream(modelName, body, options)) {
    const text = event.response === undefined ? '' : scalarString(event.response);
    if (isFinal(event)) {
      if (text) yield { type: 'delta', text };
      yield parseFinal(event, modelName);
      return;
    }
    if (text) yield { type: 'delta', text };
  }
  throw new TritonError('unexpected', `The answer stream of '${modelName}' ended without a final response.`, { operation: 'generate-stream', model: modelName });
}

/**
 * One answer in one piece (streaming turned off), also over /generate_stream, never /generate: on a streaming
 * (decoupled) model, Triton's /generate answers HTTP 200 with an error and the model still generates the whole
 * answer, which nothing cancels (triton/README.md). A model with streaming off answers /generate_stream with one
 * event. `timeoutMs`: fail when nothing arrives for this long (with streaming off, the answer comes in one piece).
 */
export async function chatOnce(client: TritonClient, modelName: string, req: ChatRequest, options: CallOptions = {}): Promise<ChatOnceResult> {
  let text = '';
  const stream: StreamOptions = { idleTimeoutMs: options.timeoutMs ?? 0 };
  if (options.signal) stream.signal = options.signal;
  for await (const event of streamChat(client, modelName, req, stream)) {
    if (event.type === 'final') return { text, final: event };
    text += event.text;
  }
  throw new TritonError('unexpected', `The answer stream of '${modelName}' ended without a final response.`, { operation: 'generate-stream', model: modelName });
}

function isFinal(event: Record<string, unknown>): boolean {
  return event.finish_reason !== undefined;
}

const FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'cancelled'];
const ROLES: readonly ChatRole[] = ['system', 'user', 'assistant', 'observation'];

/** Reads the final outputs; anything missing or malformed is a protocol error, not silently defaulted. */
export function parseFinal(event: Record<string, unknown>, modelName: string): ChatFinalEvent {
  const bad = (what: string) => new TritonError('unexpected', `The final response of '${modelName}' has ${what}.`, { operation: 'generate-stream', model: modelName });
  const reason = scalarString(event.finish_reason);
  if (!FINISH_REASONS.includes(reason as FinishReason)) throw bad(`an unknown finish_reason '${reason}'`);
  const int = (key: string): number => {
    const v = scalar(event[key]);
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < 0) throw bad(`no valid ${key}`);
    return n;
  };
  return {
    type: 'final',
    finishReason: reason as FinishReason,
    promptTokens: int('prompt_tokens'),
    completionTokens: int('completion_tokens'),
    historyTrimmed: int('history_trimmed'),
    history: parseHistory(scalarString(event.history), bad),
  };
}

function parseHistory(text: string, bad: (what: string) => Error): ChatMessage[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad('a history that is not JSON');
  }
  if (!Array.isArray(parsed)) throw bad('a history that is not a list');
  return parsed.map((m: unknown) => {
    const rec = m as { role?: unknown; content?: unknown; metadata?: unknown } | null;
    if (!rec || typeof rec !== 'object' || !ROLES.includes(rec.role as ChatRole)) throw bad('a history message with an unknown role');
    // Assistant tool calls carry `content` as an object in ChatGLM3; keep it as JSON text for display.
    const content = typeof rec.content === 'string' ? rec.content : JSON.stringify(rec.content ?? '');
    const msg: ChatMessage = { role: rec.role as ChatRole, content };
    if (typeof rec.metadata === 'string' && rec.metadata !== '') msg.metadata = rec.metadata;
    return msg;
  });
}

/** /generate maps a one-element output to a scalar and longer ones to arrays; accept both. */
function scalar(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

function scalarString(v: unknown): string {
  const s = scalar(v);
  return typeof s === 'string' ? s : s === undefined || s === null ? '' : String(s);
}
