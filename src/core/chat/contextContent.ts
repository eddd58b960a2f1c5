// The text of the `#problems` and `#changes` chips, written here so the model always reads the same layout
// (README "Editor context in chat"):
//
//   line 7: error: "math" is not defined (Pylance)
//       return math.pi * radius ** 2
//   line 12: warning: unused variable "x" (ruff F841)
//       x = 1
//
// and git's unified diff of the working tree against HEAD, file after file, within a token budget: a file's diff
// goes whole or not at all (the first one is cut at a line if it alone is over), and what is left out is named
// on a last line, so the model knows the list is incomplete.
import { estimateTokens } from '../composer/tokenEstimate';

export type ProblemSeverity = 'error' | 'warning' | 'info' | 'hint';

export interface Problem {
  /** 1-based. */
  line: number;
  severity: ProblemSeverity;
  message: string;
  /** The tool and its code ("Pylance", "ruff F841"). */
  source?: string;
  /** The text of the line it is on. */
  code?: string;
}

/** Problems a chip lists at most (the most severe first). */
export const MAX_PROBLEMS = 50;
/** What `#changes` may spend of the model's input budget (6,144 tokens for ChatGLM3-6B): a third. */
export const CHANGES_TOKEN_BUDGET = 2_048;

/** Files the closing line names (it must fit the room kept for it). */
const MAX_OMITTED_NAMED = 8;

const SEVERITY_ORDER: Record<ProblemSeverity, number> = { error: 0, warning: 1, info: 2, hint: 3 };

/** The problems as the chip sends them: most severe first, then by line; each with its line's code. */
export function formatProblems(problems: readonly Problem[]): string {
  const sorted = [...problems].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.line - b.line);
  const kept = sorted.slice(0, MAX_PROBLEMS).sort((a, b) => a.line - b.line || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  const lines: string[] = [];
  for (const p of kept) {
    const message = p.message.replace(/\s*\r?\n\s*/g, ' ').trim();
    lines.push(`line ${p.line}: ${p.severity}: ${message}${p.source ? ` (${p.source})` : ''}`);
    if (p.code !== undefined && p.code.trim() !== '') lines.push(`    ${p.code.trim()}`);
  }
  if (sorted.length > kept.length) lines.push(`(${sorted.length - kept.length} more problems left out)`);
  return lines.join('\n');
}

export interface FileDiff {
  /** Relative to the repository, forward slashes. */
  path: string;
  /** git's unified diff of that file. */
  diff: string;
}

export interface BudgetedDiff {
  content: string;
  /** Paths whose diff went in (whole, or cut for the first one). */
  included: string[];
  /** Paths left out to stay within the budget. */
  omitted: string[];
}

/** The diffs of `files`, in order, within `maxTokens` (estimated). */
export function budgetDiff(files: readonly FileDiff[], maxTokens: number = CHANGES_TOKEN_BUDGET): BudgetedDiff {
  const parts: string[] = [];
  const included: string[] = [];
  const omitted: string[] = [];
  // Room for the closing line naming what was left out.
  const reserve = 64;
  let used = 0;
  for (const f of files) {
    const diff = f.diff.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
    if (diff === '') continue;
    const cost = estimateTokens(diff) + 1;
    if (used + cost <= maxTokens - reserve) {
      parts.push(diff);
      included.push(f.path);
      used += cost;
    } else if (!included.length) {
      const cut = cutToTokens(diff, maxTokens - reserve);
      parts.push(`${cut}\n… (the rest of this file's diff is left out)`);
      included.push(f.path);
      used = maxTokens - reserve;
    } else {
      omitted.push(f.path);
    }
  }
  if (omitted.length) {
    const named = omitted.slice(0, MAX_OMITTED_NAMED).join(', ') + (omitted.length > MAX_OMITTED_NAMED ? ', …' : '');
    parts.push(`(${omitted.length} more changed files left out to fit the budget: ${named})`);
  }
  return { content: parts.join('\n'), included, omitted };
}

/** The longest run of whole lines from the start of `text` within `maxTokens`. */
function cutToTokens(text: string, maxTokens: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let used = 0;
  for (const line of lines) {
    const cost = estimateTokens(line) + 1;
    if (used + cost > maxTokens) break;
    out.push(line);
    used += cost;
  }
  return out.join('\n');
}
