// The host's error for the last action. It stays until dismissed, the next question, or another conversation
// (a state update must not hide it).
import type { Strings } from '../../protocol';
import { el, iconButton } from '../shared/dom';

export class ErrorBanner {
  readonly element = el('div', { class: 'error-banner', role: 'alert' });

  show(message: string, strings: Strings): void {
    this.element.replaceChildren(el('span', { class: 'error-text' }, message),
      iconButton('close', 'dismissError', strings.dismiss, { class: 'error-dismiss' }));
  }

  clear(): void {
    this.element.replaceChildren();
  }
}
