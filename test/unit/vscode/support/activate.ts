// The real extension activated against the fake `vscode` module (test/unit/vscode/support/fakeVscode.ts), for the
// tests of the host side: a context with its own global storage and memento, and the chat view resolved with a
// webview that records what the host posts.
import { join } from 'node:path';
import { Uri, type createFakeVscode } from './fakeVscode';

type Fake = ReturnType<typeof createFakeVscode>;
export type ExtensionModule = typeof import('../../../../src/vscode/extension');

const root = join(__dirname, '../../../..');

/** Loads src/vscode/extension (after installVscodeModule) and activates it with global storage in `storage` (and `memento` as its global state). */
export async function activateExtension(storage: string, memento = new Map<string, unknown>()): Promise<ExtensionModule> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ext = require('../../../../src/vscode/extension') as ExtensionModule;
  await ext.activate({
    subscriptions: [], extensionUri: Uri.file(root), extensionPath: root, globalStorageUri: Uri.file(storage),
    globalState: { get: (k: string) => memento.get(k), update: async (k: string, v: unknown) => { memento.set(k, v); }, keys: () => [...memento.keys()] },
  } as never);
  return ext;
}

/** Resolves the chat view as VS Code does when it is shown: its HTML, and the webview's side of the messages. */
export function resolveChatView(fake: Fake, posted: unknown[]): { html: string; receive: (m: unknown) => void } {
  let receive: (m: unknown) => void = () => undefined;
  const view = {
    webview: {
      options: {}, cspSource: 'vscode-resource:', html: '', asWebviewUri: (u: Uri) => u,
      onDidReceiveMessage: (l: (m: unknown) => void) => { receive = l; return { dispose() {} }; },
      postMessage: async (m: unknown) => { posted.push(m); return true; },
    },
    onDidDispose: () => ({ dispose() {} }),
    onDidChangeVisibility: () => ({ dispose() {} }),
  };
  fake.rec.viewProviders.get('tritonChatglm.chat')!.resolveWebviewView(view);
  return { html: view.webview.html, receive: (m) => receive(m) };
}

/** Resolves with `probe()`'s first truthy value, polling every 20 ms; rejects after `timeoutMs` naming `what`. */
export async function waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
