// The setup checklist shown at the top of the chat until the model is ready (managed server): every check with
// its mark (✓ passed, ✕ needs attention, ! warning, – not checked yet, ? unknown), what was found or what to do,
// and its one-click fixes; below them the one action (Start ChatGLM, or Re-check while something is missing).
// The host words everything but the button labels and decides what is offered; a click posts `setupAction`.
// Below the checks, the model choice: each catalog model with its size, fit and licence; Choose / Licence post
// `setupModel`.
import {
  format, isProtocolError, parseWebviewToHost, type SetupFixId, type SetupItemView, type SetupModelView, type SetupPrimaryId, type SetupView, type Strings,
  type WebviewToHost,
} from '../../protocol';
import { button, el } from '../shared/dom';

const MARKS: Record<SetupItemView['level'], string> = {
  ok: '✓', error: '✕', warning: '!', blocked: '–', unknown: '?', skipped: '–', pending: '',
};

export class SetupChecklist {
  readonly element = el('section', { class: 'setup', hidden: '' });
  private view: SetupView | undefined;
  /** The folded list of passed checks stays open across updates once opened. */
  private passedOpen = false;
  /** The same for the model choice: folded to the chosen model's name, so the checks keep the view. */
  private modelsOpen = false;

  /** Shown now: the server notice stays hidden meanwhile (one box, not two). */
  get visible(): boolean {
    return !!this.view?.visible;
  }

  /** `modelName`: the model the title names ("Set up GLM-4-9B-Chat"). */
  render(view: SetupView | undefined, strings: Strings, modelName: string): void {
    this.view = view;
    this.element.hidden = !view?.visible;
    if (!view?.visible) {
      this.element.replaceChildren();
      return;
    }
    const focused = focusKey(this.element);
    this.element.setAttribute('aria-label', strings.setupLabel);
    this.element.dataset.phase = view.phase;
    this.element.setAttribute('aria-busy', String(view.checking || view.phase === 'busy'));
    const parts: HTMLElement[] = [
      el('h2', { class: 'setup-title' }, format(setupTitle(view, strings), modelName)),
      el('p', { class: 'setup-summary', role: 'status' }, view.summary),
    ];
    if (view.failure) parts.push(el('p', { class: 'setup-failure' }, view.failure));
    // Nothing to do about passed checks once everything is in place (or starting): folded away (open on request),
    // while warnings and unknowns stay in sight. While something is missing every check is listed.
    const folded = view.phase === 'ready' || view.phase === 'busy' ? view.items.filter((i) => i.level === 'ok') : [];
    const listed = view.items.filter((i) => !folded.includes(i));
    if (listed.length) parts.push(el('ul', { class: 'setup-items' }, ...listed.map((item) => this.item(item, strings))));
    if (folded.length) parts.push(this.passed(folded, view.items.length, strings));
    if (view.models?.length) parts.push(this.modelChoice(view.models, strings));
    const actions = this.actions(view, strings);
    if (actions.childElementCount) parts.push(actions);
    this.element.replaceChildren(...parts);
    if (focused) this.element.querySelector<HTMLButtonElement>(`button[data-key="${focused}"]`)?.focus();
  }

  private modelChoice(models: SetupModelView[], strings: Strings): HTMLElement {
    const chosen = models.find((m) => m.chosen)?.label ?? '';
    const details = el('details', { class: 'setup-models', 'aria-label': strings.setupModels },
      el('summary', {}, format(strings.setupModelSummary, chosen, models.length)),
      modelRows(models, strings));
    details.open = this.modelsOpen;
    details.addEventListener('toggle', () => { this.modelsOpen = details.open; });
    return details;
  }

  private passed(items: SetupItemView[], total: number, strings: Strings): HTMLElement {
    const details = el('details', { class: 'setup-passed' },
      el('summary', {}, format(strings.setupPassed, items.length, total)),
      el('ul', { class: 'setup-items' }, ...items.map((item) => this.item(item, strings))));
    details.open = this.passedOpen;
    details.addEventListener('toggle', () => { this.passedOpen = details.open; });
    return details;
  }

  private item(item: SetupItemView, strings: Strings): HTMLElement {
    const mark = el('span', { class: 'setup-mark', 'aria-hidden': 'true' }, MARKS[item.level]);
    const text = el('div', { class: 'setup-text' },
      el('span', { class: 'setup-label' }, item.label),
      el('span', { class: 'visually-hidden' }, ` (${strings[`setupLevel.${item.level}`]})`));
    if (item.detail) text.append(el('span', { class: 'setup-detail' }, item.detail));
    if (item.fixes.length) {
      text.append(el('div', { class: 'setup-fixes' }, ...item.fixes.map((fix) => actionButton(strings[`setupFix.${fix}`], fix, item.id))));
    }
    return el('li', { class: 'setup-item', 'data-check': item.id, 'data-level': item.level }, mark, text);
  }

  private actions(view: SetupView, strings: Strings): HTMLElement {
    const row = el('div', { class: 'setup-actions' });
    if (view.primary) {
      const primary = view.primary === 'recheck' ? recheckButton(view, strings) : actionButton(primaryLabel(view.primary, strings), view.primary);
      primary.classList.add('primary');
      row.append(primary);
    }
    // Re-check beside Start ChatGLM: something may have changed outside VS Code (Docker started, files copied).
    if (view.primary === 'startChatglm' && view.phase === 'ready') row.append(recheckButton(view, strings));
    return row;
  }
}

/** The catalog models, the chosen one marked; its rows are text from the host (never markup). */
function modelRows(models: SetupModelView[], strings: Strings): HTMLElement {
  return el('ul', { class: 'setup-items' }, ...models.map((m) => {
    const name = el('span', { class: 'setup-label' }, m.label);
    if (m.chosen) name.append(el('span', { class: 'setup-model-chosen' }, ` (${strings.setupModelChosen})`));
    const buttons: HTMLElement[] = [];
    if (!m.chosen) buttons.push(modelButton(strings.setupModelChoose, 'choose', m.id));
    buttons.push(modelButton(strings.setupModelLicense, 'license', m.id));
    const text = el('div', { class: 'setup-text' }, name,
      el('span', { class: 'setup-detail', 'data-fit': m.fit }, m.detail),
      el('span', { class: 'setup-detail setup-license' }, m.license),
      el('div', { class: 'setup-fixes' }, ...buttons));
    return el('li', { class: 'setup-item setup-model', 'data-model': m.id, 'data-chosen': String(m.chosen) }, text);
  }));
}

function modelButton(label: string, action: 'choose' | 'license', id: string): HTMLButtonElement {
  return button(label, 'setupModel', { 'data-model-action': action, 'data-model': id, 'data-key': `model.${id}.${action}` });
}

/** The message a model button posts (the host checks the id against the catalog); undefined if malformed. */
export function setupModelMessage(target: Element): WebviewToHost | undefined {
  const message = parseWebviewToHost({ type: 'setupModel', action: target.getAttribute('data-model-action'), id: target.getAttribute('data-model') });
  return isProtocolError(message) ? undefined : message;
}

/** "Set up {0}" only while something is missing or being checked; otherwise the state it is in. */
function setupTitle(view: SetupView, strings: Strings): string {
  switch (view.phase) {
    case 'checking': case 'needed': return strings.setupTitle;
    case 'ready': return strings.setupTitleStopped;
    case 'running': return strings.setupTitleUnloaded;
    case 'busy': return strings.setupTitleBusy;
  }
}

/** While a check runs it says so and does nothing; aria-disabled (not disabled) keeps the keyboard focus on it. */
function recheckButton(view: SetupView, strings: Strings): HTMLButtonElement {
  const recheck = actionButton(view.checking ? strings.setupChecking : strings.setupRecheck, 'recheck');
  if (view.checking) recheck.setAttribute('aria-disabled', 'true');
  return recheck;
}

function primaryLabel(primary: SetupPrimaryId, strings: Strings): string {
  return primary === 'startChatglm' ? strings.startChatglm : strings.setupRecheck;
}

function actionButton(label: string, action: SetupFixId | SetupPrimaryId, check?: string): HTMLButtonElement {
  const key = check ? `${check}.${action}` : action;
  return button(label, 'setupAction', { 'data-fix': action, ...(check ? { 'data-check': check } : {}), 'data-key': key });
}

function focusKey(root: HTMLElement): string | undefined {
  const active = root.ownerDocument.activeElement;
  return active instanceof HTMLButtonElement && root.contains(active) ? active.dataset.key : undefined;
}

/** The message a checklist button posts (the host checks again that it offered it); undefined if malformed. */
export function setupActionMessage(target: Element): WebviewToHost | undefined {
  if (target.getAttribute('aria-disabled') === 'true') return undefined;
  const check = target.getAttribute('data-check');
  const message = parseWebviewToHost({ type: 'setupAction', action: target.getAttribute('data-fix'), ...(check ? { check } : {}) });
  return isProtocolError(message) ? undefined : message;
}
