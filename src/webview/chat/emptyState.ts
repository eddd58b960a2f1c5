// What a new chat shows while the model is ready and nothing was asked yet: the model's name, what it is, example
// questions to click (each one is sent as it is), the other ways to ask — `#` context, `/` commands, and Explain and
// Edit Selection in the editor with the keys the manifest binds (the host sends them; the Mac's where the panel runs
// on a Mac) — and the keys of the panel.
import { keyLabel } from '../../core/text/keybindings';
import { type KeyBindingView, type Strings } from '../../protocol';
import { el, icon } from '../shared/dom';

export const EXAMPLE_ACTION = 'askExample';
const EXAMPLES = ['example1', 'example2', 'example3'] as const;

/** The editor commands the welcome names, with their keys (undefined until the host says, or if unbound). */
export interface EditorKeys {
  explain?: KeyBindingView;
  edit?: KeyBindingView;
}

/** Whether the panel runs on a Mac (the webview runs where the user's VS Code window does, also for a remote host). */
export function onMac(nav: Pick<Navigator, 'platform' | 'userAgent'> = navigator): boolean {
  return /^Mac|iPhone|iPad/.test(nav.platform) || /Macintosh/.test(nav.userAgent);
}

export class EmptyState {
  readonly element = el('section', { class: 'empty-state' });

  render(modelName: string, strings: Strings, keys: EditorKeys): void {
    const examples = EXAMPLES.map((key) => {
      const b = el('button', { type: 'button', class: 'example', 'data-action': EXAMPLE_ACTION, 'data-text': strings[key] }, icon('comment'), el('span', {}, strings[key]));
      return el('li', {}, b);
    });
    const mac = onMac();
    const way = (name: string, template: string, key: string) => el('li', { 'data-hint': name }, ...withKey(template, key));
    /** An editor command with its key, or without one (unbound, or before the host said) by its menu. */
    const command = (name: string, binding: KeyBindingView | undefined, template: string, noKey: string) =>
      (binding ? way(name, template, keyLabel(binding, mac)) : el('li', { 'data-hint': name }, noKey));
    const ways = [
      way('context', strings.hintContext, '#'),
      way('commands', strings.hintCommands, '/'),
      command('explain', keys.explain, strings.hintExplain, strings.hintExplainNoKey),
      command('edit', keys.edit, strings.hintEdit, strings.hintEditNoKey),
    ];
    const panelKeys = [
      [strings.keySend, 'Enter'],
      [strings.keyNewLine, 'Shift+Enter'],
      [strings.keyRecall, '↑'],
      [strings.keyStop, 'Esc'],
      [strings.keyNewChat, mac ? '⌃L' : 'Ctrl+L'],
    ].map(([template, key]) => el('li', {}, ...withKey(template!, key!)));
    this.element.replaceChildren(
      el('div', { class: 'empty-logo', 'aria-hidden': 'true' }),
      el('h2', { class: 'empty-title' }, modelName),
      el('p', { class: 'empty-tagline' }, strings.emptyTagline),
      el('h3', { class: 'empty-heading', id: 'empty-examples' }, strings.examplesLabel),
      el('ul', { class: 'empty-examples', 'aria-labelledby': 'empty-examples' }, ...examples),
      el('h3', { class: 'empty-heading', id: 'empty-ways' }, strings.waysLabel),
      el('ul', { class: 'empty-ways', 'aria-labelledby': 'empty-ways' }, ...ways),
      el('ul', { class: 'empty-keys', 'aria-label': strings.keysLabel }, ...panelKeys),
    );
  }
}

/** "{0} to send" with the key in a <kbd> where {0} is. */
function withKey(template: string, key: string): Array<Node | string> {
  const [before, after] = template.includes('{0}') ? template.split('{0}', 2) as [string, string] : [`${template} `, ''];
  return [before, el('kbd', {}, key), after];
}
