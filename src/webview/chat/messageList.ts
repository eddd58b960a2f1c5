// The conversation's messages, keyed by message id: unchanged messages keep their DOM, only new or changed ones
// are rendered, the answer being generated streams into its own node, and the view follows it at the bottom
// unless the user scrolled up to read. Questions and answers both render their Markdown through the same
// sanitising renderer; each message has its toolbar (messageActions.ts), and a question can be edited in place.
import type { MessageView } from '../../protocol';
import { el, icon } from '../shared/dom';
import { sameAttachments, sentChips } from './attachmentChips';
import type { ChatContext } from './chatContext';
import { decorateCodeBlocks } from './codeBlocks';
import type { MarkdownRenderer } from './markdown';
import { continueNote, messageToolbar, statusMarker } from './messageActions';
import { QuestionEditor } from './questionEditor';
import { publishRenderStats } from './renderStats';
import { StreamingRenderer } from './streaming';

/** A rendered message and what it was rendered from. */
interface MessageNode {
  view: MessageView;
  article: HTMLElement;
  header: HTMLElement;
  body: HTMLElement;
  streaming?: StreamingRenderer;
}

/** Closer to the bottom than this (px) counts as "at the bottom". */
const PINNED_SLACK_PX = 40;

export class MessageList {
  readonly element: HTMLElement;
  private readonly nodes = new Map<string, MessageNode>();
  private pinnedToBottom = true;
  private editor: QuestionEditor | undefined;

  constructor(
    private readonly ctx: ChatContext,
    /** Answers (model output). */
    private readonly md: MarkdownRenderer,
    /** Questions: the same renderer, with the line breaks people type kept. */
    private readonly questionMd: MarkdownRenderer,
    /** An edited question was sent (the panel moves the focus to its input). */
    private readonly onEditSent: () => void,
  ) {
    // role=log is a polite live region: new messages (and the streamed answer, once aria-busy clears) are announced.
    this.element = el('main', { class: 'messages', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions text' });
    this.element.addEventListener('scroll', () => {
      const list = this.element;
      this.pinnedToBottom = list.scrollHeight - list.scrollTop - list.clientHeight < PINNED_SLACK_PX;
    }, { passive: true });
  }

  applyStrings(): void {
    this.element.setAttribute('aria-label', this.ctx.strings.messagesLabel);
  }

  /** Drops every rendered node, so the next render() relabels all of them (markers and code buttons are localized). */
  forgetRendered(): void {
    this.nodes.clear();
  }

  /** Another conversation is shown: follow it from the bottom, and forget an edit begun in the last one. */
  reset(): void {
    this.pinnedToBottom = true;
    this.editor = undefined;
  }

  /** The question being edited in place and its text so far (kept while the panel is hidden). */
  get editing(): { messageId: string; text: string } | undefined {
    return this.editor ? { messageId: this.editor.messageId, text: this.editor.text } : undefined;
  }

  render(): void {
    const messages = this.ctx.state?.messages ?? [];
    const seen = new Set<string>();
    const ordered: HTMLElement[] = [];
    for (const view of messages) {
      seen.add(view.id);
      let node = this.nodes.get(view.id);
      if (node && !sameView(node.view, view, !!node.streaming)) node = undefined;
      if (!node) node = this.renderMessage(view);
      else if (node.streaming && view.status === 'streaming' && view.content.length > node.streaming.content.length) {
        node.streaming.append(view.content.slice(node.streaming.content.length));
      }
      node.view = view;
      this.labelRole(node);
      this.nodes.set(view.id, node);
      ordered.push(node.article);
    }
    for (const id of [...this.nodes.keys()]) if (!seen.has(id)) this.nodes.delete(id);
    if (this.editor && !seen.has(this.editor.messageId)) this.editor = undefined;
    // Re-append only when the order differs (appending an element that is already in place is not free).
    const current = Array.from(this.element.children);
    if (current.length !== ordered.length || ordered.some((a, i) => current[i] !== a)) this.element.replaceChildren(...ordered);
    this.element.hidden = messages.length === 0;
    this.markSuperseded();
    this.editor?.updateControls();
    this.stickToBottom();
  }

  /** Streams text into the message being generated (its view already holds it). */
  appendStreamed(messageId: string, text: string): void {
    this.nodes.get(messageId)?.streaming?.append(text);
  }

  /** The answer in `view` has ended: render it in its final form and update its marker and toolbar. */
  finish(view: MessageView): void {
    const node = this.nodes.get(view.id);
    if (!node) return;
    if (node.streaming) {
      const times = node.streaming.times;
      node.streaming.finalize(view.content, () => publishRenderStats(node.article, times));
      publishRenderStats(node.article, times);
      node.streaming = undefined;
    }
    node.view = { ...view };
    this.updateMessageChrome(node, view);
  }

  /** Turns question `messageId` into an input (with `text`, by default its own). */
  beginEdit(messageId: string, text?: string): void {
    const node = this.nodes.get(messageId);
    if (!node || node.view.role !== 'user' || this.ctx.state?.busy) return;
    if (this.editor) this.endEdit();
    const editor = new QuestionEditor(this.ctx, messageId, text ?? node.view.content, (sent) => {
      if (this.editor !== editor) return;
      this.endEdit(!sent);
      if (sent) this.onEditSent();
    });
    this.editor = editor;
    node.article.classList.add('editing');
    node.body.hidden = true;
    node.body.after(editor.element);
    this.markSuperseded();
    this.ctx.scheduleSave();
  }

  private endEdit(refocus = false): void {
    const editor = this.editor;
    if (!editor) return;
    this.editor = undefined;
    editor.element.remove();
    const node = this.nodes.get(editor.messageId);
    if (node) {
      node.article.classList.remove('editing');
      node.body.hidden = false;
      if (refocus) node.header.querySelector<HTMLButtonElement>('button[data-action="editQuestion"]')?.focus();
    }
    this.markSuperseded();
    this.ctx.scheduleSave();
  }

  /** While a question is edited, the messages after it (which sending replaces) are dimmed. */
  private markSuperseded(): void {
    let after = false;
    for (const article of Array.from(this.element.children)) {
      article.classList.toggle('superseded', after);
      if (this.editor && article.getAttribute('data-id') === this.editor.messageId) after = true;
    }
  }

  private stickToBottom(): void {
    if (this.pinnedToBottom) this.element.scrollTop = this.element.scrollHeight;
  }

  private renderMessage(view: MessageView): MessageNode {
    const strings = this.ctx.strings;
    const user = view.role === 'user';
    const body = el('div', { class: 'message-body markdown' });
    const header = el('header', { class: 'message-header' },
      el('span', { class: `message-avatar ${view.role}`, 'aria-hidden': 'true' }, user ? icon('account') : el('span', { class: 'avatar-logo' })),
      el('span', { class: 'message-role' }, user ? strings.roleUser : this.roleOfAnswer(view)));
    const article = el('article', { class: `message ${view.role}`, 'data-id': view.id }, header, body);
    const node: MessageNode = { view, article, header, body };
    if (user && view.attachments?.length) article.append(sentChips(this.ctx, view.attachments));
    if (view.role === 'assistant' && view.status === 'streaming') {
      node.streaming = new StreamingRenderer(body, this.md, () => this.ctx.strings, view.content, () => this.stickToBottom());
    } else {
      const fragment = (user ? this.questionMd : this.md).render(view.content);
      decorateCodeBlocks(fragment, strings);
      body.replaceChildren(fragment);
    }
    this.updateMessageChrome(node, view);
    return node;
  }

  /** An answer is labelled with the model that wrote it; one saved before answers named it, with the state's model. */
  private roleOfAnswer(view: MessageView): string {
    return view.modelName ?? this.ctx.modelName;
  }

  /** A kept answer without its own model name follows the state's (the served model changed). */
  private labelRole(node: MessageNode): void {
    if (node.view.role !== 'assistant') return;
    const role = node.header.querySelector(':scope > .message-role');
    const label = this.roleOfAnswer(node.view);
    if (role && role.textContent !== label) role.textContent = label;
  }

  /** The toolbar in the header, and the marker and Continue below an answer. */
  private updateMessageChrome(node: MessageNode, view: MessageView): void {
    const strings = this.ctx.strings;
    node.article.dataset.status = view.status;
    node.article.setAttribute('aria-busy', String(view.status === 'streaming'));
    node.header.querySelector(':scope > .message-toolbar')?.remove();
    node.header.append(messageToolbar(view, strings));
    for (const old of Array.from(node.article.querySelectorAll(':scope > .message-marker, :scope > .message-continue'))) old.remove();
    const marker = statusMarker(view, strings);
    if (marker) node.article.append(marker);
    const more = continueNote(view, strings);
    if (more) node.article.append(more);
  }
}

/** Whether a rendered message can be kept for a new view of it. */
function sameView(a: MessageView, b: MessageView, isStreamingNode: boolean): boolean {
  if (a.role !== b.role) return false;
  if (isStreamingNode) return b.status === 'streaming' && b.content.startsWith(a.content);
  return a.content === b.content && a.status === b.status && a.error === b.error && a.finishReason === b.finishReason
    && a.promptTokens === b.promptTokens && a.completionTokens === b.completionTokens && a.historyTrimmed === b.historyTrimmed
    && sameAttachments(a.attachments, b.attachments);
}
