// The inline completion provider for every language: each call asks the core (cache, debounce, cancel-previous,
// post-processing); the editor's cancellation token aborts the request, which closes its stream so the server
// frees the row. Ghost text is accepted with Tab, a word or a line with VS Code's own commands.
import * as vscode from 'vscode';
import { CompletionService } from '../../core/completion/completionService';
import { requestInfill } from '../../core/completion/infillClient';
import { toCompletionSettings, type CompletionSettings } from '../../core/completion/settings';
import { canInfer } from '../../core/state/lifecycle';
import { TritonError, type TritonClient } from '../../core/triton';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { documentVerdict } from './documentFilter';
import type { RecentEdits } from './recentEdits';

export interface CompletionProviderDeps {
  settings: SettingsService;
  lifecycle: LifecycleStore;
  log: Log;
  client(): TritonClient | undefined;
  /** Triton's name of the served model: the entry infill requests go to. */
  modelName(): string;
  /** Counts the request while it runs (the server session's health polling). */
  track<T>(request: Promise<T>): Promise<T>;
  recent: RecentEdits;
  /** Whether completions run now for the window (the toggle's state). */
  active(): boolean;
}

export class CompletionProvider implements vscode.InlineCompletionItemProvider {
  readonly service: CompletionService;
  private lastError = '';

  constructor(private readonly deps: CompletionProviderDeps) {
    this.service = new CompletionService((payload, options) => {
      const client = deps.client();
      if (!client) return Promise.reject(new TritonError('server-not-running', 'No Triton server to complete with.', { operation: 'generate-stream' }));
      return deps.track(requestInfill(client, deps.modelName(), payload, options));
    }, {
      settings: () => this.settings(),
      idleTimeoutMs: deps.settings.current.streamIdleTimeoutSeconds * 1000,
    });
  }

  private settings(): CompletionSettings {
    return toCompletionSettings(this.deps.settings.current);
  }

  async provideInlineCompletionItems(document: vscode.TextDocument, position: vscode.Position, context: vscode.InlineCompletionContext, token: vscode.CancellationToken): Promise<vscode.InlineCompletionItem[] | undefined> {
    if (!this.deps.active() || !canInfer(this.deps.lifecycle.current) || documentVerdict(document, this.settings()) !== 'ok') {
      this.service.cancel();
      return undefined;
    }
    const ctrl = new AbortController();
    const sub = token.onCancellationRequested(() => ctrl.abort());
    if (token.isCancellationRequested) ctrl.abort();
    try {
      const outcome = await this.service.complete({
        documentKey: document.uri.toString(),
        document: { text: document.getText(), offset: document.offsetAt(position), path: vscode.workspace.asRelativePath(document.uri, false), languageId: document.languageId },
        references: this.deps.recent.candidates(document, this.settings()),
        tabSize: tabSizeOf(document),
        immediate: context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke,
        signal: ctrl.signal,
      });
      if (outcome.kind !== 'text' || token.isCancellationRequested) return undefined;
      return [new vscode.InlineCompletionItem(outcome.text, new vscode.Range(position, position))];
    } catch (e) {
      // A refusal or a lost server is logged once per distinct message: completions stay quiet in the editor.
      const message = e instanceof Error ? e.message : String(e);
      if (message !== this.lastError) this.deps.log.warn(`completion failed: ${message}`);
      this.lastError = message;
      return undefined;
    } finally {
      sub.dispose();
    }
  }

  dispose(): void {
    this.service.cancel();
  }
}

function tabSizeOf(document: vscode.TextDocument): number {
  const editor = vscode.window.visibleTextEditors.find((e) => e.document === document);
  const size = editor?.options.tabSize;
  return typeof size === 'number' ? size : 4;
}
