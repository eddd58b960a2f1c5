// The chat panel: renders the host's state, streams answers, and turns user actions into protocol messages.
// Every visible string comes from `strings` (the host's l10n bundle over English defaults).
import {
  format,
  mergeStrings,
  parseHostToWebview,
  isProtocolError,
  LIMITS,
  type HostToWebview,
  type MessageDone,
  type MessageView,
  type StateMessage,
  type Strings,
  type WebviewToHost,
} from '../protocol';
import { hasInvisibleCharacters } from '../core/text/invisible-characters';
import { CODE_ACTIONS, codeOfBlock, decorateCodeBlocks } from './code-blocks';
import { button, el } from './dom';
import { interceptLinks } from './links';
import { createMarkdownRenderer, type MarkdownRenderer } from './markdown';
import { StreamingRenderer } from './streaming';
import type { VsCodeApi } from './vscode-api';

/** What VS Code keeps for us while the panel is hidden (getState/setState). */
export interface PersistedState {
  version: 1;
  state: StateMessage | null;
  strings: Record<string, string>;
  draft: string;
  editing: boolean;
  historyOpen: boolean;
}

/** A rendered message and what it was rendered from, so unchanged messages are never rendered again. */
interface MessageNode {
  view: MessageView;
  article: HTMLElement;
  body: HTMLElement;
  streaming?: StreamingRenderer;
}

const STATE_SAVE_DELAY_MS = 500;

export class ChatApp {
  private strings: Strings;
  private receivedStrings: Record<string, string>;
  private state: StateMessage | null;
  private draftEditing: boolean;
  private historyOpen: boolean;
  private readonly md: MarkdownRenderer;
  private readonly nodes = new Map<string, MessageNode>();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  /** Follow the answer as it grows, unless the user scrolled up to read. */
  private pinnedToBottom = true;

  // Static layout
  private readonly header: HTMLElement;
  private readonly historyToggle: HTMLButtonElement;
  private readonly newChatButton: HTMLButtonElement;
  private readonly serverBox: HTMLElement;
  private readonly historyNav: HTMLElement;
  private readonly historyList: HTMLUListElement;
  private readonly messagesEl: HTMLElement;
  private readonly emptyEl: HTMLElement;
  private readonly errorEl: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly regenerateButton: HTMLButtonElement;
  private readonly editButton: HTMLButtonElement;
  private readonly cancelEditButton: HTMLButtonElement;

  constructor(private readonly root: HTMLElement, private readonly api: VsCodeApi<PersistedState>) {
    const saved = api.getState();
    const restored = saved && saved.version === 1 ? saved : undefined;
    this.receivedStrings = restored?.strings ?? {};
    this.strings = mergeStrings(this.receivedStrings);
    this.state = restored?.state ?? null;
    this.draftEditing = restored?.editing ?? false;
    this.historyOpen = restored?.historyOpen ?? false;
    this.md = createMarkdownRenderer((what) => format(this.strings.imageRemoved, what));

    this.newChatButton = button('', 'newChat');
    this.historyToggle = button('', 'toggleHistory', { 'aria-expanded': 'false', 'aria-controls': 'history' });
    this.header = el('header', { class: 'toolbar' }, this.newChatButton, this.historyToggle);
    this.serverBox = el('section', { class: 'server-status', role: 'status' });
    this.historyList = el('ul', { class: 'history-list' });
    this.historyNav = el('nav', { id: 'history', class: 'history' }, this.historyList);
    this.emptyEl = el('p', { class: 'empty' });
    // role=log is a polite live region: new messages (and the streamed answer, once aria-busy clears) are announced.
    this.messagesEl = el('main', { class: 'messages', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions text' });
    this.errorEl = el('div', { class: 'error-banner', role: 'alert' });
    this.input = el('textarea', { class: 'input', rows: '3', maxlength: String(LIMITS.userText) });
    this.sendButton = button('', 'send', { class: 'primary' });
    this.stopButton = button('', 'stop');
    this.regenerateButton = button('', 'regenerate');
    this.editButton = button('', 'editLast');
    this.cancelEditButton = button('', 'cancelEdit');
    const composer = el('footer', { class: 'composer' }, this.input,
      el('div', { class: 'composer-actions' }, this.sendButton, this.stopButton, this.regenerateButton, this.editButton, this.cancelEditButton));
    root.replaceChildren(this.header, this.serverBox, this.historyNav, this.errorEl, this.emptyEl, this.messagesEl, composer);

    this.input.value = restored?.draft ?? '';
    root.addEventListener('click', (e) => this.onClick(e));
    interceptLinks(root, (m) => this.post(m));
    this.messagesEl.addEventListener('scroll', () => {
      const el = this.messagesEl;
      this.pinnedToBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    }, { passive: true });
    this.input.addEventListener('keydown', (e) => this.onKeyDown(e));
    this.input.addEventListener('input', () => { this.updateControls(); this.scheduleSave(); });
    root.ownerDocument.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && e.target !== this.input && this.state?.busy) { e.preventDefault(); this.post({ type: 'stop' }); }
    });
    window.addEventListener('message', (e: MessageEvent) => this.receive(e.data));

    this.applyStrings();
    this.renderAll();
    this.post({ type: 'ready' });
  }

  /** Handles one message from the host; malformed ones are ignored (and logged) without touching the UI. */
  receive(raw: unknown): void {
    const msg = parseHostToWebview(raw);
    if (isProtocolError(msg)) {
      console.warn(`chat webview: ${msg.error}`);
      return;
    }
    this.handle(msg);
  }

  private handle(msg: HostToWebview): void {
    switch (msg.type) {
      case 'l10n':
        this.receivedStrings = msg.strings;
        this.strings = mergeStrings(msg.strings);
        this.applyStrings();
        this.nodes.clear(); // labels inside messages (markers, code buttons) are localized too
        this.renderAll();
        break;
      case 'state':
        if (this.state?.activeId !== msg.activeId) { this.cancelEdit(false); this.pinnedToBottom = true; this.errorEl.replaceChildren(); }
        this.state = msg;
        this.renderAll();
        break;
      case 'delta':
        this.onDelta(msg.conversationId, msg.messageId, msg.text);
        return; // state is saved when the answer ends (and periodically below)
      case 'messageDone':
        this.onDone(msg);
        break;
      case 'error':
        // Stays until dismissed, the next question, or another conversation (a state update must not hide it).
        this.errorEl.replaceChildren(el('span', { class: 'error-text' }, msg.message),
          button('×', 'dismissError', { class: 'error-dismiss', 'aria-label': this.strings.dismiss, title: this.strings.dismiss }));
        break;
      case 'focusInput':
        this.input.focus();
        return;
    }
    this.scheduleSave();
  }

  private onDelta(conversationId: string, messageId: string, text: string): void {
    if (!this.state || this.state.activeId !== conversationId) return;
    const last = this.state.messages.at(-1);
    const view = last?.id === messageId ? last : this.state.messages.find((m) => m.id === messageId);
    if (!view || view.status !== 'streaming') return;
    view.content += text;
    const node = this.nodes.get(messageId);
    node?.streaming?.append(text);
    this.scheduleSave();
  }

  private onDone(msg: MessageDone): void {
    if (!this.state || this.state.activeId !== msg.conversationId) return;
    const view = this.state.messages.find((m) => m.id === msg.messageId);
    if (!view) return;
    view.status = msg.status;
    for (const k of ['finishReason', 'promptTokens', 'completionTokens', 'historyTrimmed', 'error'] as const) {
      if (msg[k] !== undefined) (view as Record<string, unknown>)[k] = msg[k];
    }
    if (!this.state.messages.some((m) => m.status === 'streaming')) this.state.busy = false;
    const node = this.nodes.get(msg.messageId);
    if (node?.streaming) {
      // Render cost of this answer, for benchmarks (test/webview/support/render-cost.ts reads it).
      const stats = node.streaming.finalize(view.content);
      node.article.dataset.renderFrames = String(stats.frames);
      node.article.dataset.renderTotalMs = stats.totalMs.toFixed(2);
      node.article.dataset.renderMaxMs = stats.maxMs.toFixed(2);
      node.article.dataset.renderFirstTenthMs = stats.firstTenthAvgMs.toFixed(3);
      node.article.dataset.renderLastTenthMs = stats.lastTenthAvgMs.toFixed(3);
      node.article.dataset.renderFinalizeMs = stats.finalizeMs.toFixed(2);
    }
    if (node) this.updateMessageChrome(node, view, msg.notice);
    this.updateControls();
  }

  // ---------- rendering ----------

  private applyStrings(): void {
    const s = this.strings;
    this.root.setAttribute('aria-label', s.panelLabel);
    this.newChatButton.textContent = s.newChat;
    this.historyNav.setAttribute('aria-label', s.conversations);
    this.messagesEl.setAttribute('aria-label', s.messagesLabel);
    this.input.setAttribute('aria-label', s.inputLabel);
    this.input.placeholder = s.inputPlaceholder;
    this.stopButton.textContent = s.stop;
    this.regenerateButton.textContent = s.regenerate;
    this.editButton.textContent = s.editLast;
    this.cancelEditButton.textContent = s.editCancel;
    this.emptyEl.textContent = s.emptyChat;
  }

  private renderAll(): void {
    this.renderServer();
    this.renderHistory();
    this.renderMessages();
    this.updateControls();
  }

  private renderServer(): void {
    const server = this.state?.server;
    if (!server) {
      this.serverBox.hidden = false;
      this.serverBox.replaceChildren(el('p', {}, this.strings['server.unknown']));
      return;
    }
    this.serverBox.hidden = server.model === 'ready';
    if (this.serverBox.hidden) return;
    const lines = [
      el('p', { class: 'server-line' }, this.strings[`server.${server.server}`]),
      el('p', { class: 'server-line' }, this.strings[`model.${server.model}`]),
    ];
    if (server.reason) lines.push(el('p', { class: 'server-reason' }, server.reason));
    lines.push(el('p', { class: 'server-hint' }, this.strings.notReady));
    const actions = el('div', { class: 'server-actions' }, ...server.actions.map((a) => button(this.strings[a], a)));
    this.serverBox.replaceChildren(...lines, actions);
  }

  private renderHistory(): void {
    this.historyNav.hidden = !this.historyOpen;
    this.historyToggle.textContent = this.historyOpen ? this.strings.hideConversations : this.strings.showConversations;
    this.historyToggle.setAttribute('aria-expanded', String(this.historyOpen));
    const list = this.state?.conversations ?? [];
    if (list.length === 0) {
      this.historyList.replaceChildren(el('li', { class: 'history-empty' }, this.strings.noConversations));
      return;
    }
    this.historyList.replaceChildren(...list.map((c) => {
      const title = c.title || this.strings.untitled;
      const current = c.id === this.state?.activeId;
      return el('li', { class: current ? 'history-item current' : 'history-item' },
        button(title, 'selectConversation', { 'data-id': c.id, class: 'history-select', 'aria-current': current ? 'true' : undefined, title }),
        button('×', 'deleteConversation', { 'data-id': c.id, class: 'history-delete', 'aria-label': format(this.strings.deleteConversation, title), title: format(this.strings.deleteConversation, title) }));
    }));
  }

  /** Keyed by message id: unchanged messages keep their DOM; only new or changed ones are rendered. */
  private renderMessages(): void {
    const messages = this.state?.messages ?? [];
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
    const current = Array.from(this.messagesEl.children);
    if (current.length !== ordered.length || ordered.some((a, i) => current[i] !== a)) this.messagesEl.replaceChildren(...ordered);
    this.emptyEl.hidden = messages.length > 0;
    this.stickToBottom();
  }

  private stickToBottom(): void {
    if (this.pinnedToBottom) this.messagesEl.scrollTop = this.messagesEl.scrollHeight;
  }

  private renderMessage(view: MessageView): MessageNode {
    const body = el('div', { class: view.role === 'assistant' ? 'message-body markdown' : 'message-body plain' });
    const article = el('article', { class: `message ${view.role}`, 'data-id': view.id },
      el('div', { class: 'message-role' }, view.role === 'user' ? this.strings.roleUser : this.strings.roleAssistant), body);
    const node: MessageNode = { view, article, body };
    if (view.role === 'user') {
      body.textContent = view.content;
    } else if (view.status === 'streaming') {
      node.streaming = new StreamingRenderer(body, this.md, () => this.strings, view.content, () => this.stickToBottom());
    } else {
      const frag = this.md.render(view.content);
      decorateCodeBlocks(frag, this.strings);
      body.replaceChildren(frag);
    }
    this.updateMessageChrome(node, view);
    return node;
  }

  /** Status marker, notices and token counts below a message. */
  private updateMessageChrome(node: MessageNode, view: MessageView, notice?: string): void {
    const s = this.strings;
    node.article.dataset.status = view.status;
    node.article.setAttribute('aria-busy', String(view.status === 'streaming'));
    for (const old of Array.from(node.article.querySelectorAll(':scope > .message-marker, :scope > .message-meta'))) old.remove();
    if (view.role !== 'assistant') return;
    let marker: string | undefined;
    if (view.status === 'streaming') marker = s.generating;
    else if (view.status === 'stopped') marker = s.statusStopped;
    else if (view.status === 'failed') marker = format(s.statusFailed, view.error ?? '');
    else if (view.status === 'interrupted') marker = s.statusInterrupted;
    if (marker) node.article.append(el('div', { class: `message-marker ${view.status}`, role: view.status === 'failed' ? 'alert' : 'note' }, marker));
    const meta: string[] = [];
    if (view.finishReason === 'length' && view.status === 'complete') meta.push(s.finishLength);
    if (view.historyTrimmed) meta.push(format(s.historyTrimmed, view.historyTrimmed));
    if (notice) meta.push(notice);
    if (view.promptTokens !== undefined && view.completionTokens !== undefined) meta.push(format(s.tokens, view.promptTokens, view.completionTokens));
    if (meta.length) node.article.append(el('div', { class: 'message-meta' }, ...meta.map((t) => el('p', {}, t))));
  }

  private updateControls(): void {
    const s = this.strings;
    const busy = !!this.state?.busy;
    const ready = this.state?.server.model === 'ready';
    const messages = this.state?.messages ?? [];
    const last = messages.at(-1);
    const hasQuestion = messages.some((m) => m.role === 'user');
    this.sendButton.textContent = this.draftEditing ? s.editSend : s.send;
    this.sendButton.hidden = busy;
    this.sendButton.disabled = !ready || this.input.value.trim() === '';
    this.stopButton.hidden = !busy;
    this.regenerateButton.hidden = busy || !last || (last.role !== 'assistant' && last.role !== 'user') || !hasQuestion;
    this.regenerateButton.disabled = !ready;
    this.editButton.hidden = busy || !hasQuestion || this.draftEditing;
    this.cancelEditButton.hidden = !this.draftEditing;
    this.root.classList.toggle('busy', busy);
  }

  // ---------- actions ----------

  private post(msg: WebviewToHost): void {
    this.api.postMessage(msg);
  }

  private onClick(e: MouseEvent): void {
    const target = (e.target as Element | null)?.closest('button[data-action]');
    if (!target || (target as HTMLButtonElement).disabled) return;
    const action = target.getAttribute('data-action') ?? '';
    const id = target.getAttribute('data-id') ?? '';
    switch (action) {
      case 'send': this.submit(); break;
      case 'stop': this.post({ type: 'stop' }); break;
      case 'regenerate': this.post({ type: 'regenerate' }); break;
      case 'editLast': this.beginEdit(); break;
      case 'cancelEdit': this.cancelEdit(); break;
      case 'dismissError': this.errorEl.replaceChildren(); this.input.focus(); break;
      case 'newChat': this.cancelEdit(false); this.post({ type: 'newChat' }); this.input.focus(); break;
      case 'toggleHistory':
        this.historyOpen = !this.historyOpen;
        this.renderHistory();
        this.scheduleSave();
        break;
      case 'selectConversation': this.cancelEdit(false); this.post({ type: 'selectConversation', id }); break;
      case 'deleteConversation': {
        // Keep keyboard focus in the list: move it to a neighbour before the item disappears.
        const item = target.closest('li');
        const neighbour = (item?.nextElementSibling ?? item?.previousElementSibling)?.querySelector<HTMLButtonElement>('.history-select');
        (neighbour ?? this.newChatButton).focus();
        this.post({ type: 'deleteConversation', id });
        break;
      }
      case 'startServer': case 'loadModel': case 'openSettings': this.post({ type: action }); break;
      case CODE_ACTIONS.copy: case CODE_ACTIONS.insert: case CODE_ACTIONS.open: this.codeAction(action, target as HTMLButtonElement); break;
    }
  }

  private codeAction(action: string, target: HTMLButtonElement): void {
    const block = codeOfBlock(target);
    if (!block || block.code.length > LIMITS.code) return;
    if (action === CODE_ACTIONS.copy) {
      this.post({ type: 'copyCode', code: block.code });
      if (hasInvisibleCharacters(block.code)) return; // the host asks first; "Copied" would be premature
      target.textContent = this.strings.copied;
      setTimeout(() => { target.textContent = this.strings.copy; }, 1500);
    } else if (action === CODE_ACTIONS.insert) {
      this.post({ type: 'insertCode', code: block.code });
    } else {
      this.post({ type: 'openInEditor', code: block.code, language: block.language });
    }
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      // Enter sends (IME composition Enter confirms a candidate instead); Shift+Enter keeps the default newline.
      e.preventDefault();
      this.submit();
    } else if (e.key === 'Escape') {
      if (this.state?.busy) { e.preventDefault(); this.post({ type: 'stop' }); }
      else if (this.draftEditing) { e.preventDefault(); this.cancelEdit(); }
    }
  }

  private submit(): void {
    const text = this.input.value;
    if (this.state?.busy || text.trim() === '' || this.state?.server.model !== 'ready') return;
    this.post(this.draftEditing ? { type: 'editLast', text } : { type: 'send', text });
    this.errorEl.replaceChildren();
    this.input.value = '';
    this.draftEditing = false;
    this.updateControls();
    this.scheduleSave();
    this.input.focus();
  }

  private beginEdit(): void {
    const lastQuestion = [...(this.state?.messages ?? [])].reverse().find((m) => m.role === 'user');
    if (!lastQuestion) return;
    this.draftEditing = true;
    this.input.value = lastQuestion.content;
    this.updateControls();
    this.input.focus();
    this.input.setSelectionRange(this.input.value.length, this.input.value.length);
  }

  private cancelEdit(focus = true): void {
    if (!this.draftEditing) return;
    this.draftEditing = false;
    this.input.value = '';
    this.updateControls();
    if (focus) this.input.focus();
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => { this.saveTimer = undefined; this.saveNow(); }, STATE_SAVE_DELAY_MS);
  }

  /** Persists the view now (also used before the page goes away). */
  saveNow(): void {
    if (this.saveTimer) { clearTimeout(this.saveTimer); this.saveTimer = undefined; }
    this.api.setState({
      version: 1,
      state: this.state,
      strings: this.receivedStrings,
      draft: this.input.value,
      editing: this.draftEditing,
      historyOpen: this.historyOpen,
    });
  }
}

/** Whether a rendered message can be kept for a new view of it. */
function sameView(a: MessageView, b: MessageView, isStreamingNode: boolean): boolean {
  if (a.role !== b.role) return false;
  if (isStreamingNode) return b.status === 'streaming' && b.content.startsWith(a.content);
  return a.content === b.content && a.status === b.status && a.error === b.error && a.finishReason === b.finishReason
    && a.promptTokens === b.promptTokens && a.completionTokens === b.completionTokens && a.historyTrimmed === b.historyTrimmed;
}
