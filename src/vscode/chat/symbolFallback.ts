// `#symbol` when the workspace symbol search finds nothing (it is answered only by language extensions): the
// current file's symbols instead, from its document symbol provider where one runs, else from the word scan of
// src/core/chat/definitionScan.ts. The picker says which, and why the workspace search was empty.
import * as vscode from 'vscode';
import { scanDefinitions, type ScannedKind } from '../../core/chat/definitionScan';

export interface FileSymbols {
  /** Where they came from: the document's own symbol provider, or the word scan. */
  source: 'document' | 'scan';
  symbols: vscode.SymbolInformation[];
}

const SCANNED_KINDS: Record<ScannedKind, vscode.SymbolKind> = {
  function: vscode.SymbolKind.Function,
  class: vscode.SymbolKind.Class,
  variable: vscode.SymbolKind.Variable,
  interface: vscode.SymbolKind.Interface,
  struct: vscode.SymbolKind.Struct,
  enum: vscode.SymbolKind.Enum,
};

/** The symbols of `document`, innermost ones after their container, as workspace search results would be. */
export async function fileSymbols(document: vscode.TextDocument): Promise<FileSymbols> {
  const own = await Promise.resolve(vscode.commands.executeCommand<Array<vscode.DocumentSymbol | vscode.SymbolInformation> | undefined>(
    'vscode.executeDocumentSymbolProvider', document.uri,
  )).catch(() => undefined);
  const symbols: vscode.SymbolInformation[] = [];
  const walk = (items: ReadonlyArray<vscode.DocumentSymbol | vscode.SymbolInformation>, container: string) => {
    for (const s of items) {
      if ('location' in s) {
        symbols.push(s);
        continue;
      }
      symbols.push(new vscode.SymbolInformation(s.name, s.kind, container, new vscode.Location(document.uri, s.range)));
      if (s.children.length) walk(s.children, s.name);
    }
  };
  walk(own ?? [], '');
  if (symbols.length > 0) return { source: 'document', symbols };
  const lastLine = (line: number) => document.lineAt(Math.min(line, document.lineCount - 1)).range.end;
  return {
    source: 'scan',
    symbols: scanDefinitions(document.getText()).map((s) => new vscode.SymbolInformation(
      s.name, SCANNED_KINDS[s.kind], '', new vscode.Location(document.uri, new vscode.Range(new vscode.Position(s.startLine, 0), lastLine(s.endLine))),
    )),
  };
}

/** The picker's first row when it shows the fallback: why the workspace search was empty, and what is listed. */
export function fallbackNotice(fileName: string | undefined, source: FileSymbols['source'] | undefined): { label: string; detail: string } {
  const label = `$(info) ${vscode.l10n.t('No workspace symbols found')}`;
  const why = vscode.l10n.t('Language extensions answer this search, and none found any.');
  if (!fileName) return { label, detail: `${why} ${vscode.l10n.t('Open a file to pick from its definitions.')}` };
  return {
    label,
    detail: `${why} ${source === 'document'
      ? vscode.l10n.t('Listed instead: the symbols of {0}.', fileName)
      : vscode.l10n.t('Listed instead: the definitions a word scan finds in {0}.', fileName)}`,
  };
}
