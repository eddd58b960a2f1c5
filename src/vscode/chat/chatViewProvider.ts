// The chat side panel (WebviewView): strict CSP, resources only from dist/ and media/, and every message from
// the webview parsed by the shared protocol (zod schemas) before anything acts on it. The active conversation's
// title is the view's title.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_STRINGS, parseHostToWebview, parseWebviewToHost, isProtocolError, type HostToWebview, type StringKey } from '../../protocol';
import { commandKeyBinding } from '../../core/text/keybindings';
import { COMMANDS } from '../commandIds';
import type { Log } from '../log';
import { buildWebviewHtml, makeNonce } from '../webviewHtml';
import type { ChatController } from './chatController';

export const CHAT_VIEW_ID = 'tritonChatglm.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly viewSubscriptions: vscode.Disposable[] = [];
  private dropped = 0;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
    private readonly log: Log,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.disposeView();
    this.view = view;
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      enableCommandUris: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
    const asUri = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, ...p)).toString();
    webview.html = buildWebviewHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      title: vscode.l10n.t('ChatGLM chat'),
      lang: vscode.env.language,
      // The webview bundle's own CSS (when it imports any) and the panel's stylesheet, whichever exist.
      styles: [['dist', 'webview.css'], ['media', 'chat', 'chat.css']]
        .filter((p) => existsSync(path.join(this.extensionUri.fsPath, ...p)))
        .map((p) => asUri(...p)),
      scripts: [asUri('dist', 'webview.js')],
    });
    this.viewSubscriptions.push(
      webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.chat.connectView(undefined);
          void this.chat.setFocused(false);
        }
      }),
      // A hidden panel may never see its blur: its Ctrl+L must not outlive it.
      view.onDidChangeVisibility(() => { if (!view.visible) void this.chat.setFocused(false); }),
    );
    const viewName = view.title;
    this.chat.connectView({
      post: (m) => this.post(m),
      // In the view's title bar ("ChatGLM: <conversation>"): the panel itself has no list or title of its own.
      showTitle: (title) => { if (this.view === view) view.title = title || viewName; },
    });
  }

  private receive(raw: unknown): void {
    const msg = parseWebviewToHost(raw);
    if (isProtocolError(msg)) {
      // Never acted upon; logged (rate-limited) so a broken webview build is visible.
      this.dropped++;
      if (this.dropped <= 20) this.log.warn(`chat view: dropped a message: ${msg.error}`);
      return;
    }
    if (msg.type === 'ready') {
      this.post({ type: 'l10n', strings: webviewStrings() });
      this.post(editorKeybindings(this.extensionUri));
    }
    void this.chat.handle(msg);
  }

  private post(message: HostToWebview): void {
    if (!this.view) return;
    // Our own messages must satisfy the same schema the webview enforces, or it would drop them silently.
    const checked = parseHostToWebview(message);
    if (isProtocolError(checked)) {
      this.log.error(`chat view: not sent: ${checked.error}`);
      return;
    }
    void this.view.webview.postMessage(message);
  }

  /** Opens the panel (Open Chat). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  private disposeView(): void {
    for (const d of this.viewSubscriptions.splice(0)) d.dispose();
  }

  dispose(): void {
    this.disposeView();
    this.chat.connectView(undefined);
    this.view = undefined;
  }
}

/**
 * Every string of the panel, translated through the extension's l10n bundle. The English text is the key, as
 * for every l10n.t call (the bundles list these strings; see l10n/bundle.l10n*.json).
 */
export function webviewStrings(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(DEFAULT_STRINGS) as StringKey[]) out[key] = vscode.l10n.t(DEFAULT_STRINGS[key]);
  return out;
}

/** The keys of Explain and Edit Selection as the extension's package.json binds them (the empty chat names them). */
export function editorKeybindings(extensionUri: vscode.Uri): HostToWebview {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(path.join(extensionUri.fsPath, 'package.json'), 'utf8'));
  } catch {
    manifest = undefined; // the welcome then names the commands without keys
  }
  const explain = commandKeyBinding(manifest, COMMANDS.explainSelection);
  const edit = commandKeyBinding(manifest, COMMANDS.editSelection);
  return { type: 'keybindings', ...(explain ? { explain } : {}), ...(edit ? { edit } : {}) };
}
