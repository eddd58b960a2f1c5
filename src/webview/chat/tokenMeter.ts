// The token meter under the chat input: "1,085 / 6,144 tokens", the estimated size of the next request against the model's
// input budget — system prompt, the history that would be kept, the chips and the draft — refreshed as the user
// types. From 80 % it takes the theme's warning colour, over the budget its error colour (Send still asks what to
// leave out). The tooltip breaks the figure down; a change of level is announced once, not every keystroke. Hidden
// until it means something: the host's budget known and the model ready (not during setup or while stopped).
import { draftTokens, readMeter, type MeterLevel } from '../../core/composer/meter';
import { format, type AttachmentsMessage, type BudgetMessage } from '../../protocol';
import { el } from '../shared/dom';
import type { ChatContext } from './chatContext';

/** A figure in the page's language ("1,085"). */
const figure = (n: number) => n.toLocaleString(document.documentElement.lang || undefined);

export class TokenMeter {
  readonly element: HTMLElement;
  private readonly live: HTMLElement;
  private budget: BudgetMessage | undefined;
  private chips = 0;
  private level: MeterLevel = 'ok';
  private modelReady = false;

  constructor(private readonly ctx: ChatContext, private readonly draft: () => string) {
    this.live = el('span', { class: 'visually-hidden meter-announcer', 'aria-live': 'polite' });
    this.element = el('div', { class: 'token-meter', role: 'meter', 'aria-valuemin': '0', 'data-level': 'ok' });
    this.element.hidden = true;
  }

  /** The region that announces a change of level (placed next to the meter by the composer). */
  get announcer(): HTMLElement {
    return this.live;
  }

  setBudget(budget: BudgetMessage): void {
    this.budget = budget;
    this.update();
  }

  /** Whether the model is ready: before that no figure is shown (its budget may still change with setup). */
  setModelReady(ready: boolean): void {
    if (ready === this.modelReady) return;
    this.modelReady = ready;
    this.update();
  }

  /** The chips going with the next question: the attached ones, and the current file when it goes by itself. */
  setChips(message: AttachmentsMessage): void {
    const active = message.activeFile;
    this.chips = message.items.reduce((sum, v) => sum + (v.tokens ?? 0), 0)
      + (active && active.enabled && !active.suggested && !active.refusal ? active.tokens ?? 0 : 0);
    this.update();
  }

  update(): void {
    const budget = this.budget;
    if (!budget || !this.modelReady) { this.element.hidden = true; return; }
    const text = this.draft();
    const question = draftTokens(text, budget.templateTokens);
    // `/new` sends its question to a new chat: no history, and the system prompt of a new chat is not known here.
    const fresh = /^\s*\/new(\s|$)/.test(text);
    const reading = readMeter({
      systemTokens: budget.systemTokens,
      historyTurns: fresh ? [] : budget.historyTurns,
      chipTokens: this.chips,
      draftTokens: question,
      maxInputTokens: budget.maxInputTokens,
    });
    const strings = this.ctx.strings;
    this.element.hidden = false;
    this.element.textContent = format(strings.meterText, figure(reading.total), figure(reading.max));
    this.element.setAttribute('data-level', reading.level);
    const label = format(strings.meterLabel, figure(reading.total), figure(reading.max));
    const levelText = reading.level === 'over' ? strings.meterOver : reading.level === 'warning' ? strings.meterWarning : '';
    this.element.setAttribute('aria-valuemax', String(reading.max));
    this.element.setAttribute('aria-valuenow', String(Math.min(reading.total, reading.max)));
    this.element.setAttribute('aria-valuetext', levelText ? `${label}. ${levelText}` : label);
    this.element.setAttribute('aria-label', strings.meterName);
    this.element.title = [
      label,
      format(strings.meterDetail, figure(budget.systemTokens), figure(reading.historyTokens), reading.turnsKept,
        figure(this.chips), figure(question), figure(reading.max)),
      ...(levelText ? [levelText] : []),
    ].join('\n');
    if (reading.level !== this.level) {
      this.level = reading.level;
      this.live.textContent = levelText;
    }
  }
}
