// `FILE:LINE:COL` of `triton-chatglm complete` (1-based, as compilers print them; COL counts characters, so a
// Chinese character or an emoji is one column) and the language a file name says.

export interface CursorSpec {
  file: string;
  line: number;
  column: number;
}

/** Parses `FILE:LINE:COL`; the file may itself hold colons (C:\...). Undefined when the form is wrong. */
export function parseCursorSpec(spec: string): CursorSpec | undefined {
  const m = /^(.+):(\d{1,9}):(\d{1,9})$/.exec(spec);
  if (!m) return undefined;
  const line = Number(m[2]);
  const column = Number(m[3]);
  return line >= 1 && column >= 1 ? { file: m[1]!, line, column } : undefined;
}

/**
 * The UTF-16 offset of LINE:COL in `text` (LF or CRLF). COL may be one past the line's last character (its end);
 * anything beyond the file or the line is an error naming what is there.
 */
export function cursorOffset(text: string, line: number, column: number): number {
  const lines = text.split('\n');
  if (line > lines.length) throw new RangeError(`line ${line} is past the end of the file (${lines.length} lines)`);
  let offset = 0;
  for (let i = 0; i < line - 1; i++) offset += lines[i]!.length + 1;
  const content = lines[line - 1]!.replace(/\r$/, '');
  const chars = [...content];
  if (column > chars.length + 1) throw new RangeError(`column ${column} is past the end of line ${line} (${chars.length} characters)`);
  return offset + chars.slice(0, column - 1).join('').length;
}

const LANGUAGES: Record<string, string> = {
  py: 'python', pyi: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascriptreact',
  ts: 'typescript', mts: 'typescript', cts: 'typescript', tsx: 'typescriptreact', go: 'go', rs: 'rust', java: 'java',
  kt: 'kotlin', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp', cs: 'csharp', rb: 'ruby', php: 'php',
  swift: 'swift', scala: 'scala', lua: 'lua', sh: 'shellscript', bash: 'shellscript', sql: 'sql', r: 'r',
  html: 'html', css: 'css', scss: 'scss', json: 'json', yaml: 'yaml', yml: 'yaml', toml: 'toml', md: 'markdown', vue: 'vue',
};

/** The editor's language id for a file name (VS Code's ids), `plaintext` when unknown. */
export function languageIdForPath(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && LANGUAGES[ext]) ?? 'plaintext';
}
