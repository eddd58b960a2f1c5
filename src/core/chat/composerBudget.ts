// The host's half of the composer's token meter: what the next question of a conversation carries besides the
// chips and the draft (its system prompt and the history turns it may keep), and what each command's template adds.
// The panel adds the chips and the draft as they change (src/core/composer/meter.ts does the sum).
import { DEFAULT_MODEL_SETTINGS } from '../repository';
import type { Conversation } from './conversation';
import { historyTurnCosts } from './requestBuilder';
import { COMMAND_TEMPLATES, type TemplateCommand } from '../composer/slashCommands';
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS } from '../composer/tokenEstimate';

export interface ComposerBudget {
  systemTokens: number;
  historyTurns: number[];
  maxInputTokens: number;
  templateTokens: Record<TemplateCommand, number>;
}

/**
 * `conversation`: the one the next question goes to (undefined: a new chat, which starts with `newChatSystemPrompt`).
 * `translate`: the templates as the model will receive them.
 */
export function composerBudget(
  conversation: Pick<Conversation, 'messages' | 'systemPrompt'> | undefined,
  settings: { historyTurns: number; newChatSystemPrompt: string },
  translate: (english: string) => string = (s) => s,
): ComposerBudget {
  const systemPrompt = conversation ? conversation.systemPrompt : settings.newChatSystemPrompt || undefined;
  const templateTokens = {} as Record<TemplateCommand, number>;
  for (const [command, template] of Object.entries(COMMAND_TEMPLATES) as Array<[TemplateCommand, string]>) {
    templateTokens[command] = estimateTokens(translate(template));
  }
  return {
    systemTokens: systemPrompt ? estimateTokens(systemPrompt) + MESSAGE_OVERHEAD_TOKENS : 0,
    historyTurns: historyTurnCosts(conversation, settings.historyTurns),
    maxInputTokens: DEFAULT_MODEL_SETTINGS.maxInputTokens,
    templateTokens,
  };
}
