// The input at the bottom of the panel, as in Copilot Chat: one box that grows with its text, with an inline Send
// icon button that becomes Stop while an answer is generated. Enter sends, Shift+Enter adds a line, Escape stops;
// ArrowUp in the empty input brings back the last question (again: the one before), ArrowDown goes forward again.
// `#` and `/` open a completion list (contextCompletion.ts) that has the keys first while it is open; under the text,
// the token meter (tokenMeter.ts).
import { format, LIMITS, type AttachmentsMessage, type BudgetMessage } from '../../protocol';
import { el, iconButton } from '../shared/dom';
import { autoGrow } from './autoGrow';
import { AttachmentBar } from './attachmentChips';
import type { ChatContext } from './chatContext';
import { CompletionList } from './contextCompletion';
import { TokenMeter } from './tokenMeter';

export class Composer {
  readonly element: HTMLElement;
  /** Inside the input box, above the text: where parts of the panel add what goes with the question (chips). */
  readonly aboveInput: HTMLElement;
  /** The box's bottom row, left of Send: where parts of the panel add their buttons. */
  readonly toolbarStart: HTMLElement;
  /** The chips of the next question (attachmentChips.ts), in `aboveInput`. */
  readonly attachmentBar: AttachmentBar;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly fit: () => void;
  private readonly completion: CompletionList;
  private readonly meter: TokenMeter;
  /** While ArrowUp/ArrowDown walk the questions: how far back (1 = the last question) and what was recalled. */
  private recalled: { back: number; text: string } | undefined;

  constructor(
    private readonly ctx: ChatContext,
    restored: { draft: string },
    /** A question was sent (the panel clears the last error). */
    private readonly onSent: () => void,
  ) {
    this.input = el('textarea', { class: 'input', rows: '1', maxlength: String(LIMITS.userText) });
    this.sendButton = iconButton('send', 'send', '', { class: 'send' });
    this.stopButton = iconButton('debug-stop', 'stop', '', { class: 'stop' });
    this.aboveInput = el('div', { class: 'input-above' });
    this.toolbarStart = el('div', { class: 'input-toolbar-start' });
    this.attachmentBar = new AttachmentBar(ctx);
    this.aboveInput.append(this.attachmentBar.element);
    this.completion = new CompletionList(this.input, ctx, () => { this.fit(); this.updateControls(); this.meter.update(); this.ctx.scheduleSave(); });
    this.meter = new TokenMeter(ctx, () => this.input.value);
    this.element = el('footer', { class: 'composer' },
      this.completion.element, this.completion.live, this.meter.announcer,
      el('div', { class: 'input-box' }, this.aboveInput, this.input,
        el('div', { class: 'input-toolbar' }, this.toolbarStart, this.meter.element, this.sendButton, this.stopButton)));
    this.input.value = restored.draft;
    this.fit = autoGrow(this.input);
    this.input.addEventListener('keydown', (e) => this.onKeyDown(e));
    this.input.addEventListener('input', () => { this.recalled = undefined; this.updateControls(); this.meter.update(); this.ctx.scheduleSave(); });
    const doc = this.element.ownerDocument;
    // Escape stops the answer from anywhere in the panel (in the input it is handled below).
    doc.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && e.target !== this.input && this.ctx.state?.busy && !e.defaultPrevented) { e.preventDefault(); this.ctx.postToHost({ type: 'stop' }); }
    });
    doc.defaultView?.addEventListener('resize', () => this.fit());
  }

  get draft(): string {
    return this.input.value;
  }

  focus(): void {
    this.input.focus();
  }

  /** Sizes the input to its text (call once it is in the document). */
  layout(): void {
    this.fit();
  }

  applyStrings(): void {
    const strings = this.ctx.strings;
    this.nameModel();
    for (const [button, label, tooltip] of [[this.sendButton, strings.send, strings.sendTooltip], [this.stopButton, strings.stop, strings.stopTooltip]] as const) {
      button.setAttribute('aria-label', label);
      button.title = tooltip;
    }
    this.attachmentBar.applyStrings();
    this.completion.applyStrings();
    this.meter.update();
  }

  /** The host's chips of the next question: drawn above the input and counted by the meter. */
  showAttachments(message: AttachmentsMessage): void {
    this.attachmentBar.render(message);
    this.meter.setChips(message);
  }

  /** The host's figures of the next request (system prompt, history, templates). */
  setBudget(message: BudgetMessage): void {
    this.meter.setBudget(message);
  }

  /** The host did not send a question (the user cancelled it): it comes back into an empty input. */
  restoreDraft(text: string): void {
    if (this.input.value.trim() === '') this.input.value = text;
    this.fit();
    this.meter.update();
    this.updateControls();
    this.input.focus();
  }

  updateControls(): void {
    const state = this.ctx.state;
    const busy = !!state?.busy;
    this.sendButton.hidden = busy;
    const ready = state?.server.model === 'ready';
    this.sendButton.disabled = !ready || this.input.value.trim() === '';
    // Until the model is ready Enter cannot send: the tooltip says so rather than promising "Send (Enter)".
    this.sendButton.title = ready ? this.ctx.strings.sendTooltip : format(this.ctx.strings.sendNotReadyTooltip, this.ctx.modelName);
    this.nameModel();
    this.stopButton.hidden = !busy;
    this.meter.setModelReady(ready);
  }

  /** The input's label and placeholder name the model ("Ask GLM-4-9B-Chat…"): set when the strings or the state change. */
  private nameModel(): void {
    const label = format(this.ctx.strings.inputLabel, this.ctx.modelName);
    const placeholder = format(this.ctx.strings.inputPlaceholder, this.ctx.modelName);
    if (this.input.getAttribute('aria-label') !== label) this.input.setAttribute('aria-label', label);
    if (this.input.placeholder !== placeholder) this.input.placeholder = placeholder;
  }

  /** Puts `text` into the input and sends it (an example prompt of the empty state). */
  sendText(text: string): void {
    this.input.value = text;
    this.submit();
  }

  submit(): void {
    const text = this.input.value;
    const state = this.ctx.state;
    if (state?.busy || text.trim() === '' || state?.server.model !== 'ready') return;
    this.ctx.postToHost({ type: 'send', text });
    this.onSent();
    this.input.value = '';
    this.recalled = undefined;
    this.completion.close();
    this.fit();
    this.meter.update();
    this.updateControls();
    this.ctx.scheduleSave();
    this.input.focus();
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (this.completion.onKeyDown(e)) return;
    const composing = e.isComposing || e.keyCode === 229; // IME: Enter confirms a candidate, arrows move in its list
    if (e.key === 'Enter' && !e.shiftKey && !composing) {
      // Shift+Enter keeps the default newline.
      e.preventDefault();
      // Not ready yet (setup, stopped, unloaded): the question stays, the focus goes to the action that helps.
      if (this.ctx.state?.server.model !== 'ready' && this.input.value.trim() !== '') this.ctx.focusServerAction();
      else this.submit();
    } else if (e.key === 'Escape') {
      if (this.ctx.state?.busy) { e.preventDefault(); this.ctx.postToHost({ type: 'stop' }); }
    } else if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && !composing && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
      if (this.recall(e.key === 'ArrowUp' ? 1 : -1)) e.preventDefault();
    }
  }

  /**
   * ArrowUp in an empty input (or on a recalled question, the caret at its start) recalls the question before;
   * ArrowDown on a recalled question (the caret at its end) the one after, and past the last an empty input.
   * Anything typed ends the walk, so the arrows move the caret again.
   */
  private recall(step: 1 | -1): boolean {
    const value = this.input.value;
    const walking = this.recalled !== undefined && value === this.recalled.text;
    const caret = this.input.selectionStart === this.input.selectionEnd ? this.input.selectionStart : -1;
    if (step === 1 && !(value === '' || (walking && caret === 0))) return false;
    if (step === -1 && !(walking && caret === value.length)) return false;
    const questions = this.questions();
    const back = (walking ? this.recalled!.back : 0) + step;
    if (back > questions.length) return false;
    if (back <= 0) {
      this.recalled = undefined;
      this.input.value = '';
    } else {
      const text = questions[questions.length - back]!;
      this.recalled = { back, text };
      this.input.value = text;
      const at = step === 1 ? 0 : text.length;
      this.input.setSelectionRange(at, at);
    }
    this.fit();
    this.updateControls();
    this.meter.update();
    return true;
  }

  /** The questions ArrowUp walks, oldest first: this conversation's, or the last one asked before it. */
  private questions(): string[] {
    const state = this.ctx.state;
    const own = (state?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content);
    return own.length ? own : state?.previousQuestion ? [state.previousQuestion] : [];
  }
}
