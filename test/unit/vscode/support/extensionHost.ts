// What the extension-host tests share around the fake `vscode` module: an ExtensionContext over a storage folder,
// the chat view resolved the way VS Code resolves it, and a wait on a condition.
import { Uri } from './fakeVscode';

/** The ExtensionContext `activate` gets: the package at `root`, global storage and a global state in memory. */
export function fakeExtensionContext(root: string, storage: string): never {
  const memento = new Map<string, unknown>();
  return {
    subscriptions: [] as unknown[],
    extensionUri: Uri.file(root),
    extensionPath: root,
    globalStorageUri: Uri.file(storage),
    globalState: { get: (k: string) => memento.get(k), update: async (k: string, v: unknown) => { memento.set(k, v); }, keys: () => [...memento.keys()] },
  } as never;
}

/**
 * Resolves the chat view on a fresh fake webview: what the extension posts goes to `onPost`; returns the page's
 * HTML and the function that delivers a message from the page (what webview.onDidReceiveMessage gets).
 */
export function resolveChatView(provider: { resolveWebviewView(view: unknown): void }, onPost: (m: unknown) => void): { html: string; receive: (m: unknown) => void } {
  let receive: (m: unknown) => void = () => undefined;
  const view = {
    webview: {
      options: {}, cspSource: 'vscode-resource:', html: '', asWebviewUri: (u: Uri) => u,
      onDidReceiveMessage: (l: (m: unknown) => void) => { receive = l; return { dispose() {} }; },
      postMessage: async (m: unknown) => { onPost(m); return true; },
    },
    onDidDispose: () => ({ dispose() {} }),
  };
  provider.resolveWebviewView(view);
  return { html: view.webview.html, receive: (m) => receive(m) };
}

/** Polls `probe` until it returns something truthy (that value); rejects after `timeoutMs` naming `what`. */
export async function waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
