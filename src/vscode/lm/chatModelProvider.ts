// ChatGLM3 in VS Code's own Chat view and for every extension using `vscode.lm` (Cline, Roo Code...): a language
// model chat provider that adapts the core's policy (src/core/lm) — which model is offered and with what limits,
// how messages become ChatGLM3's request, how tokens are counted — to VS Code's API. Answers stream through the
// same client call as the chat panel's; cancelling closes the stream, which makes Triton free the request's row.
import * as vscode from 'vscode';
import {
  chatModelAvailability, chatModelInfo, countLmTokens, gpuNames, LM_VENDOR, RENDERED_LIMITS, serverLimitsFromConfig,
  toChatRequest, type LmMessage, type LmPart, type LmRequestError, type ServerLimits,
} from '../../core/lm';
import { requestAnswer } from '../../core/chat/answerRunner';
import { modelDisplayName } from '../../core/models/choice';
import { canInfer } from '../../core/state/lifecycle';
import { chosenModelNow } from '../config/chosenModel';
import type { SettingsService } from '../config/settingsService';
import { errorText, presentError } from '../errors/presentError';
import type { Log } from '../log';
import type { ServerController } from '../server/serverController';
import type { LifecycleStore } from '../state/lifecycleStore';

/** How long a model config read may take before the rendered limits are offered instead. */
const CONFIG_TIMEOUT_MS = 3_000;

export class ChatModelProvider implements vscode.LanguageModelChatProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [this.changed];
  /** What was last offered, so that only a real change is announced (the lifecycle fires often). */
  private offered = '';

  constructor(
    private readonly server: ServerController,
    private readonly store: LifecycleStore,
    private readonly settings: SettingsService,
    private readonly log: Log,
  ) {
    // Load, unload, stop, a crash, a setup check (autoStart's "startable") and settings: VS Code asks again.
    this.subscriptions.push(
      store.onDidChange(() => this.announceIfChanged()),
      server.onDidChangeSetup(() => this.announceIfChanged()),
      settings.onDidChange(() => { this.offered = ''; this.announceIfChanged(); }),
    );
  }

  private availability() {
    return chatModelAvailability({ state: this.store.current, autoStart: this.settings.current.autoStart, setupOk: this.server.setup.report?.ok });
  }

  private announceIfChanged(): void {
    const key = this.availability();
    if (key === this.offered) return;
    this.offered = key;
    this.log.info(`language model: ${key === 'none' ? 'no model offered' : `${this.server.modelName} offered (${key})`}`);
    this.changed.fire();
  }

  async provideLanguageModelChatInformation(): Promise<vscode.LanguageModelChatInformation[]> {
    const availability = this.availability();
    this.offered = availability;
    if (availability === 'none') return [];
    const limits = await this.limits();
    const serverUrl = this.server.tritonClient?.baseUrl;
    const gpus = gpuNames(this.server.setup.report);
    const info = chatModelInfo({ availability, limits, serverUrl, gpus, modelName: this.server.modelName });
    const where = serverUrl ? vscode.l10n.t('Triton server at {0}', serverUrl) : vscode.l10n.t('Triton server (started on first use)');
    const gpu = gpus.length ? vscode.l10n.t('GPU: {0}', gpus.join(', ')) : vscode.l10n.t('GPU: as the server reports it');
    return [{
      ...info,
      tooltip: `${where}\n${gpu}\n${vscode.l10n.t('Input budget {0} tokens, answers up to {1} tokens', limits.maxInputTokens, limits.maxOutputTokens)}`,
      detail: availability === 'ready' ? vscode.l10n.t('local, loaded') : vscode.l10n.t('local, starts on first use'),
    }];
  }

  /** The running server's limits (its model config), else those of the config the extension renders. */
  private async limits(): Promise<ServerLimits> {
    const client = this.server.tritonClient;
    if (!client || !canInfer(this.store.current)) return RENDERED_LIMITS;
    try {
      return serverLimitsFromConfig(await client.modelConfig(this.server.modelName, { timeoutMs: CONFIG_TIMEOUT_MS }));
    } catch (e) {
      this.log.warn(`language model: could not read the model config, offering the rendered limits: ${e instanceof Error ? e.message : String(e)}`);
      return RENDERED_LIMITS;
    }
  }

  async provideLanguageModelChatResponse(
    _model: vscode.LanguageModelChatInformation,
    messages: readonly vscode.LanguageModelChatRequestMessage[],
    options: vscode.ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    if (options.tools?.length && options.toolMode === vscode.LanguageModelChatToolMode.Required) {
      throw new Error(vscode.l10n.t('ChatGLM3 on Triton does not call tools; this request requires a tool call.'));
    }
    await this.readyOrStart();
    const settings = this.settings.current;
    const built = toChatRequest(messages.map(toLmMessage), {
      limits: await this.limits(),
      defaultMaxNewTokens: settings.maxNewTokens,
      temperature: settings.temperature,
      topP: settings.topP,
      topK: settings.topK,
      repetitionPenalty: settings.repetitionPenalty,
      modelOptions: options.modelOptions,
    });
    if (!built.ok) {
      this.log.warn(`language model: request refused [${built.error.code}]: ${built.error.message}`);
      throw new Error(refusalText(built.error, modelDisplayName(this.server.modelName)));
    }
    const client = this.server.tritonClient;
    if (!client) throw new Error(vscode.l10n.t('ChatGLM is not running. Start it with ChatGLM: Start ChatGLM.'));
    const ctrl = new AbortController();
    const cancel = token.onCancellationRequested(() => ctrl.abort());
    if (token.isCancellationRequested) ctrl.abort();
    this.log.info(`language model: request (${messages.length} messages, about ${built.inputTokens} input tokens)`);
    try {
      const final = await this.server.track(requestAnswer(client, built.request, {
        model: this.server.modelName,
        streaming: true,
        signal: ctrl.signal,
        idleTimeoutMs: settings.streamIdleTimeoutSeconds * 1000,
        onDelta: (text) => { if (text) progress.report(new vscode.LanguageModelTextPart(text)); },
      }));
      this.log.info(`language model: answered (${final.finishReason}, ${final.promptTokens} prompt + ${final.completionTokens} answer tokens)`);
    } catch (e) {
      if (ctrl.signal.aborted) {
        this.log.info('language model: request cancelled (the stream was closed: Triton cancels it)');
        throw new vscode.CancellationError();
      }
      this.log.error('language model: request failed', e);
      throw new Error(errorText(presentError(e)));
    } finally {
      cancel.dispose();
    }
  }

  /** A model offered as startable starts on its first request, as the Start ChatGLM command does. */
  private async readyOrStart(): Promise<void> {
    if (canInfer(this.store.current)) return;
    if (this.availability() === 'startable') {
      this.log.info('language model: starting ChatGLM for a request (autoStart)');
      await this.server.startChatglm();
      if (canInfer(this.store.current)) return;
    }
    throw new Error(vscode.l10n.t('{0} is not loaded. Load it with ChatGLM: Start ChatGLM, then ask again.', chosenModelNow().displayName));
  }

  provideTokenCount(_model: vscode.LanguageModelChatInformation, text: string | vscode.LanguageModelChatRequestMessage): Promise<number> {
    return Promise.resolve(countLmTokens(typeof text === 'string' ? text : toLmMessage(text)));
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

/** Registers the provider under our vendor (contributes.languageModelChatProviders in package.json). */
export function registerChatModelProvider(provider: ChatModelProvider): vscode.Disposable {
  return vscode.lm.registerLanguageModelChatProvider(LM_VENDOR, provider);
}

/** System: VS Code's proposed role number (3), which chat participants already send. */
const SYSTEM_ROLE = 3;

function toLmMessage(m: vscode.LanguageModelChatRequestMessage): LmMessage {
  const role = m.role === vscode.LanguageModelChatMessageRole.User ? 'user'
    : m.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant'
      : (m.role as number) === SYSTEM_ROLE ? 'system' : undefined;
  return { role, roleName: String(m.role), parts: m.content.map(toLmPart) };
}

function toLmPart(part: unknown): LmPart {
  if (part instanceof vscode.LanguageModelTextPart) return { kind: 'text', text: part.value };
  // Named by what it is, not by its class name (VS Code's build may shorten those).
  if (part instanceof vscode.LanguageModelToolCallPart) return { kind: 'other', what: 'tool call' };
  if (part instanceof vscode.LanguageModelToolResultPart) return { kind: 'other', what: 'tool result' };
  if (part instanceof vscode.LanguageModelPromptTsxPart) return { kind: 'other', what: 'prompt-tsx part' };
  const mime = typeof part === 'object' && part !== null && 'mimeType' in part ? String(part.mimeType) : undefined;
  return { kind: 'other', what: mime ? `data part (${mime})` : 'non-text part' };
}

/** `modelName`: the display name of the model served, which refuses a role it does not take. */
function refusalText(error: LmRequestError, modelName: string): string {
  switch (error.code) {
    case 'unsupported-part':
      return vscode.l10n.t('Message {0} holds a {1}: ChatGLM3 on Triton takes text only (no tools, images or data).', error.messageIndex + 1, error.what);
    case 'unsupported-role':
      return vscode.l10n.t('Message {0} has a role {2} does not take ({1}): only system, user and assistant messages.', error.messageIndex + 1, error.what, modelName);
    case 'bad-option':
      return vscode.l10n.t('The model option {0} is not valid.', error.what);
    case 'over-budget':
      return vscode.l10n.t('The request comes to about {0} tokens, more than the model\'s input budget of {1} tokens. Nothing was sent.', error.tokens, error.maxInputTokens);
    default:
      return vscode.l10n.t('The request does not end with a user message to answer.');
  }
}
