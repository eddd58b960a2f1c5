// Editing a question in place, as in Copilot Chat: the question's text becomes an input with Send and Cancel.
// Sending replaces the question and everything after it (the later messages are dimmed meanwhile); Enter sends,
// Shift+Enter adds a line, Escape cancels.
import { LIMITS } from '../../protocol';
import { button, el } from '../shared/dom';
import { autoGrow } from './autoGrow';
import type { ChatContext } from './chatContext';

export class QuestionEditor {
  readonly element: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;

  constructor(
    private readonly ctx: ChatContext,
    readonly messageId: string,
    text: string,
    /** The editor is done (sent or cancelled): the list puts the question back. */
    private readonly onClose: (sent: boolean) => void,
  ) {
    const strings = ctx.strings;
    this.input = el('textarea', { class: 'input question-edit-input', rows: '1', maxlength: String(LIMITS.userText), 'aria-label': strings.edit });
    this.input.value = text;
    this.sendButton = button(strings.send, 'submitEdit', { class: 'primary', title: strings.sendTooltip });
    this.element = el('div', { class: 'question-editor' },
      this.input,
      el('div', { class: 'question-editor-footer' },
        el('span', { class: 'question-editor-hint' }, strings.editHint),
        button(strings.editCancel, 'cancelEdit', { title: strings.editCancelTooltip }),
        this.sendButton));
    const fit = autoGrow(this.input);
    this.input.addEventListener('input', () => { this.updateControls(); this.ctx.scheduleSave(); });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) { e.preventDefault(); this.submit(); }
      else if (e.key === 'Escape') { e.preventDefault(); this.close(false); }
    });
    // One delegated listener would do, but these two buttons belong to the editor alone.
    this.element.addEventListener('click', (e) => {
      const action = (e.target as Element | null)?.closest('button[data-action]')?.getAttribute('data-action');
      if (action === 'submitEdit') this.submit();
      if (action === 'cancelEdit') this.close(false);
    });
    queueMicrotask(() => {
      fit();
      if (!this.element.ownerDocument.hasFocus()) return; // restored in a panel that is not focused
      this.input.focus();
      this.input.setSelectionRange(this.input.value.length, this.input.value.length);
    });
    this.updateControls();
  }

  get text(): string {
    return this.input.value;
  }

  updateControls(): void {
    const state = this.ctx.state;
    this.sendButton.disabled = !!state?.busy || state?.server.model !== 'ready' || this.input.value.trim() === '';
  }

  submit(): void {
    if (this.sendButton.disabled) return;
    this.ctx.postToHost({ type: 'editQuestion', messageId: this.messageId, text: this.input.value });
    this.close(true);
  }

  private close(sent: boolean): void {
    this.onClose(sent);
  }
}
