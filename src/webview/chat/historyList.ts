// The list of saved conversations behind the toolbar's Show/Hide toggle: select or delete one (the host does both).
import { format } from '../../protocol';
import { button, el } from '../shared/dom';
import type { ChatContext } from './chatContext';

export class HistoryList {
  /** The toolbar button that shows and hides the list. */
  readonly toggle: HTMLButtonElement;
  readonly element: HTMLElement;
  private readonly list: HTMLUListElement;

  constructor(private readonly ctx: ChatContext, private open: boolean) {
    this.toggle = button('', 'toggleHistory', { 'aria-expanded': 'false', 'aria-controls': 'history' });
    this.list = el('ul', { class: 'history-list' });
    this.element = el('nav', { id: 'history', class: 'history' }, this.list);
  }

  get isOpen(): boolean {
    return this.open;
  }

  applyStrings(): void {
    this.element.setAttribute('aria-label', this.ctx.strings.conversations);
  }

  toggleOpen(): void {
    this.open = !this.open;
    this.render();
    this.ctx.scheduleSave();
  }

  /** Asks the host to delete the conversation of `deleteButton`, keeping keyboard focus in the list. */
  deleteConversation(deleteButton: Element, id: string, focusWhenLast: HTMLElement): void {
    // Move focus to a neighbour before the item disappears.
    const item = deleteButton.closest('li');
    const neighbour = (item?.nextElementSibling ?? item?.previousElementSibling)?.querySelector<HTMLButtonElement>('.history-select');
    (neighbour ?? focusWhenLast).focus();
    this.ctx.postToHost({ type: 'deleteConversation', id });
  }

  render(): void {
    const strings = this.ctx.strings;
    this.element.hidden = !this.open;
    this.toggle.textContent = this.open ? strings.hideConversations : strings.showConversations;
    this.toggle.setAttribute('aria-expanded', String(this.open));
    const conversations = this.ctx.state?.conversations ?? [];
    if (conversations.length === 0) {
      this.list.replaceChildren(el('li', { class: 'history-empty' }, strings.noConversations));
      return;
    }
    const activeId = this.ctx.state?.activeId;
    this.list.replaceChildren(...conversations.map((conversation) => {
      const title = conversation.title || strings.untitled;
      const current = conversation.id === activeId;
      const deleteLabel = format(strings.deleteConversation, title);
      return el('li', { class: current ? 'history-item current' : 'history-item' },
        button(title, 'selectConversation', { 'data-id': conversation.id, class: 'history-select', 'aria-current': current ? 'true' : undefined, title }),
        button('×', 'deleteConversation', { 'data-id': conversation.id, class: 'history-delete', 'aria-label': deleteLabel, title: deleteLabel }));
    }));
  }
}
