// `#symbol` without a language server: VS Code's workspace symbol search is answered only by language extensions,
// and where none runs (a Python file without the Python extension, a plain-text language) the search is empty. Then
// the picker falls back to the current file: its document symbols when a provider gives them, else this word scan
// of definition keywords (def, class, function, fn, func, const … =, interface, type, struct, enum, trait). A scanned
// definition spans its block: the lines indented deeper than it (and a closing bracket at its own indentation).
// A heuristic by design: it finds what a reader would call the file's definitions, never runs anything.

export type ScannedKind = 'function' | 'class' | 'variable' | 'interface' | 'struct' | 'enum';

export interface ScannedSymbol {
  name: string;
  kind: ScannedKind;
  /** 0-based lines, both included. */
  startLine: number;
  endLine: number;
}

/** Definitions a scan lists at most (a generated file can have thousands). */
export const MAX_SCANNED_SYMBOLS = 500;

const NAME = '([A-Za-z_$][\\w$]*)';
const PATTERNS: readonly { re: RegExp; kind: ScannedKind | ((line: string) => ScannedKind) }[] = [
  { re: new RegExp(`^(?:async\\s+)?def\\s+${NAME}`), kind: 'function' },
  { re: new RegExp(`^(?:export\\s+)?(?:default\\s+)?(?:abstract\\s+)?(?:(?:public|private|internal|final|sealed|data|static)\\s+)*class\\s+${NAME}`), kind: 'class' },
  { re: new RegExp(`^(?:export\\s+)?(?:default\\s+)?(?:async\\s+)?function\\s*\\*?\\s*${NAME}`), kind: 'function' },
  { re: new RegExp(`^(?:pub(?:\\([\\w:]+\\))?\\s+)?(?:const\\s+)?(?:async\\s+)?(?:unsafe\\s+)?fn\\s+${NAME}`), kind: 'function' },
  { re: new RegExp(`^func\\s+(?:\\([^)]*\\)\\s*)?${NAME}`), kind: 'function' },
  { re: new RegExp(`^(?:export\\s+)?(?:declare\\s+)?interface\\s+${NAME}`), kind: 'interface' },
  { re: new RegExp(`^(?:export\\s+)?(?:declare\\s+)?type\\s+${NAME}\\s*(?:<[^=]*>)?\\s*=`), kind: 'interface' },
  { re: new RegExp(`^(?:pub(?:\\([\\w:]+\\))?\\s+)?(?:struct|trait)\\s+${NAME}`), kind: 'struct' },
  { re: new RegExp(`^(?:export\\s+)?(?:pub(?:\\([\\w:]+\\))?\\s+)?(?:const\\s+)?enum\\s+${NAME}`), kind: 'enum' },
  {
    re: new RegExp(`^(?:export\\s+)?(?:const|let|var)\\s+${NAME}\\s*(?::[^=]+)?=`),
    kind: (line) => (/=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)/.test(line) ? 'function' : 'variable'),
  },
];

const indentOf = (line: string): number => line.length - line.trimStart().length;
const CLOSING = /^[)}\]]/;

/** The definitions of `text` in order, each with the lines of its block. */
export function scanDefinitions(text: string): ScannedSymbol[] {
  const lines = text.split(/\r?\n/);
  const out: ScannedSymbol[] = [];
  for (let i = 0; i < lines.length && out.length < MAX_SCANNED_SYMBOLS; i += 1) {
    const line = lines[i]!;
    const body = line.trimStart();
    for (const { re, kind } of PATTERNS) {
      const m = re.exec(body);
      if (!m) continue;
      out.push({ name: m[1]!, kind: typeof kind === 'function' ? kind(body) : kind, startLine: i, endLine: blockEnd(lines, i) });
      break;
    }
  }
  return out;
}

/** The last line of the block that starts at `start`: deeper-indented lines follow it, blank ones inside included. */
function blockEnd(lines: readonly string[], start: number): number {
  const own = indentOf(lines[start]!);
  let end = start;
  for (let i = start + 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const indent = indentOf(line);
    if (indent > own) { end = i; continue; }
    if (indent === own && CLOSING.test(line.trimStart())) end = i;
    break;
  }
  return end;
}
