// A notification that closes itself once it no longer applies ("Load the model now?" after the model loaded).
// VS Code's message API cannot close a message (microsoft/vscode#134777); a notification-located progress can:
// it ends with its task. Its actions are command links in the text (notifications open them with commands
// allowed); its Cancel button closes it like a message's ×.
import * as vscode from 'vscode';
import type { CommandId } from '../commandIds';

export interface NoticeAction {
  label: string;
  command: CommandId;
}

/** A command link in notification text; `[` and `]` in the label would end it early. */
export function commandLink(action: NoticeAction): string {
  return `[${action.label.replace(/[[\]]/g, '')}](command:${action.command})`;
}

/**
 * Shows `text` with its actions until `until` aborts, the person closes it or an action runs (the notification
 * closes as soon as one is clicked). Resolves when it is gone.
 */
export function showNotice(text: string, actions: readonly NoticeAction[], until: AbortSignal): Thenable<void> {
  if (until.aborted) return Promise.resolve();
  const message = [text, ...actions.map(commandLink)].join(' ');
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, cancellable: true }, (progress, token) => {
    // A full bar reads as "done", not as work in progress (an indeterminate bar would animate).
    progress.report({ message, increment: 100 });
    return new Promise<void>((resolve) => {
      const finish = () => {
        until.removeEventListener('abort', finish);
        cancel.dispose();
        clicked.dispose();
        resolve();
      };
      until.addEventListener('abort', finish, { once: true });
      const cancel = token.onCancellationRequested(finish);
      // A clicked link runs its command; the notice has done its job then.
      const clicked = onCommandRun(actions.map((a) => a.command), finish);
    });
  });
}

/** Registered while a notice shows: told when one of its commands runs (see ServerController's command wrapper). */
const commandListeners = new Set<{ commands: readonly string[]; run(): void }>();

function onCommandRun(commands: readonly string[], run: () => void): { dispose(): void } {
  const entry = { commands, run };
  commandListeners.add(entry);
  return { dispose: () => { commandListeners.delete(entry); } };
}

/** The extension's command handlers call this first: a notice offering the command closes. */
export function noticeCommandRan(command: string): void {
  for (const entry of [...commandListeners]) if (entry.commands.includes(command)) entry.run();
}
