// Shared set-up of the reliability tests: the REAL tritonserver (CPU, tiny engine) with a patched copy of the
// model repository, clients for it, and small helpers (waiting, collecting a stream, timing an outcome).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChatRequest, ChatStreamEvent } from '../../../src/core/chat/messages';
import { streamChat } from '../../../src/core/triton/chatglm';
import { TritonClient } from '../../../src/core/triton/client';
import { TritonError, type TritonErrorCode } from '../../../src/core/triton/errors';

export const MODEL = 'chatglm3-6b';
/** The default reliability run is bounded; TRITON_CHATGLM_SOAK=1 (npm run test:soak) runs the long versions. */
export const SOAK = process.env.TRITON_CHATGLM_SOAK === '1';

export interface ConfigOverrides {
  maxBatchSize?: number;
  decoupled?: boolean;
  queueDelayUs?: number;
  maxQueueSize?: number;
  instanceCount?: number;
  engine?: string;
  parameters?: Record<string, string>;
}

interface RunningTriton {
  pid: number;
  url: string;
  httpPort: number;
  metricsUrl: string;
  log(): string;
  stop(signal?: string, timeoutMs?: number): Promise<void>;
}

export interface TritonProcessModule {
  startTritonServer(options: { repository: string; restrictedKey?: string; env?: Record<string, string>; startTimeoutMs?: number; extraArgs?: string[] }): Promise<RunningTriton>;
  prepareTestRepository(dest: string, overrides?: ConfigOverrides, source?: string): string;
  patchConfigForTests(text: string, overrides?: ConfigOverrides): string;
  freePort(): Promise<number>;
  modelRepositorySource: string;
  tinyEngine: string;
  projectRoot: string;
}

export interface TcpProxy {
  port: number;
  url: string;
  stats: { connections: number; active: number; maxActive: number; cut: number; bytesToClient: number; bytesToServer: number };
  setMode(mode: { cutAfterBytes?: number; chunkBytes?: number; delayMs?: number }): void;
  close(): Promise<void>;
}

export async function tritonProcess(): Promise<TritonProcessModule> {
  return (await import(pathToFileURL(join(__dirname, '../../support/triton-process.mjs')).href)) as TritonProcessModule;
}

export async function startTcpProxy(options: { targetPort: number; mode?: Parameters<TcpProxy['setMode']>[0] }): Promise<TcpProxy> {
  const mod = (await import(pathToFileURL(join(__dirname, '../../support/tcp-proxy.mjs')).href)) as { startTcpProxy(o: typeof options): Promise<TcpProxy> };
  return mod.startTcpProxy(options);
}

export interface TestServer {
  url: string;
  pid: number;
  httpPort: number;
  repository: string;
  /** Keyless client (the model-repository API is open unless `restrictedKey` was given), with the metrics URL. */
  client: TritonClient;
  log(): string;
  /** Adds a copy of chatglm3-6b under another name with its own overrides (e.g. decoupled off). */
  addModelVariant(name: string, overrides: ConfigOverrides): void;
  stop(): Promise<void>;
}

/** Starts tritonserver on a fresh copy of the repository and loads the models named in `load` (default: ours). */
export async function startTestServer(options: {
  overrides?: ConfigOverrides;
  env?: Record<string, string>;
  restrictedKey?: string;
  load?: string[];
  variants?: Record<string, ConfigOverrides>;
  clientOptions?: { connections?: number };
} = {}): Promise<TestServer> {
  const tp = await tritonProcess();
  const work = mkdtempSync(join(tmpdir(), 'reliability-'));
  const repository = tp.prepareTestRepository(join(work, 'repo'), options.overrides ?? {});
  const addModelVariant = (name: string, overrides: ConfigOverrides) => {
    const dir = join(repository, name);
    cpSync(join(tp.modelRepositorySource, MODEL), dir, { recursive: true, filter: (p) => !p.includes('__pycache__') });
    const cfg = join(dir, 'config.pbtxt');
    const text = readFileSync(cfg, 'utf8').replace(/^name: "[^"]*"/m, `name: "${name}"`);
    writeFileSync(cfg, tp.patchConfigForTests(text, overrides));
  };
  for (const [name, o] of Object.entries(options.variants ?? {})) addModelVariant(name, o);
  let server: RunningTriton;
  try {
    server = await tp.startTritonServer({
      repository, startTimeoutMs: 120_000,
      env: { ...(options.env ?? {}) },
      ...(options.restrictedKey ? { restrictedKey: options.restrictedKey } : {}),
    });
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
  const client = new TritonClient({ baseUrl: server.url, metricsUrl: server.metricsUrl, adminKey: options.restrictedKey, connections: options.clientOptions?.connections ?? 32 });
  try {
    for (const m of options.load ?? [MODEL]) await client.loadModel(m, { timeoutMs: 240_000 });
  } catch (e) {
    await client.destroy();
    await server.stop('SIGKILL');
    rmSync(work, { recursive: true, force: true });
    throw new Error(`model load failed: ${(e as Error).message}\n${server.log().slice(-3000)}`);
  }
  return {
    url: server.url, pid: server.pid, httpPort: server.httpPort, repository, client, log: server.log, addModelVariant,
    async stop() {
      await client.destroy().catch(() => undefined);
      try { process.kill(server.pid, 'SIGCONT'); } catch { /* gone */ }
      await server.stop('SIGTERM', 10_000);
      rmSync(work, { recursive: true, force: true });
    },
  };
}

export function chatRequest(prompt: string, more: Partial<ChatRequest> = {}): ChatRequest {
  return { prompt, history: [], maxNewTokens: 16, temperature: 0, ...more };
}

export interface Collected {
  text: string;
  deltas: number;
  final?: Extract<ChatStreamEvent, { type: 'final' }>;
  error?: unknown;
}

/** Streams one answer and never throws: the text received so far and the error, if any, are returned. */
export async function collectStream(client: TritonClient, req: ChatRequest, options: { model?: string; idleTimeoutMs?: number; signal?: AbortSignal; onDelta?: (text: string) => void } = {}): Promise<Collected> {
  const out: Collected = { text: '', deltas: 0 };
  try {
    for await (const ev of streamChat(client, options.model ?? MODEL, req, {
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    })) {
      if (ev.type === 'delta') { out.text += ev.text; out.deltas += 1; options.onDelta?.(ev.text); } else out.final = ev;
    }
  } catch (e) {
    out.error = e;
  }
  return out;
}

export function assertTritonError(e: unknown, code: TritonErrorCode, what: string): TritonError {
  assert.ok(e instanceof TritonError, `${what}: expected a TritonError ${code}, got ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  assert.equal(e.code, code, `${what}: ${e.message}`);
  assert.ok(e.message.trim().length > 0, `${what}: the error has a message`);
  return e;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * What the chat panel does for one question (ChatController's core path): the question is stored, an answer
 * streams into the ConversationService, and an error keeps the partial answer marked failed.
 */
export async function answerThroughService(
  svc: import('../../../src/core/chat/conversationService').ConversationService,
  client: TritonClient,
  question: string,
  options: { maxNewTokens?: number; idleTimeoutMs?: number; onDelta?: (received: string) => void } = {},
): Promise<{ conversationId: string; messageId: string; received: string; error?: unknown }> {
  const conv = svc.create();
  await svc.appendUserMessage(conv.id, question);
  const answer = svc.startAnswer(conv.id);
  const built = svc.buildRequest(conv.id, { temperature: 0, maxNewTokens: options.maxNewTokens ?? 16 });
  if (!built.ok) throw new Error(`request not built: ${JSON.stringify(built)}`);
  let received = '';
  try {
    for await (const ev of streamChat(client, MODEL, built.request, options.idleTimeoutMs ? { idleTimeoutMs: options.idleTimeoutMs } : {})) {
      if (ev.type === 'delta') {
        received += ev.text;
        svc.appendDelta(conv.id, answer.id, ev.text);
        options.onDelta?.(received);
      } else {
        await svc.finish(conv.id, answer.id, ev);
      }
    }
    return { conversationId: conv.id, messageId: answer.id, received };
  } catch (error) {
    await svc.fail(conv.id, answer.id, error instanceof Error ? error.message : String(error));
    return { conversationId: conv.id, messageId: answer.id, received, error };
  }
}
