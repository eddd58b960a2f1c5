// The `/` commands of the chat input: a command at the very start of a question turns it into one of our prompt
// templates (README "Commands" lists them word for word). The transcript keeps what the user typed ("/explain" and
// the chips); the model receives the template, then the rest of what was typed. `/new` is no template: it starts a
// new chat, with the rest (if any) as its first question.
//
// The templates are English here; the adapters pass them through their translator (the zh-cn bundle has them), so
// the model is asked in the user's language. The template is fixed when the question is sent (stored with it).

export const SLASH_COMMANDS = ['explain', 'fix', 'tests', 'doc', 'new'] as const;
export type SlashCommand = (typeof SLASH_COMMANDS)[number];

/** The commands that are templates (all but /new). */
export type TemplateCommand = Exclude<SlashCommand, 'new'>;

export const COMMAND_TEMPLATES: Record<TemplateCommand, string> = {
  explain: 'Explain the attached code: what it does, step by step, its inputs and outputs, and anything surprising in it.',
  fix: 'Fix the problems listed in the attached problems report. Show the corrected code in one fenced code block, then say in one sentence per problem what you changed.',
  tests: 'Write unit tests for the attached code, with the test framework the project already uses (or the language\'s standard one). Cover the usual cases, the edge cases and the errors.',
  doc: 'Write documentation comments for the attached code in the usual style of its language (docstrings, JSDoc, …). Return the code with the comments added, in one fenced code block.',
};

export interface ParsedCommand {
  command: SlashCommand;
  /** What follows the command, trimmed ('' for none). */
  rest: string;
}

/** A command at the start of `text` ("/fix", "/explain  why 3?"), or undefined (an unknown "/word" is plain text). */
export function parseSlashCommand(text: string): ParsedCommand | undefined {
  const m = /^\/([a-z]+)(?=\s|$)([\s\S]*)$/.exec(text.trimStart());
  if (!m || !(SLASH_COMMANDS as readonly string[]).includes(m[1]!)) return undefined;
  return { command: m[1] as SlashCommand, rest: m[2]!.trim() };
}

/** The commands whose name starts with `prefix` (what the list offers after "/"). */
export function matchingCommands(prefix: string): SlashCommand[] {
  return SLASH_COMMANDS.filter((c) => c.startsWith(prefix.toLowerCase()));
}

/**
 * What the model receives for a template command: the (translated) template, then a blank line and the user's own
 * words when there are any.
 */
export function commandPrompt(command: TemplateCommand, rest: string, translate: (english: string) => string = (s) => s): string {
  const template = translate(COMMAND_TEMPLATES[command]);
  return rest ? `${template}\n\n${rest}` : template;
}
