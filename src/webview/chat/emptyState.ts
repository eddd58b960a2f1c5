// What a new chat shows while the model is ready and nothing was asked yet: the model's name, what it is, example
// questions to click (each one is sent as it is), and the keys of the panel.
import { type Strings } from '../../protocol';
import { el, icon } from '../shared/dom';

export const EXAMPLE_ACTION = 'askExample';
const EXAMPLES = ['example1', 'example2', 'example3'] as const;

export class EmptyState {
  readonly element = el('section', { class: 'empty-state' });

  render(modelName: string, strings: Strings): void {
    const examples = EXAMPLES.map((key) => {
      const b = el('button', { type: 'button', class: 'example', 'data-action': EXAMPLE_ACTION, 'data-text': strings[key] }, icon('comment'), el('span', {}, strings[key]));
      return el('li', {}, b);
    });
    const keys = [
      [strings.keySend, 'Enter'],
      [strings.keyNewLine, 'Shift+Enter'],
      [strings.keyRecall, '↑'],
      [strings.keyStop, 'Esc'],
      [strings.keyNewChat, 'Ctrl+L'],
    ].map(([template, key]) => el('li', {}, ...withKey(template!, key!)));
    this.element.replaceChildren(
      el('div', { class: 'empty-logo', 'aria-hidden': 'true' }),
      el('h2', { class: 'empty-title' }, modelName),
      el('p', { class: 'empty-tagline' }, strings.emptyTagline),
      el('h3', { class: 'empty-heading', id: 'empty-examples' }, strings.examplesLabel),
      el('ul', { class: 'empty-examples', 'aria-labelledby': 'empty-examples' }, ...examples),
      el('ul', { class: 'empty-keys', 'aria-label': strings.keysLabel }, ...keys),
    );
  }
}

/** "{0} to send" with the key in a <kbd> where {0} is. */
function withKey(template: string, key: string): Array<Node | string> {
  const [before, after] = template.includes('{0}') ? template.split('{0}', 2) as [string, string] : [`${template} `, ''];
  return [before, el('kbd', {}, key), after];
}
