// A small in-process stand-in for the `vscode` module: enough of the API for the extension to activate, register
// its commands and views, talk to a webview and be disposed, with everything recorded for assertions. Installed
// by hooking Node's module loader, so the real extension code runs unchanged.
import { readFileSync, statSync } from 'node:fs';
import Module from 'node:module';
import { join, matchesGlob, relative } from 'node:path';
import { createFakeLm } from './fakeLm';

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
  static parse(s: string): Uri { const m = /^([a-z][a-z0-9+.-]*):(?:\/\/)?(.*)$/i.exec(s); return m ? new Uri(m[1]!, m[2]!) : new Uri('file', s); }
  static joinPath(base: Uri, ...parts: string[]): Uri { return new Uri(base.scheme, join(base.path, ...parts)); }
  get fsPath(): string { return this.path; }
  toString(): string { return `${this.scheme}://${this.path}`; }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c!, d!) : b as Position;
  }
  get isEmpty(): boolean { return this.start.line === this.end.line && this.start.character === this.end.character; }
}
export class Selection extends Range {}
export class ThemeColor { constructor(readonly id: string) {} }
export class ThemeIcon { static readonly File = new ThemeIcon('file'); constructor(readonly id: string) {} }
export class RelativePattern { constructor(readonly base: { uri: Uri }, readonly pattern: string) {} }

/** A text document over a string, as editors hand it to the extension; `edit` changes it as an applied edit does. */
export function fakeDocument(uri: Uri, initial: string, languageId = 'plaintext') {
  let text = initial;
  let lines = text.split('\n');
  const offsetAt = (p: Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + Math.min(p.character, lines[p.line]?.length ?? 0);
  const positionAt = (offset: number) => {
    const before = text.slice(0, Math.max(0, Math.min(offset, text.length))).split('\n');
    return new Position(before.length - 1, before[before.length - 1]!.length);
  };
  const doc = {
    uri, fileName: uri.fsPath, languageId, offsetAt, positionAt, version: 1, isClosed: false,
    get lineCount() { return lines.length; },
    get eol() { return text.includes('\r\n') ? 2 : 1; },
    getText: (r?: Range) => (r ? text.slice(offsetAt(r.start), offsetAt(r.end)) : text),
    lineAt: (line: number) => ({ text: lines[line] ?? '' }),
    edit(r: Range, newText: string) {
      text = text.slice(0, offsetAt(r.start)) + newText + text.slice(offsetAt(r.end));
      lines = text.split('\n');
      doc.version += 1;
    },
  };
  return doc;
}

/** The edits of a WorkspaceEdit, in the order they were made. */
export class WorkspaceEdit {
  readonly edits: { uri: Uri; range: Range; newText: string }[] = [];
  replace(uri: Uri, range: Range, newText: string): void { this.edits.push({ uri, range, newText }); }
}
export class TabInputTextDiff { constructor(readonly original: Uri, readonly modified: Uri) {} }
export class TabInputText { constructor(readonly uri: Uri) {} }
export class InlineCompletionItem { constructor(readonly insertText: string, readonly range?: Range) {} }
/** A cancellation token the test cancels (VS Code cancels the previous one on each keystroke). */
export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel() { if (!this.token.isCancellationRequested) { this.token.isCancellationRequested = true; this.emitter.fire(); } }
  dispose() {}
}

/** A quick pick as the extension drives it (createQuickPick), with what the user would do to it. */
export interface FakeQuickPick {
  title?: string;
  placeholder?: string;
  items: Array<{ label: string; description?: string; detail?: string; kind?: number; buttons?: Array<{ tooltip?: string }> }>;
  activeItems: unknown[];
  /** What is typed in its input. */
  value: string;
  /** Types `value` into its input (fires onDidChangeValue). */
  type(value: string): void;
  visible: boolean;
  disposed: boolean;
  /** Picks the item with this label (Enter). */
  accept(label: string): void;
  /** Clicks the button with this tooltip on the item with this label. */
  triggerButton(label: string, tooltip: string): Promise<void>;
}
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
  /** Inline completion providers (vscode.languages.registerInlineCompletionItemProvider), with their selectors. */
  inlineProviders: { selector: unknown; provider: { provideInlineCompletionItems(...args: unknown[]): Promise<unknown> } }[];
  /** Language model chat providers by vendor (vscode.lm.registerLanguageModelChatProvider). */
  lmProviders: Map<string, unknown>;
  threads: FakeThread[];
  /** Progress notifications: `done` once their task ended (the notification closed). */
  progress: { title: string; messages: string[]; done?: boolean }[];
  panels: { viewType: string; webview: { html: string; posted: unknown[]; receive(m: unknown): void }; dispose(): void }[];
  config: Record<string, unknown>;
  trusted: boolean;
  /** Answer for the next showXxxMessage calls: a button title, or undefined. */
  answer?: string;
  /** Every executeCommand call (id and arguments), the extension's own and VS Code's. */
  executed: { id: string; args: unknown[] }[];
  /** URLs given to env.openExternal. */
  external: string[];
  /** What showOpenDialog returns next (undefined: the person cancelled); each call is recorded. */
  openDialogAnswer?: Uri[];
  openDialogs: unknown[];
  /** Settings written with WorkspaceConfiguration.update: key, value and ConfigurationTarget. */
  updates: { key: string; value: unknown; target: unknown }[];
  /** vscode.env.remoteName: undefined for a local window. */
  remoteName?: string;
  quickPicks: FakeQuickPick[];
  /**
   * Times the quick input closed with nothing in its place (VS Code then gives the editor the focus): one quick
   * input shown while another is up takes its place without closing.
   */
  quickInputClosed: number;
  /** What the next showInputBox or input box (createInputBox: typed, then Enter) returns, and the next showSaveDialog. */
  inputAnswer?: string;
  saveAnswer?: Uri;
  /** Files written through workspace.fs. */
  written: Map<string, string>;
  /** showXxxMessage calls with `{ modal: true }` (their detail too). */
  modals: { text: string; detail?: string; buttons: string[] }[];
  /** What showQuickPick was offered, and the label to pick (undefined: dismissed). */
  quickPickCalls: { labels: string[]; descriptions: string[] }[];
  pick?: string;
  /** findFiles calls: the include's pattern and the exclude. */
  findFiles: { include: string; exclude: unknown }[];
  /** Files findFiles returns (absolute paths). */
  files: string[];
  opened: { uri: string; selection?: Range; selections?: Selection[] }[];
  /** registerTextDocumentContentProvider: the provider of each scheme. */
  contentProviders: Map<string, { provideTextDocumentContent(uri: Uri): string }>;
  /** vscode.diff calls, with the right side's text as its content provider served it. */
  diffs: { left: Uri; right: Uri; title: string; rightText: string }[];
  /** The editor tabs (one group): a diff opens one, tabGroups.close closes it. */
  tabs: { input: unknown; label: string }[];
  /** workspace.applyEdit calls; `applyEditFails` makes the next ones return false. */
  applied: WorkspaceEdit[];
  applyEditFails?: boolean;
}

export interface FakeThread {
  uri: Uri;
  range: Range;
  comments: { body: MarkdownString; label?: string; author?: { name: string } }[];
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
    viewProviders: new Map(), lmProviders: new Map(), threads: [], progress: [], panels: [], config, trusted: true,
    executed: [], external: [], openDialogs: [], updates: [], quickPicks: [], quickInputClosed: 0, written: new Map(),
    modals: [], quickPickCalls: [], findFiles: [], files: [], opened: [],
    contentProviders: new Map(), diffs: [], tabs: [], applied: [], inlineProviders: [],
  };
  // The quick inputs created so far: showing one hides the one that is up without closing the quick input.
  const shownInputs: { visible: boolean; replaced(): void }[] = [];
  const takePlace = () => { for (const q of shownInputs) q.replaced(); };
  const configEmitter = new EventEmitter<{ affectsConfiguration(s: string): boolean }>();
  const trustEmitter = new EventEmitter<void>();
  const track = (kind: string) => {
    const d = { kind, disposed: false };
    rec.disposables.push(d);
    return d;
  };
  const show = (level: 'info' | 'warning' | 'error') => async (text: string, ...rest: unknown[]) => {
    const options = rest[0] && typeof rest[0] === 'object' && !('title' in rest[0]) ? rest.shift() as { modal?: boolean; detail?: string } : undefined;
    const items = rest;
    const buttons = items.map((i) => (typeof i === 'string' ? i : (i as { title: string }).title));
    rec.messages.push({ level, text, buttons });
    if (options?.modal) rec.modals.push({ text, buttons, ...(options.detail ? { detail: options.detail } : {}) });
    if (rec.answer === undefined) return undefined;
    return items.find((i) => (typeof i === 'string' ? i : (i as { title: string }).title) === rec.answer);
  };
  let activeTextEditor: unknown;
  const activeEditorEmitter = new EventEmitter<unknown>();
  const documentChangeEmitter = new EventEmitter<{ document: { uri: Uri }; contentChanges: unknown[] }>();
  const documentCloseEmitter = new EventEmitter<unknown>();
  const tabsEmitter = new EventEmitter<{ opened: unknown[]; closed: unknown[]; changed: unknown[] }>();
  const tabGroupsEmitter = new EventEmitter<unknown>();
  const textDocuments: ReturnType<typeof fakeDocument>[] = [];
  const workspaceFolders = [{ uri: Uri.file('/w'), name: 'w', index: 0 }];
  const folderOf = (u: Uri) => workspaceFolders.find((f) => u.scheme === 'file' && (u.path === f.uri.path || u.path.startsWith(`${f.uri.path}/`)));
  const languageOf = (p: string) => (p.endsWith('.py') ? 'python' : p.endsWith('.ts') ? 'typescript' : p.endsWith('.md') ? 'markdown' : 'plaintext');

  const vscode = {
    ...createFakeLm(rec.lmProviders),
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    EventEmitter, Uri, Position, Range, Selection, ThemeColor, ThemeIcon, RelativePattern, MarkdownString, WorkspaceEdit, TabInputTextDiff, TabInputText,
    InlineCompletionItem, CancellationTokenSource,
    InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
    EndOfLine: { LF: 1, CRLF: 2 },
    QuickPickItemKind: { Separator: -1, Default: 0 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    FileType: { File: 1, Directory: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    CommentMode: { Editing: 0, Preview: 1 },
    CommentThreadCollapsibleState: { Collapsed: 0, Expanded: 1 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    l10n: {
      t: (message: string, ...args: unknown[]) => message.replace(/\{(\d+)\}/g, (m, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : m)),
    },
    env: {
      language: 'en',
      clipboard: { text: '', async writeText(t: string) { this.text = t; } },
      get remoteName() { return rec.remoteName; },
      async openExternal(u: Uri) { rec.external.push(u.toString()); return true; },
    },
    commands: {
      registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
        if (rec.commands.has(id)) throw new Error(`command ${id} already registered`);
        rec.commands.set(id, fn);
        const d = track(`command:${id}`);
        return { dispose: () => { d.disposed = true; rec.commands.delete(id); } };
      },
      async executeCommand(id: string, ...args: unknown[]) {
        rec.executed.push({ id, args });
        if (id === 'setContext') { rec.context.set(String(args[0]), args[1]); return undefined; }
        if (id === 'vscode.diff') {
          const [left, right, title] = args as [Uri, Uri, string];
          const rightText = rec.contentProviders.get(right.scheme)?.provideTextDocumentContent(right) ?? '';
          rec.diffs.push({ left, right, title, rightText });
          const tab = { input: new TabInputTextDiff(left, right), label: title };
          rec.tabs.push(tab);
          tabsEmitter.fire({ opened: [tab], closed: [], changed: [] });
          return undefined;
        }
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
      onDidChangeActiveTextEditor: activeEditorEmitter.event,
      tabGroups: {
        get all() { return [{ tabs: [...rec.tabs] }]; },
        /** The last tab opened is the active one. */
        get activeTabGroup() { return { tabs: [...rec.tabs], activeTab: rec.tabs.at(-1) }; },
        async close(tabs: unknown[]) {
          const closed = rec.tabs.filter((t) => tabs.includes(t));
          rec.tabs = rec.tabs.filter((t) => !tabs.includes(t));
          if (closed.length) tabsEmitter.fire({ opened: [], closed, changed: [] });
          return true;
        },
        onDidChangeTabs: tabsEmitter.event,
        onDidChangeTabGroups: tabGroupsEmitter.event,
      },
      get visibleTextEditors() { return activeTextEditor ? [activeTextEditor] : []; },
      onDidChangeVisibleTextEditors: activeEditorEmitter.event,
      createTextEditorDecorationType: () => ({ key: 'decoration', dispose() {} }),
      showInformationMessage: show('info'),
      showWarningMessage: show('warning'),
      showErrorMessage: show('error'),
      async showQuickPick(items: Thenable<{ label: string; description?: string }[]> | { label: string; description?: string }[]) {
        const list = await items;
        rec.quickPickCalls.push({ labels: list.map((i) => i.label), descriptions: list.map((i) => i.description ?? '') });
        return list.find((i) => i.label === rec.pick);
      },
      createQuickPick() {
        const accept = new EventEmitter<void>();
        const hide = new EventEmitter<void>();
        const button = new EventEmitter<{ button: unknown; item: unknown }>();
        const changeValue = new EventEmitter<string>();
        type Item = FakeQuickPick['items'][number];
        const pick: FakeQuickPick & Record<string, unknown> = {
          items: [], activeItems: [], visible: false, disposed: false, selectedItems: [] as Item[], value: '',
          onDidAccept: accept.event, onDidHide: hide.event, onDidTriggerItemButton: button.event, onDidChangeValue: changeValue.event,
          type(value: string) { pick.value = value; changeValue.fire(value); },
          show() { takePlace(); pick.visible = true; },
          hide() { if (pick.visible) { pick.visible = false; hide.fire(); rec.quickInputClosed++; } },
          replaced() { if (pick.visible) { pick.visible = false; hide.fire(); } },
          dispose() { pick.disposed = true; },
          accept(label: string) { pick.selectedItems = pick.items.filter((i) => i.label === label); accept.fire(); },
          async triggerButton(label: string, tooltip: string) {
            const item = pick.items.find((i) => i.label === label);
            const b = item?.buttons?.find((x) => x.tooltip === tooltip);
            if (!item || !b) throw new Error(`no button "${tooltip}" on "${label}"`);
            await Promise.all([...(button as unknown as { listeners: Set<(e: unknown) => unknown> }).listeners].map((l) => l({ button: b, item })));
          },
        };
        rec.quickPicks.push(pick);
        shownInputs.push(pick as unknown as { visible: boolean; replaced(): void });
        return pick;
      },
      createInputBox() {
        const accept = new EventEmitter<void>();
        const hide = new EventEmitter<void>();
        const changeValue = new EventEmitter<string>();
        const box = {
          value: '', title: undefined as string | undefined, prompt: undefined as string | undefined,
          validationMessage: undefined as string | undefined, enabled: true, visible: false,
          onDidAccept: accept.event, onDidHide: hide.event, onDidChangeValue: changeValue.event,
          // The person types rec.inputAnswer and presses Enter; none: Escape.
          show() {
            takePlace();
            box.visible = true;
            const answer = rec.inputAnswer;
            queueMicrotask(() => {
              if (answer === undefined) return box.hide();
              box.value = answer;
              changeValue.fire(answer);
              accept.fire();
            });
          },
          hide() { if (box.visible) { box.visible = false; hide.fire(); rec.quickInputClosed++; } },
          replaced() { if (box.visible) { box.visible = false; hide.fire(); } },
          dispose() {},
        };
        shownInputs.push(box);
        return box;
      },
      async showInputBox(options: { validateInput?: (v: string) => string | undefined }) {
        // An input box takes the place of a visible quick pick, as in VS Code; it closes the quick input when done.
        takePlace();
        rec.quickInputClosed++;
        const value = rec.inputAnswer;
        if (value !== undefined && options.validateInput?.(value)) return undefined;
        return value;
      },
      async showSaveDialog() { return rec.saveAnswer; },
      async showOpenDialog(options: unknown) { rec.openDialogs.push(options); return rec.openDialogAnswer; },
      async withProgress(opts: { title: string }, task: (p: unknown, token: unknown) => Promise<unknown>) {
        const entry = { title: opts.title, messages: [] as string[], done: false };
        rec.progress.push(entry);
        const cancel = new EventEmitter<void>();
        try {
          return await task({ report: (v: { message?: string }) => { if (v.message) entry.messages.push(v.message); } },
            { isCancellationRequested: false, onCancellationRequested: cancel.event });
        } finally {
          entry.done = true;
        }
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
      async showTextDocument(target: unknown, options?: { selection?: Range }) {
        const uri = target && typeof target === 'object' && 'uri' in target ? (target as { uri: Uri }).uri : target;
        const entry: { uri: string; selection?: Range; selections?: Selection[] } = { uri: String(uri), ...(options?.selection ? { selection: options.selection } : {}) };
        rec.opened.push(entry);
        // The editor shown: what the extension sets on it (its selections) is recorded with the entry.
        return {
          document: target,
          get selections() { return entry.selections ?? []; },
          set selections(v: Selection[]) { entry.selections = v; },
        };
      },
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
          async update(key: string, value: unknown, target: unknown) {
            const full = `${section}.${key}`;
            rec.updates.push({ key: full, value, target });
            updateConfig({ [full]: value });
          },
        };
      },
      onDidChangeConfiguration: configEmitter.event,
      onDidGrantWorkspaceTrust: trustEmitter.event,
      onDidChangeTextDocument: documentChangeEmitter.event,
      onDidCloseTextDocument: documentCloseEmitter.event,
      textDocuments,
      workspaceFolders,
      getWorkspaceFolder: folderOf,
      asRelativePath(u: Uri) { const f = folderOf(u); return f ? relative(f.uri.path, u.path) : u.path; },
      async openTextDocument(o: unknown) {
        if (!(o instanceof Uri)) return o;
        const open = textDocuments.find((d) => d.uri.toString() === o.toString());
        if (open) return open;
        const doc = fakeDocument(o, readFileSync(o.fsPath, 'utf8'), languageOf(o.path));
        textDocuments.push(doc);
        return doc;
      },
      fs: {
        async stat(u: Uri) { const st = statSync(u.fsPath); return { size: st.size, type: st.isDirectory() ? 2 : 1 }; },
        async readFile(u: Uri) { return new Uint8Array(readFileSync(u.fsPath)); },
        async writeFile(uri: Uri, data: Uint8Array) { rec.written.set(uri.fsPath, new TextDecoder().decode(data)); },
      },
      registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) {
        if (rec.contentProviders.has(scheme)) throw new Error(`a content provider for ${scheme} is registered already`);
        rec.contentProviders.set(scheme, provider);
        const d = track(`content:${scheme}`);
        return { dispose: () => { d.disposed = true; rec.contentProviders.delete(scheme); } };
      },
      /** Applies each replacement to the open document of its URI (and fires onDidChangeTextDocument). */
      async applyEdit(edit: WorkspaceEdit) {
        rec.applied.push(edit);
        if (rec.applyEditFails) return false;
        for (const e of edit.edits) {
          const doc = textDocuments.find((d) => d.uri.toString() === e.uri.toString());
          if (!doc) return false;
          doc.edit(e.range, e.newText);
          documentChangeEmitter.fire({ document: doc, contentChanges: [{ range: e.range, text: e.newText }] });
        }
        return true;
      },
      async findFiles(include: RelativePattern, exclude: unknown) {
        rec.findFiles.push({ include: include.pattern, exclude });
        return rec.files.map((f) => Uri.file(f));
      },
    },
    languages: {
      async getLanguages() { return ['plaintext', 'python', 'typescript']; },
      /** A test replaces it to give documents problems (`#problems`). */
      getDiagnostics: (_uri: Uri): unknown[] => [],
      registerInlineCompletionItemProvider(selector: unknown, provider: Recorded['inlineProviders'][number]['provider']) {
        const entry = { selector, provider };
        rec.inlineProviders.push(entry);
        const d = track('inlineCompletions');
        return { dispose: () => { d.disposed = true; rec.inlineProviders.splice(rec.inlineProviders.indexOf(entry), 1); } };
      },
      /** Only `{ pattern }` selectors, matched against the document's path (10 when it matches, as VS Code scores a glob). */
      match(selector: { pattern?: string }, doc: { uri: Uri }) {
        return selector.pattern !== undefined && matchesGlob(doc.uri.path, selector.pattern) ? 10 : 0;
      },
    },
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
  /** Focuses another editor (fires onDidChangeActiveTextEditor); its document becomes the open one of its URI. */
  const setActiveEditor = (editor: { document: ReturnType<typeof fakeDocument>; selections?: Selection[] } | undefined) => {
    if (editor && !textDocuments.includes(editor.document)) {
      const same = textDocuments.findIndex((d) => d.uri.toString() === editor.document.uri.toString());
      if (same >= 0) textDocuments.splice(same, 1);
      textDocuments.push(editor.document);
    }
    // `selection` is the primary one, as in VS Code (the first of `selections`).
    activeTextEditor = editor ? { selections: [], selection: editor.selections?.[0], ...editor } : undefined;
    activeEditorEmitter.fire(activeTextEditor);
  };
  /** The user grants the workspace trust. */
  const grantTrust = () => { rec.trusted = true; trustEmitter.fire(); };
  /** The user types into an open document (fires onDidChangeTextDocument, as the editor would). */
  const typeInto = (doc: ReturnType<typeof fakeDocument>, at: Range, text: string) => {
    doc.edit(at, text);
    documentChangeEmitter.fire({ document: doc, contentChanges: [{ range: at, text }] });
  };
  /** The user opens a file's editor tab (fires onDidChangeTabs). */
  const openTab = (uri: Uri) => {
    const tab = { input: new TabInputText(uri), label: uri.path };
    rec.tabs.push(tab);
    tabsEmitter.fire({ opened: [tab], closed: [], changed: [] });
    return tab;
  };
  return { vscode, rec, updateConfig, setActiveEditor, grantTrust, typeInto, openTab };
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
