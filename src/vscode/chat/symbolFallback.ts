// `#symbol` when the workspace symbol search has nothing from the current file (it is answered only by language
// extensions, and none may run for the file's language): the file's symbols follow the results, from its document
// symbol provider where one runs, else from the word scan of src/core/chat/definitionScan.ts. The picker says
// which, and why.
import * as vscode from 'vscode';
import { scanDefinitions, type ScannedKind } from '../../core/chat/definitionScan';

export interface FileSymbols {
  /** Where they came from: the document's own symbol provider, or the word scan. */
  source: 'document' | 'scan';
  symbols: vscode.SymbolInformation[];
}

/** Read when called, not at load (the module is loaded before any of its features is used). */
function scannedKind(kind: ScannedKind): vscode.SymbolKind {
  switch (kind) {
    case 'function': return vscode.SymbolKind.Function;
    case 'class': return vscode.SymbolKind.Class;
    case 'variable': return vscode.SymbolKind.Variable;
    case 'interface': return vscode.SymbolKind.Interface;
    case 'struct': return vscode.SymbolKind.Struct;
    case 'enum': return vscode.SymbolKind.Enum;
  }
}

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
      s.name, scannedKind(s.kind), '', new vscode.Location(document.uri, new vscode.Range(new vscode.Position(s.startLine, 0), lastLine(s.endLine))),
    )),
  };
}

/** The row above the fallback: why the workspace search had nothing from the current file, and what follows. */
export function fallbackNotice(fileName: string | undefined, source: FileSymbols['source'] | undefined): { label: string; detail: string } {
  if (!fileName) {
    return {
      label: `$(info) ${vscode.l10n.t('No workspace symbols found')}`,
      detail: `${vscode.l10n.t('Language extensions answer this search, and none found any.')} ${vscode.l10n.t('Open a file to pick from its definitions.')}`,
    };
  }
  return {
    label: `$(info) ${vscode.l10n.t('No symbols of {0} in the workspace search', fileName)}`,
    detail: `${vscode.l10n.t('Language extensions answer this search, and none gave symbols for this file.')} ${source === 'document'
      ? vscode.l10n.t('Listed below: the symbols of {0}.', fileName)
      : vscode.l10n.t('Listed below: the definitions a word scan finds in {0}.', fileName)}`,
  };
}
