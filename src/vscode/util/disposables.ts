// Ownership of everything that must be released: the extension's root store owns child stores, and each store
// disposes in reverse order of creation (UI before the services it uses, the log channel last).
import type * as vscode from 'vscode';

export interface AsyncDisposable {
  dispose(): void | Promise<void>;
}

export class DisposableStore implements vscode.Disposable {
  private readonly items: AsyncDisposable[] = [];
  private disposed = false;

  constructor(private readonly onError: (error: unknown) => void = () => undefined) {}

  /** Adds an item; when the store is already disposed, the item is disposed at once (nothing can leak). */
  add<T extends AsyncDisposable>(item: T): T {
    if (this.disposed) void this.disposeOne(item);
    else this.items.push(item);
    return item;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Disposes in reverse order, waiting for asynchronous ones (a flush to disk); one failure does not stop the rest. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    while (this.items.length > 0) await this.disposeOne(this.items.pop()!);
  }

  private async disposeOne(item: AsyncDisposable): Promise<void> {
    try {
      await item.dispose();
    } catch (e) {
      this.onError(e);
    }
  }
}

/** A disposable for a timer. */
export function intervalDisposable(fn: () => void, ms: number): AsyncDisposable {
  const t = setInterval(fn, ms);
  return { dispose: () => clearInterval(t) };
}
