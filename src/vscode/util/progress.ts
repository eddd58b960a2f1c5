// Progress notifications for long operations, fed by real signals (container log lines, the repository index,
// build output) and always showing the elapsed time. Cancelling aborts the task's signal.
import * as vscode from 'vscode';

export interface ProgressReporter {
  /** The current step, e.g. "Waiting for the server" (kept until the next step). */
  step(text: string): void;
  /** The latest evidence, e.g. a container log line (shortened). */
  detail(text: string): void;
}

const MAX_DETAIL = 90;

export interface ElapsedProgressOptions {
  title: string;
  /** Shows a Cancel button, which aborts the task's signal. */
  cancellable: boolean;
  /** Aborting it aborts the task's signal too (a Stop cancelling a start). */
  signal?: AbortSignal;
}

export function withElapsedProgress<T>(
  options: ElapsedProgressOptions,
  task: (reporter: ProgressReporter, signal: AbortSignal) => Promise<T>,
): Thenable<T> {
  const { title, cancellable, signal: outerSignal } = options;
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable }, async (progress, token) => {
    const ctrl = new AbortController();
    const cancelSub = token.onCancellationRequested(() => ctrl.abort());
    const onOuter = () => ctrl.abort();
    outerSignal?.addEventListener('abort', onOuter, { once: true });
    const started = Date.now();
    let step = '';
    let detail = '';
    const render = () => {
      const secs = Math.round((Date.now() - started) / 1000);
      const elapsed = vscode.l10n.t('{0} s', secs);
      const parts = [step, detail && `— ${detail}`, `(${elapsed})`].filter(Boolean);
      progress.report({ message: parts.join(' ') });
    };
    const timer = setInterval(render, 1000);
    try {
      return await task({
        step: (text) => { step = text; detail = ''; render(); },
        detail: (text) => {
          const oneLine = text.replace(/\s+/g, ' ').trim();
          detail = oneLine.length > MAX_DETAIL ? `${oneLine.slice(0, MAX_DETAIL - 1)}…` : oneLine;
          render();
        },
      }, ctrl.signal);
    } finally {
      clearInterval(timer);
      cancelSub.dispose();
      outerSignal?.removeEventListener('abort', onOuter);
    }
  });
}
