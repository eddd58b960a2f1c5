// The composer's token meter: what the next request would come to, from the figures the host knows (system
// prompt, the kept history's turns, the chips) and the draft the panel holds. The same arithmetic as the request
// builder: the fixed part (framing, system prompt, the question with its attachments) always goes; older turns go
// newest first while they fit, and are dropped whole, oldest first.
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS, PROMPT_OVERHEAD_TOKENS } from './tokenEstimate';
import { parseSlashCommand, type TemplateCommand } from './slashCommands';

/** From 80 % of the budget the meter warns; over it, the request cannot go as it is (Send asks what to drop). */
export const METER_WARNING_RATIO = 0.8;

export type MeterLevel = 'ok' | 'warning' | 'over';

export interface MeterInput {
  /** The system prompt's tokens with its message overhead (0 without one). */
  systemTokens: number;
  /** Each complete turn the history may keep (after the turn limit), oldest first: its question and answer. */
  historyTurns: readonly number[];
  /** The chips going with the question (each block plus its separating newlines). */
  chipTokens: number;
  /** The question as the model will receive it (a command's template included). */
  draftTokens: number;
  maxInputTokens: number;
}

export interface MeterReading {
  total: number;
  max: number;
  /** Tokens of the history turns that fit, and how many of them. */
  historyTokens: number;
  turnsKept: number;
  level: MeterLevel;
}

export function readMeter(i: MeterInput): MeterReading {
  const fixed = PROMPT_OVERHEAD_TOKENS + i.systemTokens + i.chipTokens + i.draftTokens + MESSAGE_OVERHEAD_TOKENS;
  let historyTokens = 0;
  let turnsKept = 0;
  for (let t = i.historyTurns.length - 1; t >= 0; t -= 1) {
    const cost = i.historyTurns[t]!;
    if (fixed + historyTokens + cost > i.maxInputTokens) break;
    historyTokens += cost;
    turnsKept += 1;
  }
  const total = fixed + historyTokens;
  return { total, max: i.maxInputTokens, historyTokens, turnsKept, level: meterLevel(total, i.maxInputTokens) };
}

export function meterLevel(total: number, max: number): MeterLevel {
  if (total > max) return 'over';
  return total >= max * METER_WARNING_RATIO ? 'warning' : 'ok';
}

/**
 * The tokens of a draft as the model will receive it: a template command's prompt (its tokens from the host, which
 * knows the translation) and a blank line before the rest, or the text itself. `/new` counts only its rest.
 */
export function draftTokens(draft: string, templateTokens: Readonly<Record<TemplateCommand, number>>): number {
  const parsed = parseSlashCommand(draft);
  if (!parsed) return estimateTokens(draft);
  if (parsed.command === 'new') return estimateTokens(parsed.rest);
  return templateTokens[parsed.command] + (parsed.rest ? 2 + estimateTokens(parsed.rest) : 0);
}
