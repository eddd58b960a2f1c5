// The host's error for the last action. It stays until dismissed, the next question, or another conversation
// (a state update must not hide it). An answer whose connection was lost can be retried from it.
import type { Strings } from '../../protocol';
import { button, el, iconButton } from '../shared/dom';

export class ErrorBanner {
  readonly element = el('div', { class: 'error-banner', role: 'alert' });

  /** `retryId`: the failed answer whose question Retry asks again. */
  show(message: string, strings: Strings, retryId?: string): void {
    this.element.replaceChildren(el('span', { class: 'error-text' }, message),
      ...(retryId ? [button(strings.retry, 'retry', { class: 'error-retry', 'data-id': retryId })] : []),
      iconButton('close', 'dismissError', strings.dismiss, { class: 'error-dismiss' }));
  }

  clear(): void {
    this.element.replaceChildren();
  }
}
