// The conversation history as the history list shows it: chats by the day they were last used (today, yesterday,
// older), then Explain conversations apart from them; and how long ago each was used, as a value and a unit for
// Intl.RelativeTimeFormat (which words it in the display language).
import type { ConversationSummary } from './conversation';

export type HistoryGroupKey = 'today' | 'yesterday' | 'older' | 'explain';

export interface HistoryGroup {
  key: HistoryGroupKey;
  /** Newest first. */
  conversations: ConversationSummary[];
}

/** Groups in display order, empty ones left out. Days are the local calendar days of `now`. */
export function groupHistory(conversations: readonly ConversationSummary[], now: number): HistoryGroup[] {
  const groups: Record<HistoryGroupKey, ConversationSummary[]> = { today: [], yesterday: [], older: [], explain: [] };
  const today = startOfDay(now);
  const yesterday = startOfDay(today - 1);
  for (const c of [...conversations].sort((a, b) => b.updatedAt - a.updatedAt)) {
    const key: HistoryGroupKey = c.kind === 'explain' ? 'explain' : c.updatedAt >= today ? 'today' : c.updatedAt >= yesterday ? 'yesterday' : 'older';
    groups[key].push(c);
  }
  return (['today', 'yesterday', 'older', 'explain'] as const)
    .filter((key) => groups[key].length > 0)
    .map((key) => ({ key, conversations: groups[key] }));
}

export type AgeUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

/**
 * How long before `now` the time `then` was, as a negative value in the largest fitting unit (format it with
 * `new Intl.RelativeTimeFormat(lang, { numeric: 'auto' })`: 0 seconds reads "now", -1 day "yesterday"). Days are
 * counted in calendar days, so "yesterday" here and the history's Yesterday group agree.
 */
export function relativeAge(then: number, now: number): { value: number; unit: AgeUnit } {
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 60) return { value: 0, unit: 'second' };
  if (seconds < 3600) return { value: -Math.floor(seconds / 60), unit: 'minute' };
  const days = Math.round((startOfDay(now) - startOfDay(then)) / 86_400_000);
  if (days === 0) return { value: -Math.floor(seconds / 3600), unit: 'hour' };
  if (days < 7) return { value: -days, unit: 'day' };
  if (days < 30) return { value: -Math.floor(days / 7), unit: 'week' };
  if (days < 365) return { value: -Math.floor(days / 30), unit: 'month' };
  return { value: -Math.floor(days / 365), unit: 'year' };
}

function startOfDay(t: number): number {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** Characters of message text shown on each side of a search match. */
const SNIPPET_CONTEXT = 40;

/**
 * Where `query` occurs in a conversation's messages (case-insensitive, whitespace collapsed): the first match with
 * some text around it ("…uses math.pi to compute…"), for the history search to show and match on. Undefined when no
 * message holds it, or for an empty query.
 */
export function messageSnippet(messages: readonly { content: string }[], query: string): string | undefined {
  const q = query.trim().replace(/\s+/g, ' ').toLocaleLowerCase();
  if (!q) return undefined;
  for (const m of messages) {
    const text = m.content.replace(/\s+/g, ' ').trim();
    const at = text.toLocaleLowerCase().indexOf(q);
    if (at < 0) continue;
    const start = Math.max(0, at - SNIPPET_CONTEXT);
    const end = Math.min(text.length, at + q.length + SNIPPET_CONTEXT);
    return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
  }
  return undefined;
}
