// The question box and its buttons: Send (or Send Edited while editing the last question), Stop while an answer
// is generated, Regenerate, Edit and Cancel; Enter sends, Shift+Enter adds a line, Escape stops or cancels an edit.
import { LIMITS } from '../../protocol';
import { button, el } from '../shared/dom';
import { AttachmentBar } from './attachmentChips';
import type { ChatContext } from './chatContext';

export class Composer {
  readonly element: HTMLElement;
  /** The chips of the next question (attachmentChips.ts), above the input. */
  readonly attachmentBar: AttachmentBar;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly regenerateButton: HTMLButtonElement;
  private readonly editButton: HTMLButtonElement;
  private readonly cancelEditButton: HTMLButtonElement;
  /** The user is editing their last question (Send replaces it and its answer). */
  private editing: boolean;

  constructor(
    private readonly ctx: ChatContext,
    restored: { draft: string; editing: boolean },
    /** A question was sent (the panel clears the last error). */
    private readonly onSent: () => void,
  ) {
    this.editing = restored.editing;
    this.input = el('textarea', { class: 'input', rows: '3', maxlength: String(LIMITS.userText) });
    this.sendButton = button('', 'send', { class: 'primary' });
    this.stopButton = button('', 'stop');
    this.regenerateButton = button('', 'regenerate');
    this.editButton = button('', 'editLast');
    this.cancelEditButton = button('', 'cancelEdit');
    this.attachmentBar = new AttachmentBar(ctx);
    this.element = el('footer', { class: 'composer' }, this.attachmentBar.element, this.input,
      el('div', { class: 'composer-actions' }, this.sendButton, this.stopButton, this.regenerateButton, this.editButton, this.cancelEditButton));
    this.input.value = restored.draft;
    this.input.addEventListener('keydown', (e) => this.onKeyDown(e));
    this.input.addEventListener('input', () => { this.updateControls(); this.ctx.scheduleSave(); });
    // Escape stops the answer from anywhere in the panel (in the input it is handled above).
    this.element.ownerDocument.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && e.target !== this.input && this.ctx.state?.busy) { e.preventDefault(); this.ctx.postToHost({ type: 'stop' }); }
    });
  }

  get isEditing(): boolean {
    return this.editing;
  }

  get draft(): string {
    return this.input.value;
  }

  focus(): void {
    this.input.focus();
  }

  applyStrings(): void {
    const strings = this.ctx.strings;
    this.input.setAttribute('aria-label', strings.inputLabel);
    this.input.placeholder = strings.inputPlaceholder;
    this.stopButton.textContent = strings.stop;
    this.regenerateButton.textContent = strings.regenerate;
    this.editButton.textContent = strings.editLast;
    this.cancelEditButton.textContent = strings.editCancel;
    this.attachmentBar.applyStrings();
  }

  /** The host did not send a question (the user cancelled it): it comes back into an empty input. */
  restoreDraft(text: string): void {
    if (this.input.value.trim() === '') this.input.value = text;
    this.updateControls();
    this.input.focus();
  }

  updateControls(): void {
    const strings = this.ctx.strings;
    const state = this.ctx.state;
    const busy = !!state?.busy;
    const ready = state?.server.model === 'ready';
    const messages = state?.messages ?? [];
    const last = messages.at(-1);
    const hasQuestion = messages.some((m) => m.role === 'user');
    this.sendButton.textContent = this.editing ? strings.editSend : strings.send;
    this.sendButton.hidden = busy;
    this.sendButton.disabled = !ready || this.input.value.trim() === '';
    this.stopButton.hidden = !busy;
    this.regenerateButton.hidden = busy || !last || (last.role !== 'assistant' && last.role !== 'user') || !hasQuestion;
    this.regenerateButton.disabled = !ready;
    this.editButton.hidden = busy || !hasQuestion || this.editing;
    this.cancelEditButton.hidden = !this.editing;
  }

  submit(): void {
    const text = this.input.value;
    const state = this.ctx.state;
    if (state?.busy || text.trim() === '' || state?.server.model !== 'ready') return;
    this.ctx.postToHost(this.editing ? { type: 'editLast', text } : { type: 'send', text });
    this.onSent();
    this.input.value = '';
    this.editing = false;
    this.updateControls();
    this.ctx.scheduleSave();
    this.input.focus();
  }

  /** Puts the last question into the input; sending then replaces it and its answer. */
  beginEdit(): void {
    const lastQuestion = [...(this.ctx.state?.messages ?? [])].reverse().find((m) => m.role === 'user');
    if (!lastQuestion) return;
    this.editing = true;
    this.input.value = lastQuestion.content;
    this.updateControls();
    this.input.focus();
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
  }

  cancelEdit(focus = true): void {
    if (!this.editing) return;
    this.editing = false;
    this.input.value = '';
    this.updateControls();
    if (focus) this.input.focus();
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      // Enter sends (IME composition Enter confirms a candidate instead); Shift+Enter keeps the default newline.
      e.preventDefault();
      this.submit();
    } else if (e.key === 'Escape') {
      if (this.ctx.state?.busy) { e.preventDefault(); this.ctx.postToHost({ type: 'stop' }); }
      else if (this.editing) { e.preventDefault(); this.cancelEdit(); }
    }
  }
}
