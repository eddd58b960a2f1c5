// Builds the question for one selection: the localized instruction, the file's name
// and language, and the code in a fence that the code itself cannot close. Oversized selections are cut at a
// line boundary so the model's input budget is not spent on one selection; the caller tells the user.

export interface ExplainSelection {
  /** The selected text, verbatim. */
  text: string;
  /** VS Code language id of the document (`typescript`, `python`, ...). */
  languageId: string;
  /** Base name of the file (never the full path: the prompt is shown and stored in the chat history). */
  fileName: string;
}

export interface ExplainPrompt {
  prompt: string;
  /** True when the selection was cut to `maxChars`. */
  trimmed: boolean;
  originalChars: number;
  keptChars: number;
}

/** Produces the localized instruction line for one selection, e.g. "Explain this python code from a.py." */
export type InstructionTemplate = (languageId: string, fileName: string) => string;

export function buildExplainPrompt(sel: ExplainSelection, maxChars: number, instruction: InstructionTemplate): ExplainPrompt {
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError(`maxChars must be a positive integer, got ${maxChars}`);
  const code = sel.text.replace(/\r\n/g, '\n');
  const chars = Array.from(code);
  let kept = code;
  let trimmed = false;
  if (chars.length > maxChars) {
    trimmed = true;
    kept = chars.slice(0, maxChars).join('');
    // Prefer ending on a whole line when that keeps most of the budget.
    const lastNewline = kept.lastIndexOf('\n');
    if (lastNewline > kept.length / 2) kept = kept.slice(0, lastNewline);
  }
  const fence = fenceFor(kept);
  const lang = /^[A-Za-z0-9_+#.-]{1,40}$/.test(sel.languageId) ? sel.languageId : '';
  const prompt = `${instruction(sel.languageId, sel.fileName)}\n\n${fence}${lang}\n${kept}\n${fence}`;
  return { prompt, trimmed, originalChars: chars.length, keptChars: Array.from(kept).length };
}

/** A backtick fence longer than any backtick run inside the code (CommonMark closes on an equal or longer run). */
export function fenceFor(code: string): string {
  let longest = 0;
  for (const m of code.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** Selections worth explaining: non-blank ones, in document order, duplicates (same range) removed. */
export function usableSelections<T extends { text: string; start: number; end: number }>(selections: readonly T[]): T[] {
  const seen = new Set<string>();
  return [...selections]
    .filter((s) => s.text.trim().length > 0)
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .filter((s) => {
      const key = `${s.start}:${s.end}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}
