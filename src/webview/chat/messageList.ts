// The conversation's messages, keyed by message id: unchanged messages keep their DOM, only new or changed ones
// are rendered, the answer being generated streams into its own node, and the view follows it at the bottom
// unless the user scrolled up to read.
import { format, type MessageView } from '../../protocol';
import { el } from '../shared/dom';
import { sameAttachments, sentChips } from './attachmentChips';
import type { ChatContext } from './chatContext';
import { decorateCodeBlocks } from './code-blocks';
import type { MarkdownRenderer } from './markdown';
import { publishRenderStats } from './renderStats';
import { StreamingRenderer } from './streaming';

/** A rendered message and what it was rendered from. */
interface MessageNode {
  view: MessageView;
  article: HTMLElement;
  body: HTMLElement;
  streaming?: StreamingRenderer;
}

/** Closer to the bottom than this (px) counts as "at the bottom". */
const PINNED_SLACK_PX = 40;

export class MessageList {
  readonly element: HTMLElement;
  /** Shown instead of the list while the conversation is empty. */
  readonly emptyNote: HTMLElement;
  private readonly nodes = new Map<string, MessageNode>();
  private pinnedToBottom = true;

  constructor(private readonly ctx: ChatContext, private readonly md: MarkdownRenderer) {
    this.emptyNote = el('p', { class: 'empty' });
    // role=log is a polite live region: new messages (and the streamed answer, once aria-busy clears) are announced.
    this.element = el('main', { class: 'messages', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions text' });
    this.element.addEventListener('scroll', () => {
      const list = this.element;
      this.pinnedToBottom = list.scrollHeight - list.scrollTop - list.clientHeight < PINNED_SLACK_PX;
    }, { passive: true });
  }

  applyStrings(): void {
    this.element.setAttribute('aria-label', this.ctx.strings.messagesLabel);
    this.emptyNote.textContent = this.ctx.strings.emptyChat;
  }

  /** Drops every rendered node, so the next render() relabels all of them (markers and code buttons are localized). */
  forgetRendered(): void {
    this.nodes.clear();
  }

  /** Another conversation is shown: follow it from the bottom. */
  pinToBottom(): void {
    this.pinnedToBottom = true;
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
      this.nodes.set(view.id, node);
      ordered.push(node.article);
    }
    for (const id of [...this.nodes.keys()]) if (!seen.has(id)) this.nodes.delete(id);
    // Re-append only when the order differs (appending an element that is already in place is not free).
    const current = Array.from(this.element.children);
    if (current.length !== ordered.length || ordered.some((a, i) => current[i] !== a)) this.element.replaceChildren(...ordered);
    this.emptyNote.hidden = messages.length > 0;
    this.stickToBottom();
  }

  /** Streams text into the message being generated (its view already holds it). */
  appendStreamed(messageId: string, text: string): void {
    this.nodes.get(messageId)?.streaming?.append(text);
  }

  /** The answer in `view` has ended: render it in its final form and update its marker and figures. */
  finish(view: MessageView): void {
    const node = this.nodes.get(view.id);
    if (!node) return;
    if (node.streaming) publishRenderStats(node.article, node.streaming.finalize(view.content));
    this.updateMessageChrome(node, view);
  }

  private stickToBottom(): void {
    if (this.pinnedToBottom) this.element.scrollTop = this.element.scrollHeight;
  }

  private renderMessage(view: MessageView): MessageNode {
    const strings = this.ctx.strings;
    const body = el('div', { class: view.role === 'assistant' ? 'message-body markdown' : 'message-body plain' });
    const article = el('article', { class: `message ${view.role}`, 'data-id': view.id },
      el('div', { class: 'message-role' }, view.role === 'user' ? strings.roleUser : strings.roleAssistant), body);
    const node: MessageNode = { view, article, body };
    if (view.role === 'user') {
      body.textContent = view.content;
      if (view.attachments?.length) article.append(sentChips(this.ctx, view.attachments));
    } else if (view.status === 'streaming') {
      node.streaming = new StreamingRenderer(body, this.md, () => this.ctx.strings, view.content, () => this.stickToBottom());
    } else {
      const fragment = this.md.render(view.content);
      decorateCodeBlocks(fragment, strings);
      body.replaceChildren(fragment);
    }
    this.updateMessageChrome(node, view);
    return node;
  }

  /** Status marker, notes and token counts below a message. */
  private updateMessageChrome(node: MessageNode, view: MessageView): void {
    const strings = this.ctx.strings;
    node.article.dataset.status = view.status;
    node.article.setAttribute('aria-busy', String(view.status === 'streaming'));
    for (const old of Array.from(node.article.querySelectorAll(':scope > .message-marker, :scope > .message-meta'))) old.remove();
    if (view.role !== 'assistant') return;
    let marker: string | undefined;
    if (view.status === 'streaming') marker = strings.generating;
    else if (view.status === 'stopped') marker = strings.statusStopped;
    else if (view.status === 'failed') marker = format(strings.statusFailed, view.error ?? '');
    else if (view.status === 'interrupted') marker = strings.statusInterrupted;
    if (marker) node.article.append(el('div', { class: `message-marker ${view.status}`, role: view.status === 'failed' ? 'alert' : 'note' }, marker));
    const meta: string[] = [];
    if (view.finishReason === 'length' && view.status === 'complete') meta.push(strings.finishLength);
    if (view.historyTrimmed) meta.push(format(strings.historyTrimmed, view.historyTrimmed));
    if (view.promptTokens !== undefined && view.completionTokens !== undefined) meta.push(format(strings.tokens, view.promptTokens, view.completionTokens));
    if (meta.length) node.article.append(el('div', { class: 'message-meta' }, ...meta.map((line) => el('p', {}, line))));
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
