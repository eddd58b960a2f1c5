// A small in-process stand-in for the `vscode` module: enough of the API for the extension to activate, register
// its commands and views, talk to a webview and be disposed, with everything recorded for assertions. Installed
// by hooking Node's module loader, so the real extension code runs unchanged.
import Module from 'node:module';
import { join } from 'node:path';

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  disposed = false;
  event = (listener: Listener<T>) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }
}

export class Uri {
  private constructor(readonly scheme: string, readonly path: string) {}
  static file(p: string): Uri { return new Uri('file', p); }
  static joinPath(base: Uri, ...parts: string[]): Uri { return new Uri(base.scheme, join(base.path, ...parts)); }
  get fsPath(): string { return this.path; }
  toString(): string { return `${this.scheme}://${this.path}`; }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  constructor(readonly start: Position, readonly end: Position) {}
}
export class Selection extends Range {}
export class ThemeColor { constructor(readonly id: string) {} }
export class MarkdownString {
  isTrusted = false;
  supportHtml = false;
  constructor(public value = '', readonly supportThemeIcons = false) {}
  appendMarkdown(s: string) { this.value += s; return this; }
  appendText(s: string) { this.value += s; return this; }
}

export interface Recorded {
  commands: Map<string, (...args: unknown[]) => unknown>;
  context: Map<string, unknown>;
  messages: { level: 'info' | 'warning' | 'error'; text: string; buttons: string[] }[];
  log: string[];
  disposables: { kind: string; disposed: boolean }[];
  statusBar: { text: string; tooltip?: unknown; disposed: boolean }[];
  viewProviders: Map<string, { resolveWebviewView(view: unknown): void }>;
  threads: FakeThread[];
  progress: { title: string; messages: string[] }[];
  panels: { viewType: string; webview: { html: string; posted: unknown[]; receive(m: unknown): void }; dispose(): void }[];
  config: Record<string, unknown>;
  trusted: boolean;
  /** Answer for the next showXxxMessage calls: a button title, or undefined. */
  answer?: string;
}

export interface FakeThread {
  uri: Uri;
  range: Range;
  comments: { body: MarkdownString; label?: string }[];
  label?: string;
  disposed: boolean;
  canReply?: boolean;
  contextValue?: string;
  collapsibleState?: number;
  dispose(): void;
}

export function createFakeVscode(config: Record<string, unknown>) {
  const rec: Recorded = {
    commands: new Map(), context: new Map(), messages: [], log: [], disposables: [], statusBar: [],
    viewProviders: new Map(), threads: [], progress: [], panels: [], config, trusted: true,
  };
  const configEmitter = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();
  const trustEmitter = new EventEmitter<void>();
  const track = (kind: string) => {
    const d = { kind, disposed: false };
    rec.disposables.push(d);
    return d;
  };
  const show = (level: 'info' | 'warning' | 'error') => async (text: string, ...items: unknown[]) => {
    const buttons = items.map((i) => (typeof i === 'string' ? i : (i as { title: string }).title));
    rec.messages.push({ level, text, buttons });
    if (rec.answer === undefined) return undefined;
    return items.find((i) => (typeof i === 'string' ? i : (i as { title: string }).title) === rec.answer);
  };
  let activeTextEditor: unknown;

  const vscode = {
    EventEmitter, Uri, Position, Range, Selection, ThemeColor, MarkdownString,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    CommentMode: { Editing: 0, Preview: 1 },
    CommentThreadCollapsibleState: { Collapsed: 0, Expanded: 1 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    l10n: {
      t: (message: string, ...args: unknown[]) => message.replace(/\{(\d+)\}/g, (m, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : m)),
    },
    env: { language: 'en', clipboard: { text: '', async writeText(t: string) { this.text = t; } } },
    commands: {
      registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
        if (rec.commands.has(id)) throw new Error(`command ${id} already registered`);
        rec.commands.set(id, fn);
        const d = track(`command:${id}`);
        return { dispose: () => { d.disposed = true; rec.commands.delete(id); } };
      },
      async executeCommand(id: string, ...args: unknown[]) {
        if (id === 'setContext') { rec.context.set(String(args[0]), args[1]); return undefined; }
        const fn = rec.commands.get(id);
        return fn ? fn(...args) : undefined;
      },
    },
    window: {
      get activeTextEditor() { return activeTextEditor; },
      set activeTextEditor(e: unknown) { activeTextEditor = e; },
      createOutputChannel(name: string) {
        const d = track(`output:${name}`);
        const write = (level: string) => (m: string) => { rec.log.push(`${level} ${m}`); };
        return { info: write('info'), warn: write('warn'), error: write('error'), debug: write('debug'), trace: write('trace'), show() {}, dispose() { d.disposed = true; } };
      },
      createStatusBarItem() {
        const d = track('statusBar');
        const item = { text: '', tooltip: undefined as unknown, command: undefined as unknown, name: '', backgroundColor: undefined as unknown, accessibilityInformation: undefined as unknown, disposed: false, show() {}, hide() {}, dispose() { d.disposed = true; item.disposed = true; } };
        rec.statusBar.push(item);
        return item;
      },
      registerWebviewViewProvider(id: string, provider: { resolveWebviewView(view: unknown): void }) {
        rec.viewProviders.set(id, provider);
        const d = track(`view:${id}`);
        return { dispose: () => { d.disposed = true; rec.viewProviders.delete(id); } };
      },
      showInformationMessage: show('info'),
      showWarningMessage: show('warning'),
      showErrorMessage: show('error'),
      async showQuickPick() { return undefined; },
      async withProgress(opts: { title: string }, task: (p: unknown, token: unknown) => Promise<unknown>) {
        const entry = { title: opts.title, messages: [] as string[] };
        rec.progress.push(entry);
        const cancel = new EventEmitter<void>();
        return task({ report: (v: { message?: string }) => { if (v.message) entry.messages.push(v.message); } },
          { isCancellationRequested: false, onCancellationRequested: cancel.event });
      },
      createWebviewPanel(viewType: string, title: string) {
        const d = track(`panel:${viewType}`);
        const disposeEmitter = new EventEmitter<void>();
        const received = new EventEmitter<unknown>();
        const panel = {
          viewType, title, visible: true, iconPath: undefined as unknown,
          webview: { html: '', cspSource: 'vscode-resource:', options: {}, posted: [] as unknown[], asWebviewUri: (u: Uri) => u,
            onDidReceiveMessage: received.event,
            /** The page posts a message to the host. */
            receive: (m: unknown) => received.fire(m),
            async postMessage(m: unknown) { panel.webview.posted.push(m); return true; } },
          onDidChangeViewState: new EventEmitter<void>().event,
          onDidDispose: disposeEmitter.event,
          reveal() {},
          dispose() { if (!d.disposed) { d.disposed = true; disposeEmitter.fire(); } },
        };
        rec.panels.push(panel);
        return panel;
      },
      async showTextDocument() { return undefined; },
    },
    workspace: {
      get isTrusted() { return rec.trusted; },
      getConfiguration(section: string) {
        return {
          inspect(key: string) {
            const full = `${section}.${key}`;
            return full in rec.config ? { key: full, globalValue: rec.config[full] } : { key: full };
          },
          get(key: string) { return rec.config[`${section}.${key}`]; },
        };
      },
      onDidChangeConfiguration: configEmitter.event,
      onDidGrantWorkspaceTrust: trustEmitter.event,
      async openTextDocument(o: unknown) { return o; },
    },
    languages: { async getLanguages() { return ['plaintext', 'python', 'typescript']; } },
    comments: {
      createCommentController(id: string) {
        const d = track(`comments:${id}`);
        return {
          id, options: {},
          createCommentThread(uri: Uri, range: Range, comments: { body: MarkdownString }[]) {
            const t: FakeThread = { uri, range, comments, disposed: false, dispose() { t.disposed = true; } };
            rec.threads.push(t);
            return t;
          },
          dispose() { d.disposed = true; },
        };
      },
    },
  };

  /** Changes settings the way the Settings editor would (fires onDidChangeConfiguration). */
  const updateConfig = (values: Record<string, unknown>) => {
    Object.assign(rec.config, values);
    configEmitter.fire({ affectsConfiguration: (s: string) => Object.keys(values).some((k) => k === s || k.startsWith(`${s}.`)) });
  };
  return { vscode, rec, updateConfig };
}

/** Makes `require('vscode')` return `api` for modules loaded after this call; returns the undo function. */
export function installVscodeModule(api: unknown): () => void {
  const mod = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
  const original = mod._load;
  mod._load = function (request: string, parent: unknown, isMain: boolean) {
    if (request === 'vscode') return api;
    return original.call(this, request, parent, isMain);
  };
  return () => { mod._load = original; };
}
