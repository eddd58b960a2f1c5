// LINE or BLOCK (CodeGeeX4's ###MODE): a cursor on an empty line right after a block opener asks for the block's
// body; anywhere else (end of a non-empty line, inside a line, an ordinary empty line) one line is enough.
export type CompletionMode = 'line' | 'block';

/** Line ends that open a block: Python's `:`, braces and brackets, arrows, and the keyword openers of Ruby/Lua/shell. */
const BLOCK_OPENER = /(?:[:{[(]|=>|->|\b(?:do|then|begin|else))\s*(?:(?:#|\/\/).*)?$/;

export function chooseMode(linePrefix: string, lineSuffix: string, previousLine: string): CompletionMode {
  const emptyLine = linePrefix.trim() === '' && lineSuffix.trim() === '';
  return emptyLine && BLOCK_OPENER.test(previousLine.trimEnd()) ? 'block' : 'line';
}

/**
 * Whether to ask at all: not in the middle of a word (the next character is a letter, digit or `_`), where a
 * suggestion would split the word. Only closers, quotes and separators may follow the cursor on its line.
 */
export function worthCompleting(lineSuffix: string): boolean {
  return /^[\s)\]}'"`;,:.]*$/u.test(lineSuffix);
}

/** Tokens the server may generate per mode (settings `completions.maxLineTokens` / `maxBlockTokens` override). */
export const MAX_NEW_TOKENS: Record<CompletionMode, number> = { line: 64, block: 256 };
