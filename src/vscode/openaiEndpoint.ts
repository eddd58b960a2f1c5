// Runs the OpenAI-compatible endpoint (src/core/openai) while `tritonChatglm.openai.enabled` is on, in front of the
// server this window is connected to, and follows the setting's changes. Only adapts the core's policy.
import * as vscode from 'vscode';
import { endpointPlan, modelSamplingDefaults, samePlan, startOpenAiServer, type EndpointPlan, type RunningOpenAiServer } from '../core/openai';
import { DEFAULT_MODEL_SETTINGS } from '../core/repository';
import type { TritonClient } from '../core/triton';
import type { SettingsService } from './config/settingsService';
import type { Log } from './log';

export class OpenAiEndpoint implements vscode.Disposable {
  #running: RunningOpenAiServer | undefined;
  #plan: EndpointPlan | undefined;
  #queue: Promise<void> = Promise.resolve();
  readonly #subscription: vscode.Disposable;

  constructor(
    private readonly settings: SettingsService,
    private readonly client: () => TritonClient | undefined,
    /** Triton's name of the model that answers: read at each request (a restart may switch it). */
    private readonly modelName: () => string,
    private readonly log: Log,
  ) {
    this.#subscription = settings.onDidChange((change) => {
      if (change.keys.some((k) => k.startsWith('openai.'))) this.apply();
    });
    this.apply();
  }

  /** http://127.0.0.1:<port>/v1 while it listens. */
  get url(): string | undefined {
    return this.#running?.url;
  }

  private apply(): void {
    this.#queue = this.#queue.then(() => this.reconcile()).catch((e: unknown) => this.log.error('OpenAI endpoint', e));
  }

  private async reconcile(): Promise<void> {
    const plan = endpointPlan(this.settings.current);
    if (samePlan(plan, this.#plan) && (plan === undefined) === (this.#running === undefined)) return;
    await this.stop();
    this.#plan = plan;
    if (!plan) return;
    const modelName = this.modelName;
    try {
      this.#running = await startOpenAiServer({
        backend: {
          client: this.client,
          // A getter: the core reads it at each request, so a restart with another model is followed.
          get model() { return modelName(); },
          defaults: () => modelSamplingDefaults(DEFAULT_MODEL_SETTINGS),
          idleTimeoutMs: this.settings.current.streamIdleTimeoutSeconds * 1000,
        },
        host: plan.host,
        port: plan.port,
        log: (line) => this.log.warn(line),
      });
      this.log.info(`OpenAI-compatible endpoint at ${this.#running.url}`);
    } catch (e) {
      this.#plan = undefined;
      const reason = e instanceof Error ? e.message : String(e);
      this.log.error('OpenAI endpoint did not start', e);
      void vscode.window.showWarningMessage(vscode.l10n.t('The OpenAI-compatible endpoint could not listen on port {0}: {1}', String(plan.port), reason));
    }
  }

  private async stop(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    await running?.close();
  }

  dispose(): void {
    this.#subscription.dispose();
    void this.#queue.then(() => this.stop());
  }
}
