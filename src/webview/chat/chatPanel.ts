// The chat panel: renders the host's state through its parts (server notice, conversation list, messages,
// composer), streams answers, and turns the user's clicks into protocol messages. Every visible string comes from
// `strings` (the host's l10n bundle over English defaults).
import {
  format,
  isProtocolError,
  LIMITS,
  mergeStrings,
  parseHostToWebview,
  type HostToWebview,
  type StateMessage,
  type Strings,
  type WebviewToHost,
} from '../../protocol';
import { button, el } from '../shared/dom';
import type { ChatContext } from './chatContext';
import { CODE_ACTIONS, codeOfBlock } from './code-blocks';
import { Composer } from './composer';
import { ErrorBanner } from './errorBanner';
import { HistoryList } from './historyList';
import { createMarkdownRenderer } from './markdown';
import { MessageList } from './messageList';
import { restoreState, StateSaver, type ChatVsCodeApi } from './persistedState';
import { ServerNotice } from './serverNotice';
import { applyDelta, applyDone } from './stateUpdates';

/** How long a code block's Copy button says "Copied". */
const COPIED_FEEDBACK_MS = 1500;

export class ChatPanel implements ChatContext {
  private currentStrings: Strings;
  private currentState: StateMessage | null;
  /** The host's translations as received (persisted; the strings are derived from them). */
  private receivedStrings: Record<string, string>;
  private readonly saver: StateSaver;
  private readonly newChatButton: HTMLButtonElement;
  private readonly serverNotice = new ServerNotice();
  private readonly errorBanner = new ErrorBanner();
  private readonly history: HistoryList;
  private readonly messages: MessageList;
  private readonly composer: Composer;

  constructor(private readonly root: HTMLElement, private readonly api: ChatVsCodeApi) {
    const restored = restoreState(api);
    this.receivedStrings = restored?.strings ?? {};
    this.currentStrings = mergeStrings(this.receivedStrings);
    this.currentState = restored?.state ?? null;
    this.saver = new StateSaver(api, () => ({
      version: 1,
      state: this.state,
      strings: this.receivedStrings,
      draft: this.composer.draft,
      editing: this.composer.isEditing,
      historyOpen: this.history.isOpen,
    }));

    this.newChatButton = button('', 'newChat');
    this.history = new HistoryList(this, restored?.historyOpen ?? false);
    this.messages = new MessageList(this, createMarkdownRenderer((what) => format(this.strings.imageRemoved, what)));
    this.composer = new Composer(this, { draft: restored?.draft ?? '', editing: restored?.editing ?? false }, () => this.errorBanner.clear());
    const toolbar = el('header', { class: 'toolbar' }, this.newChatButton, this.history.toggle);
    root.replaceChildren(toolbar, this.serverNotice.element, this.history.element, this.errorBanner.element,
      this.messages.emptyNote, this.messages.element, this.composer.element);

    root.addEventListener('click', (e) => this.onClick(e));
    window.addEventListener('message', (e: MessageEvent) => this.receive(e.data));

    this.applyStrings();
    this.renderAll();
    this.postToHost({ type: 'ready' });
  }

  get strings(): Strings {
    return this.currentStrings;
  }

  get state(): StateMessage | null {
    return this.currentState;
  }

  postToHost(message: WebviewToHost): void {
    this.api.postMessage(message);
  }

  scheduleSave(): void {
    this.saver.schedule();
  }

  /** Persists the view now (before the page goes away). */
  saveNow(): void {
    this.saver.saveNow();
  }

  /** Handles one message from the host; malformed ones are ignored (and logged) without touching the UI. */
  receive(raw: unknown): void {
    const message = parseHostToWebview(raw);
    if (isProtocolError(message)) {
      console.warn(`chat webview: ${message.error}`);
      return;
    }
    this.handle(message);
  }

  private handle(message: HostToWebview): void {
    switch (message.type) {
      case 'l10n':
        this.receivedStrings = message.strings;
        this.currentStrings = mergeStrings(message.strings);
        this.applyStrings();
        this.messages.forgetRendered(); // labels inside messages (markers, code buttons) are localized too
        this.renderAll();
        break;
      case 'state':
        if (this.state?.activeId !== message.activeId) {
          this.composer.cancelEdit(false);
          this.messages.pinToBottom();
          this.errorBanner.clear();
        }
        this.currentState = message;
        this.renderAll();
        break;
      case 'delta':
        if (applyDelta(this.state, message.conversationId, message.messageId, message.text)) {
          this.messages.appendStreamed(message.messageId, message.text);
          this.scheduleSave();
        }
        return; // state is saved when the answer ends (and periodically above)
      case 'messageDone': {
        const view = applyDone(this.state, message);
        if (view) {
          this.messages.finish(view);
          this.updateControls();
        }
        break;
      }
      case 'error':
        this.errorBanner.show(message.message, this.strings, message.retry);
        break;
      case 'focusInput':
        this.composer.focus();
        return;
    }
    this.scheduleSave();
  }

  private applyStrings(): void {
    this.root.setAttribute('aria-label', this.strings.panelLabel);
    this.newChatButton.textContent = this.strings.newChat;
    this.history.applyStrings();
    this.messages.applyStrings();
    this.composer.applyStrings();
  }

  private renderAll(): void {
    this.serverNotice.render(this.state?.server, this.strings);
    this.history.render();
    this.messages.render();
    this.updateControls();
  }

  private updateControls(): void {
    this.composer.updateControls();
    this.root.classList.toggle('busy', !!this.state?.busy);
  }

  /** One delegated handler for every button: each carries its action in data-action (and an id in data-id). */
  private onClick(e: MouseEvent): void {
    const target = (e.target as Element | null)?.closest('button[data-action]');
    if (!target || (target as HTMLButtonElement).disabled) return;
    const action = target.getAttribute('data-action') ?? '';
    const id = target.getAttribute('data-id') ?? '';
    switch (action) {
      case 'send': this.composer.submit(); break;
      case 'stop': this.postToHost({ type: 'stop' }); break;
      case 'regenerate': this.postToHost({ type: 'regenerate' }); break;
      case 'editLast': this.composer.beginEdit(); break;
      case 'cancelEdit': this.composer.cancelEdit(); break;
      case 'dismissError': this.errorBanner.clear(); this.composer.focus(); break;
      case 'retry': this.errorBanner.clear(); this.postToHost({ type: 'retry', messageId: id }); break;
      case 'newChat': this.composer.cancelEdit(false); this.postToHost({ type: 'newChat' }); this.composer.focus(); break;
      case 'toggleHistory': this.history.toggleOpen(); break;
      case 'selectConversation': this.composer.cancelEdit(false); this.postToHost({ type: 'selectConversation', id }); break;
      case 'deleteConversation': this.history.deleteConversation(target, id, this.newChatButton); break;
      case 'startServer': case 'loadModel': case 'openSettings': this.postToHost({ type: action }); break;
      case CODE_ACTIONS.copy: case CODE_ACTIONS.insert: case CODE_ACTIONS.open: this.codeAction(action, target as HTMLButtonElement); break;
    }
  }

  private codeAction(action: string, target: HTMLButtonElement): void {
    const block = codeOfBlock(target);
    if (!block || block.code.length > LIMITS.code) return;
    if (action === CODE_ACTIONS.copy) {
      this.postToHost({ type: 'copyCode', code: block.code });
      target.textContent = this.strings.copied;
      setTimeout(() => { target.textContent = this.strings.copy; }, COPIED_FEEDBACK_MS);
    } else if (action === CODE_ACTIONS.insert) {
      this.postToHost({ type: 'insertCode', code: block.code });
    } else {
      this.postToHost({ type: 'openInEditor', code: block.code, language: block.language });
    }
  }
}
