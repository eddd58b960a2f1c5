// Where `#problems`, `#changes` and `#symbol` get their text in VS Code: the diagnostics of a document, the built-in
// Git extension's diff of the working tree against HEAD, and a workspace symbol search whose pick is widened to the
// symbol's whole range by its document's own symbols. What the chips then say and how much of a diff may go is
// decided in src/core/chat/contextContent.ts.
import * as vscode from 'vscode';
import { fallbackNotice, fileSymbols } from './symbolFallback';
import type { FileDiff, Problem, ProblemSeverity } from '../../core/chat';

/** Read when called, not at load (the module is loaded before any of its features is used). */
function severity(s: vscode.DiagnosticSeverity): ProblemSeverity {
  switch (s) {
    case vscode.DiagnosticSeverity.Error: return 'error';
    case vscode.DiagnosticSeverity.Warning: return 'warning';
    case vscode.DiagnosticSeverity.Information: return 'info';
    default: return 'hint';
  }
}

/** The document's diagnostics, each with its line's text. */
export function problemsOf(document: vscode.TextDocument): Problem[] {
  return vscode.languages.getDiagnostics(document.uri).map((d): Problem => {
    const line = Math.min(d.range.start.line, document.lineCount - 1);
    const code = typeof d.code === 'object' ? String(d.code.value) : d.code !== undefined ? String(d.code) : '';
    const source = [d.source, code].filter(Boolean).join(' ');
    return { line: line + 1, severity: severity(d.severity), message: d.message, ...(source ? { source } : {}), code: document.lineAt(line).text };
  });
}

// The few parts of the Git extension's API (extensions/git/src/api/git.d.ts, version 1) used here.
interface GitChange { readonly uri: vscode.Uri; readonly status: number }
interface GitRepository {
  readonly rootUri: vscode.Uri;
  readonly state: { readonly workingTreeChanges: readonly GitChange[]; readonly indexChanges: readonly GitChange[] };
  /** `git diff <ref> -- <path>`: the working tree (staged or not) against `ref`. */
  diffWith(ref: string, path: string): Promise<string>;
}
interface GitApi {
  readonly state: 'uninitialized' | 'initialized';
  readonly onDidChangeState: vscode.Event<'uninitialized' | 'initialized'>;
  readonly repositories: readonly GitRepository[];
  getRepository(uri: vscode.Uri): GitRepository | null;
}
interface GitExtension { readonly enabled: boolean; getAPI(version: 1): GitApi }

/** git's status code of an untracked file (Status.UNTRACKED): not in HEAD, so no diff against it. */
const UNTRACKED = 7;
/** How long to wait for the Git extension to find the repositories of a window that just opened. */
const GIT_READY_MS = 5_000;

export type ChangesResult =
  | { ok: true; root: vscode.Uri; files: FileDiff[]; untracked: string[] }
  | { ok: false; reason: 'no-git' | 'no-repository' | 'no-changes' };

/** The working tree's changes against HEAD in the repository of `near` (else the first one), one diff per file. */
export async function workingTreeChanges(near: vscode.Uri | undefined): Promise<ChangesResult> {
  const api = await gitApi();
  if (!api) return { ok: false, reason: 'no-git' };
  const repository = (near && api.getRepository(near)) ?? api.repositories[0];
  if (!repository) return { ok: false, reason: 'no-repository' };
  const seen = new Set<string>();
  const files: FileDiff[] = [];
  const untracked: string[] = [];
  for (const change of [...repository.state.indexChanges, ...repository.state.workingTreeChanges]) {
    const key = change.uri.toString();
    if (seen.has(key)) continue;
    seen.add(key);
    const path = relative(repository.rootUri, change.uri);
    if (change.status === UNTRACKED) { untracked.push(path); continue; }
    files.push({ path, diff: await repository.diffWith('HEAD', change.uri.fsPath) });
  }
  files.sort((a, b) => a.path.localeCompare(b.path));
  if (!files.some((f) => f.diff.trim() !== '') && !untracked.length) return { ok: false, reason: 'no-changes' };
  return { ok: true, root: repository.rootUri, files, untracked };
}

async function gitApi(): Promise<GitApi | undefined> {
  const extension = vscode.extensions.getExtension<GitExtension>('vscode.git');
  if (!extension) return undefined;
  const exports = extension.isActive ? extension.exports : await extension.activate();
  if (!exports?.enabled) return undefined;
  const api = exports.getAPI(1);
  if (api.state !== 'initialized') {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { listener.dispose(); resolve(); }, GIT_READY_MS);
      const listener = api.onDidChangeState((s) => { if (s === 'initialized') { clearTimeout(timer); listener.dispose(); resolve(); } });
    });
  }
  return api;
}

function relative(root: vscode.Uri, uri: vscode.Uri): string {
  const base = root.path.endsWith('/') ? root.path : `${root.path}/`;
  return uri.path.startsWith(base) ? uri.path.slice(base.length) : uri.path;
}

export interface PickedSymbol {
  document: vscode.TextDocument;
  range: vscode.Range;
  name: string;
  kind: string;
}

/** How long typing in the symbol search waits before it asks the symbol providers. */
const SYMBOL_SEARCH_DEBOUNCE_MS = 150;
/** Symbols the search lists at most. */
const MAX_SYMBOL_ITEMS = 200;

/** A symbol of the list; the fallback's first row (why the workspace search was empty) has none. */
type SymbolItem = vscode.QuickPickItem & { symbol?: vscode.SymbolInformation };

/**
 * A workspace symbol chosen in a quick pick (searched as the user types), with its whole range. When the search has
 * nothing from the current file (no language extension answers it for the file's language), the file's own symbols
 * follow the results, under a row saying why (symbolFallback.ts).
 */
export async function pickSymbol(
  displayPath: (uri: vscode.Uri) => string,
  currentDocument: () => vscode.TextDocument | undefined = () => undefined,
): Promise<PickedSymbol | undefined> {
  const pick = vscode.window.createQuickPick<SymbolItem>();
  pick.title = vscode.l10n.t('Add Symbol to Chat');
  pick.placeholder = vscode.l10n.t('Search the workspace symbols by name');
  pick.matchOnDescription = true;
  const toItem = (symbol: vscode.SymbolInformation): SymbolItem => ({
    label: `$(symbol-${symbolKindName(symbol.kind).toLowerCase()}) ${symbol.name}`,
    description: [symbol.containerName, displayPath(symbol.location.uri)].filter(Boolean).join(' · '),
    symbol,
  });
  const current = currentDocument();
  let fallback: Promise<SymbolItem[]> | undefined;
  const fallbackItems = () => fallback ??= (async () => {
    const own = current ? await fileSymbols(current) : undefined;
    const notice: SymbolItem = { ...fallbackNotice(current ? displayPath(current.uri) : undefined, own?.source), alwaysShow: true };
    return [notice, ...(own?.symbols ?? []).slice(0, MAX_SYMBOL_ITEMS).map(toItem)];
  })();
  const fromCurrent = (found: readonly vscode.SymbolInformation[]) => current !== undefined && found.some((f) => f.location.uri.toString() === current.uri.toString());
  let timer: ReturnType<typeof setTimeout> | undefined;
  let generation = 0;
  const search = (query: string) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      const mine = ++generation;
      pick.busy = true;
      void Promise.resolve(vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', query))
        .then(async (found) => {
          if (mine !== generation) return;
          const results = (found ?? []).slice(0, MAX_SYMBOL_ITEMS).map(toItem);
          const items = fromCurrent(found ?? []) ? results : [...results, ...await fallbackItems()];
          if (mine === generation) pick.items = items;
        }, () => { if (mine === generation) pick.items = []; })
        .finally(() => { if (mine === generation) pick.busy = false; });
    }, SYMBOL_SEARCH_DEBOUNCE_MS);
  };
  const chosen = await new Promise<vscode.SymbolInformation | undefined>((resolve) => {
    pick.onDidChangeValue(search);
    pick.onDidAccept(() => {
      const symbol = pick.selectedItems[0]?.symbol;
      if (!symbol) return; // the fallback's notice row: nothing to attach, the list stays
      resolve(symbol);
      pick.hide();
    });
    pick.onDidHide(() => resolve(undefined));
    pick.show();
    search('');
  });
  if (timer) clearTimeout(timer);
  pick.dispose();
  if (!chosen) return undefined;
  const document = await vscode.workspace.openTextDocument(chosen.location.uri);
  const own = await documentSymbol(document, chosen);
  return { document, range: own?.range ?? chosen.location.range, name: own?.name ?? chosen.name, kind: symbolKindName(chosen.kind).toLowerCase() };
}

/**
 * The symbol as its document knows it: some providers report only its name's range in a workspace search, and name
 * it differently there (TypeScript's "circleArea()"), so the document's own symbols decide — the innermost one of
 * that name around the search's range; undefined when the document has none.
 */
async function documentSymbol(document: vscode.TextDocument, symbol: vscode.SymbolInformation): Promise<{ range: vscode.Range; name: string } | undefined> {
  const at = symbol.location.range;
  const wanted = symbol.name.replace(/\(.*\)$/, '');
  let found: { range: vscode.Range; name: string } | undefined;
  try {
    const own = await vscode.commands.executeCommand<Array<vscode.DocumentSymbol | vscode.SymbolInformation> | undefined>('vscode.executeDocumentSymbolProvider', document.uri);
    const walk = (items: ReadonlyArray<vscode.DocumentSymbol | vscode.SymbolInformation>) => {
      for (const s of items) {
        const range = 'location' in s ? s.location.range : s.range;
        const named = s.name === symbol.name || s.name.replace(/\(.*\)$/, '') === wanted;
        if (named && range.contains(at) && (!found || found.range.contains(range))) found = { range, name: s.name };
        if ('children' in s && s.children.length) walk(s.children);
      }
    };
    walk(own ?? []);
  } catch {
    // no document symbols: the search's range and name
  }
  return found;
}

function symbolKindName(kind: vscode.SymbolKind): string {
  return vscode.SymbolKind[kind] ?? 'Misc';
}
