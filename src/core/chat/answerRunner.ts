// Running answers: the one path from a question to the model and back, for the chat panel, Explain Selection and
// the CLI. `requestAnswer` asks the model (streamed, or in one piece when streaming is off); `AnswerRunner` writes
// an answer into a conversation: saved as it streams, stoppable, and kept (marked) whatever happens to the request.
import { DEFAULT_MODEL_SETTINGS } from '../repository';
import type { ExtensionSettings } from '../settings/settingsSchema';
import { chatOnce, isTritonError, streamChat, TritonError, type ChatFinalEvent, type TritonClient } from '../triton';
import type { RequestRefusal } from './continuation';
import { failureCause, type ExplainFailure } from './failureCause';
import type { ConversationService } from './conversationService';
import type { StoredMessage } from './conversation';
import type { ChatRequest } from './messages';
import type { BuildRequestOptions, BuildRequestResult } from './requestBuilder';

export interface AnswerCall {
  /** Triton's name of the model that answers (the session's modelName). */
  model: string;
  streaming: boolean;
  signal?: AbortSignal;
  /** Streaming: fail when nothing arrives for this long. */
  idleTimeoutMs: number;
  /** Not streaming: limit of the whole request. */
  timeoutMs?: number;
  onDelta(text: string): void;
}

/** Asks the model for one answer: its text through `onDelta` (deltas, or all of it at once), then the final outputs. */
export async function requestAnswer(client: TritonClient, request: ChatRequest, call: AnswerCall): Promise<ChatFinalEvent> {
  if (call.streaming) {
    for await (const event of streamChat(client, call.model, request, { signal: call.signal, idleTimeoutMs: call.idleTimeoutMs })) {
      if (event.type === 'delta') call.onDelta(event.text);
      else return event;
    }
    throw new TritonError('unexpected', 'The answer stream ended without a final response.', { operation: 'generate-stream', model: call.model });
  }
  const once = await chatOnce(client, call.model, request, { signal: call.signal, ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}) });
  call.onDelta(once.text);
  return once.final;
}

/** The settings an answer is generated with. */
export interface AnswerSettings {
  streaming: boolean;
  temperature: number;
  topP: number;
  topK: number;
  repetitionPenalty: number;
  maxNewTokens: number;
  /** Turns of history sent with the question. */
  historyTurns: number;
  streamIdleTimeoutMs: number;
  requestTimeoutMs: number;
}

export function toAnswerSettings(settings: ExtensionSettings): AnswerSettings {
  return {
    streaming: settings.streaming,
    temperature: settings.temperature,
    topP: settings.topP,
    topK: settings.topK,
    repetitionPenalty: settings.repetitionPenalty,
    maxNewTokens: settings.maxNewTokens,
    historyTurns: settings.historyTurns,
    streamIdleTimeoutMs: settings.streamIdleTimeoutSeconds * 1000,
    requestTimeoutMs: settings.requestTimeoutSeconds * 1000,
  };
}

export interface AnswerOutcome {
  status: 'complete' | 'stopped' | 'failed';
  text: string;
  /** For `failed`: the text stored with the answer. */
  error?: string;
  /** For `failed` by an error: that error as reported (a container's exit rather than "cannot reach"). */
  cause?: unknown;
}

export interface AnswerRunnerDeps {
  service: ConversationService;
  client(): TritonClient | undefined;
  /** Triton's name of the model that answers (the server session's modelName). */
  modelName(): string;
  settings(): AnswerSettings;
  /** Wraps the request while it runs (the server session's health polling). */
  track<T>(request: Promise<T>): Promise<T>;
  /** The request failed in a way that may mean the server went away: look. */
  checkServer(): void;
  /**
   * The stream broke or nothing answered: what really happened, when the server's side knows (our container
   * exited, e.g. code 137 when killed) — that error is reported instead. Undefined or the same error: nothing more.
   */
  explainFailure?: ExplainFailure;
  /** The model refused with "the model failed: ... reload it" (a device fault): it needs a fresh load. */
  modelFailed?(error: TritonError): void;
  /** What a failed answer says, in the person's language, and the code to log it under. */
  describeFailure(error: unknown): { code: string; text: string };
  /** What an answer says when its question could not be sent (too long, none) or it could not be continued. */
  describeRefusal(refusal: RequestRefusal): string;
  log: { error(message: string, error?: unknown): void };
  /** An answer started or ended in this conversation. */
  onBusyChanged(conversationId: string): void;
  onDelta(conversationId: string, messageId: string, text: string): void;
  /** The answer's final state (complete, stopped, failed), as saved. */
  onSettled(conversationId: string, message: StoredMessage): void;
  /** After onSettled of a failed answer: the code of its failure (e.g. `connection-lost`, which can be retried). */
  onFailed?(conversationId: string, messageId: string, code: string): void;
}

/** How an answer begins: a new one for the last question, or the last answer reopened to be continued. */
interface AnswerStart {
  /** The message the answer streams into (already `streaming`), written by `model`. */
  start(model: string): StoredMessage;
  build(options: BuildRequestOptions): BuildRequestResult | RequestRefusal;
}

export class AnswerRunner {
  private readonly streams = new Map<string, AbortController>();
  private readonly running = new Set<Promise<unknown>>();
  private closing = false;

  constructor(private readonly deps: AnswerRunnerDeps) {}

  isAnswering(conversationId: string): boolean {
    return this.streams.has(conversationId);
  }

  /** The conversations being answered now, in the order their answers started. */
  answering(): string[] {
    return [...this.streams.keys()];
  }

  /** Stops the answer being written in this conversation (the closed connection makes Triton cancel it). */
  stop(conversationId: string): void {
    this.streams.get(conversationId)?.abort();
  }

  /** Answers the last question of the conversation; aborting `outer` stops it too. */
  answer(conversationId: string, outer?: AbortSignal, onDelta?: (text: string) => void): Promise<AnswerOutcome> {
    return this.keep(this.run(conversationId, {
      start: (model) => this.deps.service.startAnswer(conversationId, model),
      build: (options) => this.deps.service.buildRequest(conversationId, options),
    }, outer, onDelta));
  }

  /** Continues the conversation's last answer, cut at the length limit: the new text is appended to it. */
  continue(conversationId: string, answerId: string): Promise<AnswerOutcome> {
    return this.keep(this.run(conversationId, {
      start: () => this.deps.service.startContinuation(conversationId, answerId),
      build: (options) => this.deps.service.buildContinueRequest(conversationId, answerId, options),
    }, undefined, undefined));
  }

  private keep(p: Promise<AnswerOutcome>): Promise<AnswerOutcome> {
    this.running.add(p);
    // Settle handler on both paths: the caller handles the rejection, this bookkeeping must not re-raise it.
    const forget = () => { this.running.delete(p); };
    p.then(forget, forget);
    return p;
  }

  private async run(conversationId: string, how: AnswerStart, outer: AbortSignal | undefined, onDelta: ((text: string) => void) | undefined): Promise<AnswerOutcome> {
    const { service } = this.deps;
    const client = this.deps.client();
    const settings = this.deps.settings();
    const message = how.start(this.deps.modelName());
    const ctrl = new AbortController();
    const onOuter = () => ctrl.abort();
    outer?.addEventListener('abort', onOuter, { once: true });
    if (outer?.aborted) ctrl.abort();
    this.streams.set(conversationId, ctrl);
    this.deps.onBusyChanged(conversationId);
    let text = '';
    const deliver = (delta: string) => {
      text += delta;
      service.appendDelta(conversationId, message.id, delta);
      onDelta?.(delta);
      this.deps.onDelta(conversationId, message.id, delta);
    };
    const settle = async (done: Promise<StoredMessage>) => this.deps.onSettled(conversationId, await done);
    try {
      const model = this.deps.modelName();
      if (!client) throw new TritonError('server-not-running', 'Not connected to a Triton server.', { operation: 'generate-stream', model });
      const built = how.build({
        historyLen: settings.historyTurns,
        maxInputTokens: DEFAULT_MODEL_SETTINGS.maxInputTokens,
        temperature: settings.temperature,
        topP: settings.topP,
        // Always sent (the model's default would be the same 50 / 1): every request of the extension then carries
        // the same inputs, which Triton's dynamic batcher needs to merge them.
        topK: settings.topK,
        repetitionPenalty: settings.repetitionPenalty,
        maxNewTokens: settings.maxNewTokens,
      });
      if (!built.ok) {
        const error = this.deps.describeRefusal(built);
        await settle(service.fail(conversationId, message.id, error));
        return { status: 'failed', text, error };
      }
      const final = await this.deps.track(requestAnswer(client, built.request, {
        model,
        streaming: settings.streaming,
        signal: ctrl.signal,
        idleTimeoutMs: settings.streamIdleTimeoutMs,
        timeoutMs: settings.requestTimeoutMs,
        onDelta: deliver,
      }));
      await settle(service.finish(conversationId, message.id, final));
      return { status: 'complete', text };
    } catch (e) {
      if (this.closing) return { status: 'stopped', text }; // saved as `streaming`: it comes back `interrupted`
      if (ctrl.signal.aborted || isTritonError(e, 'cancelled')) {
        await settle(service.stop(conversationId, message.id));
        return { status: 'stopped', text };
      }
      const cause = await failureCause(e, this.deps.explainFailure);
      const failure = this.deps.describeFailure(cause);
      this.deps.log.error(`chat: answer failed [${failure.code}]`, cause);
      await settle(service.fail(conversationId, message.id, failure.text));
      this.deps.onFailed?.(conversationId, message.id, failure.code);
      // A refused connection may mean the server died: let the session find out and say so.
      if (isTritonError(e, 'server-not-running') || isTritonError(e, 'model-not-loaded')) this.deps.checkServer();
      if (isTritonError(e, 'model-failed')) this.deps.modelFailed?.(e);
      return { status: 'failed', text, error: failure.text, cause };
    } finally {
      outer?.removeEventListener('abort', onOuter);
      if (this.streams.get(conversationId) === ctrl) this.streams.delete(conversationId);
      this.deps.onBusyChanged(conversationId);
    }
  }

  /** Stops every answer; they stay saved as streaming (and reload as interrupted). Waits up to `graceMs` for them. */
  async dispose(graceMs = 2_000): Promise<void> {
    this.closing = true;
    for (const ctrl of this.streams.values()) ctrl.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); });
    await Promise.race([Promise.allSettled([...this.running]), grace]);
    clearTimeout(timer);
  }
}
