// The chat panel: renders the host's state through its parts (server notice, empty state, messages, composer),
// streams answers, and turns the user's clicks into protocol messages. Like Copilot Chat it has no buttons of its
// own above the messages: New Chat and the history are the view's title actions. Every visible string comes from
// `strings` (the host's l10n bundle over English defaults).
import {
  format,
  isProtocolError,
  LIMITS,
  mergeStrings,
  parseHostToWebview,
  type HostToWebview,
  type SetupView,
  type StateMessage,
  type Strings,
  type WebviewToHost,
} from '../../protocol';
import { hasInvisibleCharacters } from '../../core/text/invisibleCharacters';
import { icon } from '../shared/dom';
import type { ChatContext } from './chatContext';
import { CODE_ACTIONS, CODE_WRAP_CLASS, codeOfBlock } from './codeBlocks';
import { Composer } from './composer';
import { EmptyState, EXAMPLE_ACTION, type EditorKeys } from './emptyState';
import { ErrorBanner } from './errorBanner';
import { interceptLinks } from './links';
import { createMarkdownRenderer } from './markdown';
import { MESSAGE_ACTIONS } from './messageActions';
import { MessageList } from './messageList';
import { restoreState, StateSaver, type ChatVsCodeApi } from './persistedState';
import { ServerNotice } from './serverNotice';
import { SetupChecklist, setupActionMessage, setupModelMessage } from './setupChecklist';
import { applyDelta, applyDone } from './stateUpdates';

/** How long a Copy button says "Copied". */
const COPIED_FEEDBACK_MS = 1500;

export class ChatPanel implements ChatContext {
  private currentStrings: Strings;
  private currentState: StateMessage | null;
  /** The host's translations as received (persisted; the strings are derived from them). */
  private receivedStrings: Record<string, string>;
  private readonly saver: StateSaver;
  private readonly serverNotice = new ServerNotice();
  private readonly setup = new SetupChecklist();
  private setupView: SetupView | undefined;
  private readonly errorBanner = new ErrorBanner();
  private readonly emptyState = new EmptyState();
  /** The keys of Explain and Edit Selection the welcome names (the host's `keybindings`). */
  private editorKeys: EditorKeys = {};
  private readonly messages: MessageList;
  private readonly composer: Composer;

  constructor(private readonly root: HTMLElement, private readonly api: ChatVsCodeApi) {
    const restored = restoreState(api);
    this.receivedStrings = restored?.strings ?? {};
    this.currentStrings = mergeStrings(this.receivedStrings);
    this.currentState = restored?.state ?? null;
    this.saver = new StateSaver(api, () => ({
      version: 2,
      state: this.state,
      strings: this.receivedStrings,
      draft: this.composer.draft,
      ...(this.messages.editing ? { editing: this.messages.editing } : {}),
    }));

    const imageText = (what: string) => format(this.strings.imageRemoved, what);
    this.messages = new MessageList(this, createMarkdownRenderer(imageText), createMarkdownRenderer(imageText, { breaks: true }), () => this.composer.focus());
    this.composer = new Composer(this, { draft: restored?.draft ?? '' }, () => this.errorBanner.clear());
    root.replaceChildren(this.setup.element, this.serverNotice.element, this.errorBanner.element, this.emptyState.element, this.messages.element, this.composer.element);

    root.addEventListener('click', (e) => this.onClick(e));
    interceptLinks(root, (m) => this.postToHost(m));
    window.addEventListener('message', (e: MessageEvent) => this.receive(e.data));
    // The view got the focus (opened, clicked into, Open Chat): the input takes it, as in Copilot Chat. The host
    // is told, for the keybindings that apply inside the panel (Ctrl+L: New Chat).
    window.addEventListener('focus', () => {
      if (document.activeElement === document.body || document.activeElement === null) this.composer.focus();
      this.postToHost({ type: 'focusChanged', focused: true });
    });
    window.addEventListener('blur', () => this.postToHost({ type: 'focusChanged', focused: false }));

    this.applyStrings();
    this.renderAll();
    this.composer.layout();
    // Only when the view has the focus already: a panel loading in the background must not take it from, say, an
    // open quick pick (VS Code gives the view the focus when it opens it, and the focus listener above follows).
    if (restored?.editing) this.messages.beginEdit(restored.editing.messageId, restored.editing.text);
    else if (document.hasFocus()) this.composer.focus();
    this.postToHost({ type: 'ready' });
    if (document.hasFocus()) this.postToHost({ type: 'focusChanged', focused: true });
  }

  get strings(): Strings {
    return this.currentStrings;
  }

  get state(): StateMessage | null {
    return this.currentState;
  }

  get modelName(): string {
    return this.currentState?.modelName ?? 'ChatGLM';
  }

  postToHost(message: WebviewToHost): void {
    this.api.postMessage(message);
  }

  scheduleSave(): void {
    this.saver.schedule();
  }

  focusServerAction(): boolean {
    const action = this.setup.visible
      ? this.setup.element.querySelector<HTMLButtonElement>('.setup-actions button.primary')
      : this.serverNotice.element.hidden ? null : this.serverNotice.element.querySelector<HTMLButtonElement>('.server-actions button');
    action?.focus();
    return !!action;
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
        this.messages.forgetRendered(); // labels inside messages (markers, toolbars, code buttons) are localized too
        this.renderAll();
        break;
      case 'state':
        if (this.state?.activeId !== message.activeId) {
          this.messages.reset();
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
      case 'keybindings':
        this.editorKeys = { ...(message.explain ? { explain: message.explain } : {}), ...(message.edit ? { edit: message.edit } : {}) };
        this.renderAll();
        return;
      case 'setup':
        this.setupView = message.setup;
        this.renderAll();
        return;
      case 'attachments':
        this.composer.showAttachments(message);
        return;
      case 'budget':
        this.composer.setBudget(message);
        return;
      case 'draft':
        this.composer.restoreDraft(message.text);
        break;
    }
    this.scheduleSave();
  }

  private applyStrings(): void {
    this.root.setAttribute('aria-label', this.strings.panelLabel);
    this.messages.applyStrings();
    this.composer.applyStrings();
  }

  private renderAll(): void {
    this.renderServerBox();
    const state = this.state;
    // Nothing asked yet and the model ready: the welcome. Until then the checklist or the server notice says why.
    const empty = !!state && state.messages.length === 0 && state.server.model === 'ready' && !this.setup.visible;
    this.emptyState.element.hidden = !empty;
    if (empty) this.emptyState.render(state.modelName, this.strings, this.editorKeys);
    this.messages.render();
    this.updateControls();
  }

  /** The setup checklist while the host shows one, else the server notice: never both. */
  private renderServerBox(): void {
    this.setup.render(this.setupView, this.strings, this.modelName);
    this.serverNotice.render(this.state?.server, this.strings, this.modelName);
    if (this.setup.visible) this.serverNotice.element.hidden = true;
  }

  private updateControls(): void {
    this.composer.updateControls();
    this.root.classList.toggle('busy', !!this.state?.busy);
    this.root.classList.toggle('model-not-ready', !!this.state && this.state.server.model !== 'ready');
  }

  /** One delegated handler for every button: each carries its action in data-action (and an id in data-id). */
  private onClick(e: MouseEvent): void {
    const target = (e.target as Element | null)?.closest('button[data-action]');
    if (!target || (target as HTMLButtonElement).disabled) return;
    const action = target.getAttribute('data-action') ?? '';
    const messageId = target.getAttribute('data-id') ?? '';
    switch (action) {
      case 'send': this.composer.submit(); break;
      case 'stop': this.postToHost({ type: 'stop' }); break;
      case 'dismissError': this.errorBanner.clear(); this.composer.focus(); break;
      case 'retry': this.errorBanner.clear(); this.postToHost({ type: 'retry', messageId }); break;
      case EXAMPLE_ACTION: this.composer.sendText(target.getAttribute('data-text') ?? ''); break;
      case MESSAGE_ACTIONS.copy: this.copyMessage(messageId, target as HTMLButtonElement); break;
      case MESSAGE_ACTIONS.regenerate: this.postToHost({ type: 'regenerate', messageId }); this.composer.focus(); break;
      case MESSAGE_ACTIONS.edit: this.messages.beginEdit(messageId); break;
      case MESSAGE_ACTIONS.continue: this.postToHost({ type: 'continueAnswer', messageId }); this.composer.focus(); break;
      case 'startServer': case 'loadModel': case 'openSettings': this.postToHost({ type: action }); break;
      case 'reloadModel': this.postToHost({ type: 'loadModel' }); break; // the host's load unloads a faulted model first
      case 'setupAction': { const m = setupActionMessage(target); if (m) this.postToHost(m); break; }
      case 'setupModel': { const m = setupModelMessage(target); if (m) this.postToHost(m); break; }
      case CODE_ACTIONS.copy: case CODE_ACTIONS.insert: case CODE_ACTIONS.open: case CODE_ACTIONS.apply: this.codeAction(action, target as HTMLButtonElement); break;
      case CODE_ACTIONS.wrap: this.toggleCodeWrap(); break;
    }
  }

  private copyMessage(messageId: string, target: HTMLButtonElement): void {
    this.postToHost({ type: 'copyMessage', messageId });
    const content = this.state?.messages.find((m) => m.id === messageId)?.content ?? '';
    if (!hasInvisibleCharacters(content)) this.showCopied(target, this.strings.copiedMessage); // otherwise the host asks first
  }

  /** A Copy button (of a message or a code block) shows a check mark and says "Copied" for a moment. */
  private showCopied(target: HTMLButtonElement, copied: string): void {
    if (target.hasAttribute('data-copied')) return; // clicked again while it says so: keep the labels to restore
    target.setAttribute('data-copied', '');
    const label = target.getAttribute('aria-label') ?? '';
    const tooltip = target.title;
    const word = target.querySelector('.action-word');
    const shownWord = word?.textContent ?? '';
    target.querySelector('.codicon')?.replaceWith(icon('check'));
    if (word) word.textContent = copied;
    target.title = copied;
    target.setAttribute('aria-label', copied);
    setTimeout(() => {
      target.querySelector('.codicon')?.replaceWith(icon('copy'));
      if (word) word.textContent = shownWord;
      target.title = tooltip;
      target.setAttribute('aria-label', label);
      target.removeAttribute('data-copied');
    }, COPIED_FEEDBACK_MS);
  }

  /** Wrap: the long lines of every code block wrap (or scroll sideways again); every Wrap button says which. */
  private toggleCodeWrap(): void {
    const on = this.root.classList.toggle(CODE_WRAP_CLASS);
    for (const b of Array.from(this.root.querySelectorAll(`button[data-action="${CODE_ACTIONS.wrap}"]`))) b.setAttribute('aria-pressed', String(on));
  }

  private codeAction(action: string, target: HTMLButtonElement): void {
    const block = codeOfBlock(target);
    if (!block || block.code.length > LIMITS.code) return;
    if (action === CODE_ACTIONS.copy) {
      this.postToHost({ type: 'copyCode', code: block.code });
      if (!hasInvisibleCharacters(block.code)) this.showCopied(target, this.strings.copied); // otherwise the host asks first
    } else if (action === CODE_ACTIONS.insert) {
      this.postToHost({ type: 'insertCode', code: block.code });
    } else if (action === CODE_ACTIONS.apply) {
      this.postToHost({ type: 'applyCode', code: block.code });
    } else {
      this.postToHost({ type: 'openInEditor', code: block.code, language: block.language });
    }
  }
}
