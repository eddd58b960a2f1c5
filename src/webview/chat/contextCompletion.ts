// The completion list of the chat input: `#` (at the start of a word) offers what can be attached — #file,
// #selection, #problems, #changes, #symbol — and `/` at the very start of the question offers the commands. The
// list filters as the user types; ↑/↓ choose (wrapping), Enter or Tab accept, Escape closes it (and keeps it
// closed for that `#`/`/`); the mouse chooses too. Accessible as a combobox: the input owns a listbox whose active
// option is aria-activedescendant, and a polite live region says how many suggestions there are.
// Accepting `#x` takes the typed `#x` out of the input and asks the host to attach it (a chip appears); accepting
// `/x` puts "/x " in its place (and `/fix` also attaches the current file's problems, so the meter counts them).
import { type ContextSource, contextSourceSchema, type SlashCommandView, slashCommandSchema, type StringKey } from '../../protocol';
import { el } from '../shared/dom';
import type { ChatContext } from './chatContext';

export type Trigger = { kind: 'context' | 'command'; start: number; query: string };

/** What the text before the caret asks for: `#word` after a space or at the start; `/word` as the whole text so far. */
export function findTrigger(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  const command = /^(\s*)\/([a-z]*)$/i.exec(before);
  if (command) return { kind: 'command', start: command[1]!.length, query: command[2]!.toLowerCase() };
  const context = /(^|\s)#([a-z]*)$/i.exec(before);
  if (context) return { kind: 'context', start: before.length - context[2]!.length - 1, query: context[2]!.toLowerCase() };
  return undefined;
}

interface Item {
  kind: Trigger['kind'];
  value: ContextSource | SlashCommandView;
}

const CONTEXT_ITEMS: Item[] = contextSourceSchema.options.map((value) => ({ kind: 'context', value }));
const COMMAND_ITEMS: Item[] = slashCommandSchema.options.map((value) => ({ kind: 'command', value }));

let lists = 0;

export class CompletionList {
  readonly element: HTMLElement;
  /** Announces the list opening (and "no suggestions"); the active option is announced through aria-activedescendant. */
  readonly live: HTMLElement;
  private readonly id = `completion-${++lists}`;
  private items: Item[] = [];
  private active = 0;
  private trigger: Trigger | undefined;
  /** Escape closed the list for the trigger starting here: it stays closed until that trigger is gone. */
  private dismissedAt: number | undefined;

  constructor(private readonly input: HTMLTextAreaElement, private readonly ctx: ChatContext, private readonly onChange: () => void) {
    this.element = el('ul', { class: 'completion-list', role: 'listbox', id: this.id });
    this.element.hidden = true;
    this.live = el('div', { class: 'visually-hidden completion-announcer', 'aria-live': 'polite' });
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-multiline', 'true');
    input.setAttribute('aria-controls', this.id);
    input.setAttribute('aria-expanded', 'false');
    input.addEventListener('input', () => this.update());
    input.addEventListener('click', () => this.update());
    input.addEventListener('blur', () => this.close());
    // The option keeps the input focused (mousedown would move the focus) and a click accepts it.
    this.element.addEventListener('mousedown', (e) => e.preventDefault());
    this.element.addEventListener('click', (e) => {
      const option = (e.target as Element | null)?.closest('[role="option"]');
      const index = option ? Number(option.getAttribute('data-index')) : -1;
      if (index >= 0) { this.active = index; this.accept(); }
    });
    this.element.addEventListener('mousemove', (e) => {
      const option = (e.target as Element | null)?.closest('[role="option"]');
      const index = option ? Number(option.getAttribute('data-index')) : -1;
      if (index >= 0 && index !== this.active) { this.active = index; this.renderActive(); }
    });
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  applyStrings(): void {
    this.element.setAttribute('aria-label', this.ctx.strings.completionLabel);
    if (this.isOpen) this.render();
  }

  /** Re-reads the text before the caret: opens, filters or closes the list. */
  update(): void {
    const trigger = findTrigger(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (this.dismissedAt !== undefined && trigger?.start !== this.dismissedAt) this.dismissedAt = undefined;
    if (!trigger || trigger.start === this.dismissedAt) { this.close(); return; }
    const pool = trigger.kind === 'command' ? COMMAND_ITEMS : CONTEXT_ITEMS;
    const items = pool.filter((item) => item.value.startsWith(trigger.query));
    const wasOpen = this.isOpen;
    const same = wasOpen && items.length === this.items.length && items.every((item, i) => item === this.items[i]);
    this.trigger = trigger;
    if (!items.length) {
      this.close();
      this.live.textContent = this.ctx.strings.completionNone;
      return;
    }
    if (same) return;
    this.items = items;
    this.active = 0;
    this.render();
    this.live.textContent = this.ctx.strings.completionCount.replace('{0}', String(items.length));
  }

  /** The list's keys, while it is open; true when the key was the list's. */
  onKeyDown(e: KeyboardEvent): boolean {
    if (!this.isOpen || e.isComposing || e.altKey || e.ctrlKey || e.metaKey) return false;
    switch (e.key) {
      case 'ArrowDown': this.move(1); break;
      case 'ArrowUp': this.move(-1); break;
      case 'Enter': case 'Tab': if (e.shiftKey) return false; this.accept(); break;
      case 'Escape': this.dismissedAt = this.trigger?.start; this.close(); break;
      default: return false;
    }
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  close(): void {
    if (this.element.hidden) return;
    this.element.hidden = true;
    this.element.replaceChildren();
    this.items = [];
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
  }

  private move(step: 1 | -1): void {
    this.active = (this.active + step + this.items.length) % this.items.length;
    this.renderActive();
  }

  private accept(): void {
    const item = this.items[this.active];
    const trigger = this.trigger;
    if (!item || !trigger) return;
    const caret = this.input.selectionStart ?? this.input.value.length;
    const value = this.input.value;
    if (item.kind === 'context') {
      this.input.value = value.slice(0, trigger.start) + value.slice(caret);
      this.input.setSelectionRange(trigger.start, trigger.start);
      this.ctx.postToHost({ type: 'addContext', source: item.value as ContextSource });
    } else {
      const inserted = `/${item.value} `;
      this.input.value = value.slice(0, trigger.start) + inserted + value.slice(caret).replace(/^ /, '');
      const at = trigger.start + inserted.length;
      this.input.setSelectionRange(at, at);
      if (item.value === 'fix') this.ctx.postToHost({ type: 'addContext', source: 'problems' });
    }
    this.close();
    this.onChange();
  }

  private render(): void {
    const strings = this.ctx.strings;
    this.element.replaceChildren(...this.items.map((item, i) => {
      const sigil = item.kind === 'context' ? '#' : '/';
      const key = `${item.kind === 'context' ? 'context' : 'command'}.${item.value}` as StringKey;
      return el('li', { role: 'option', id: `${this.id}-${i}`, 'data-index': String(i), 'data-value': `${sigil}${item.value}`, class: 'completion-item' },
        el('span', { class: 'completion-name' }, `${sigil}${item.value}`),
        el('span', { class: 'completion-detail' }, strings[key]));
    }));
    this.element.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
    this.renderActive();
  }

  private renderActive(): void {
    for (const [i, option] of Array.from(this.element.children).entries()) {
      option.setAttribute('aria-selected', String(i === this.active));
      option.classList.toggle('active', i === this.active);
    }
    this.input.setAttribute('aria-activedescendant', `${this.id}-${this.active}`);
    this.element.children[this.active]?.scrollIntoView?.({ block: 'nearest' });
  }
}
