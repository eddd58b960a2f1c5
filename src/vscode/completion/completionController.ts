// Inline code completion in the window: the provider (registered for every file), the recently edited files it
// takes references from, and the status bar's toggle; turning completions off cancels the request in flight.
import * as vscode from 'vscode';
import { CompletionProvider, type CompletionProviderDeps } from './completionProvider';
import { CompletionToggle } from './completionToggle';
import { RecentEdits } from './recentEdits';

/** The provider's needs less what the controller itself supplies (the recent edits, the toggle's state). */
export type CompletionControllerDeps = Omit<CompletionProviderDeps, 'recent' | 'active'>;

export class CompletionController implements vscode.Disposable {
  readonly toggle: CompletionToggle;
  readonly provider: CompletionProvider;
  private readonly subscriptions: vscode.Disposable[];

  constructor(deps: CompletionControllerDeps) {
    const recent = new RecentEdits();
    this.toggle = new CompletionToggle(deps.settings, deps.log, deps.modelName, deps.lifecycle.onDidChange);
    this.provider = new CompletionProvider({ ...deps, recent, active: () => this.toggle.availability.state === 'on' });
    this.subscriptions = [
      recent,
      this.toggle,
      this.toggle.onDidChange((a) => { if (a.state === 'off') this.provider.service.cancel(); }),
      vscode.languages.registerInlineCompletionItemProvider({ pattern: '**' }, this.provider),
      this.provider,
    ];
  }

  dispose(): void {
    for (const d of [...this.subscriptions].reverse()) d.dispose();
  }
}
