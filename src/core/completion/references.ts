// Cross-file context (CodeGeeX4's ###REFERENCE: blocks): the files edited most recently first, then the other open
// files, each cut around where the user worked, all within one character budget so the current file's own text
// keeps most of the prompt. The server drops references first when its exact token budget is short.
import { keepHead } from './context';

export interface ReferenceCandidate {
  path: string;
  text: string;
  /** When the user last edited it (ms); absent for a file that is only open. */
  editedAt?: number;
  /** Where the last edit was (UTF-16 offset): the excerpt is taken around it. */
  focus?: number;
}

export interface Reference {
  path: string;
  text: string;
}

export interface ReferenceLimits {
  /** All references together, characters. */
  totalChars: number;
  /** One reference at most, characters. */
  perFileChars: number;
  /** How many files at most. */
  maxFiles: number;
}

export const DEFAULT_REFERENCE_LIMITS: ReferenceLimits = { totalChars: 2_400, perFileChars: 1_200, maxFiles: 3 };

export function pickReferences(candidates: readonly ReferenceCandidate[], currentPath: string, limits: ReferenceLimits = DEFAULT_REFERENCE_LIMITS): Reference[] {
  const seen = new Set<string>([currentPath]);
  // Edited files, newest first, then open ones in the order given (the editor's order: most recently active first).
  const ordered = candidates.map((c, i) => ({ c, i })).sort((a, b) => {
    const ea = a.c.editedAt ?? -Infinity;
    const eb = b.c.editedAt ?? -Infinity;
    return ea !== eb ? eb - ea : a.i - b.i;
  });
  const picked: Reference[] = [];
  let left = limits.totalChars;
  for (const { c } of ordered) {
    if (picked.length >= limits.maxFiles || left <= 0) break;
    if (seen.has(c.path) || c.text.trim() === '') continue;
    seen.add(c.path);
    const text = excerpt(c.text.replace(/\r\n?/g, '\n'), c.focus, Math.min(limits.perFileChars, left));
    if (text.trim() === '') continue;
    picked.push({ path: c.path, text });
    left -= text.length;
  }
  return picked;
}

/** Up to `max` characters of whole lines, starting a third of the window above `focus` (the top without one). */
export function excerpt(text: string, focus: number | undefined, max: number): string {
  if (text.length <= max) return text;
  let start = focus === undefined ? 0 : Math.max(0, Math.min(focus - Math.floor(max / 3), text.length - max));
  if (start > 0) {
    const nl = text.indexOf('\n', start - 1);
    start = nl < 0 ? start : nl + 1;
  }
  return keepHead(text.slice(start), max);
}
