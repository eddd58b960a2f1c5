// Wraps each rendered <pre><code> in a block under a toolbar: the language, then the actions as words (Copy, Insert,
// Open, Apply, each with its icon while the block is wide enough, a tooltip and an accessible name naming the block),
// and Wrap, which wraps the long lines of every code block of the panel instead of scrolling them sideways. Lays
// large plain code out in chunks (codeChunks.ts) and marks the invisible characters of all code (blocks and inline).
// The buttons carry only data-action; one delegated click handler (chatPanel.ts) reads the code from the DOM text.
import { format, LANGUAGE_PATTERN, type Strings } from '../../protocol';
import { chunkLargeCode } from './codeChunks';
import { el, icon } from '../shared/dom';
import { markInvisibleCharacters } from './invisibleMarks';

export const CODE_ACTIONS = { copy: 'codeCopy', insert: 'codeInsert', apply: 'codeApply', open: 'codeOpen', wrap: 'codeWrap' } as const;

/** The toolbar's buttons in order: action, codicon, the word shown, the full name (tooltip and accessible name). */
const CODE_BUTTONS = [
  [CODE_ACTIONS.copy, 'copy', 'copy', 'copy'],
  [CODE_ACTIONS.insert, 'insert', 'insertShort', 'insert'],
  [CODE_ACTIONS.open, 'new-file', 'openShort', 'openInEditor'],
  [CODE_ACTIONS.apply, 'diff', 'applyShort', 'applyToSelection'],
] as const;

/** The panel-wide "wrap long lines" choice: a class on the panel's root (see the CSS), so new blocks follow it. */
export const CODE_WRAP_CLASS = 'code-wrap';

/** A toolbar button: its icon, then its word (`.action-word`: Copy turns it into "Copied" for a moment). */
function codeButton(action: string, iconName: string, word: string, label: string, tooltip: string, attrs: Record<string, string> = {}): HTMLButtonElement {
  return el('button', { type: 'button', class: 'code-action', 'data-action': action, 'aria-label': label, title: tooltip, ...attrs },
    icon(iconName), el('span', { class: 'action-word' }, word));
}

/** Whether the panel wraps code now (read when a block is built; chatPanel.ts toggles it). */
function wrapping(node: Node): boolean {
  return !!(node.ownerDocument ?? document).getElementById('root')?.classList.contains(CODE_WRAP_CLASS);
}

export function languageOf(code: Element): string {
  for (const cls of Array.from(code.classList)) {
    if (cls.startsWith('language-')) {
      const lang = cls.slice('language-'.length);
      return LANGUAGE_PATTERN.test(lang) ? lang : '';
    }
  }
  return '';
}

export function decorateCodeBlocks(root: DocumentFragment | Element, strings: Strings): void {
  for (const pre of Array.from(root.querySelectorAll('pre'))) {
    if (pre.parentElement?.classList.contains('code-block')) continue;
    const code = pre.querySelector('code');
    const lang = code ? languageOf(code) : '';
    const label = lang ? format(strings.codeBlock, lang) : strings.codeBlockPlain;
    const toolbar = el('div', { class: 'code-toolbar', role: 'toolbar', 'aria-label': strings.codeToolbar },
      el('span', { class: 'code-lang', title: lang || undefined }, lang),
      ...CODE_BUTTONS.map(([action, name, word, full]) => codeButton(action, name, strings[word], `${strings[full]}: ${label}`, strings[full])),
      codeButton(CODE_ACTIONS.wrap, 'word-wrap', strings.wrapShort, strings.wrapLines, strings.wrapLines, { 'aria-pressed': String(wrapping(root)) }),
    );
    const block = el('div', { class: 'code-block', role: 'group', 'aria-label': label, 'data-lang': lang });
    if (code) chunkLargeCode(code as HTMLElement, strings);
    pre.setAttribute('tabindex', '0');
    pre.replaceWith(block);
    block.append(toolbar, pre);
  }
  markInvisibleCharacters(root, strings);
}

/** The code of the block containing `target` (the text the user sees, one trailing newline dropped). */
export function codeOfBlock(target: Element): { code: string; language: string } | undefined {
  const block = target.closest('.code-block');
  const code = block?.querySelector('pre code') ?? block?.querySelector('pre');
  if (!block || !code) return undefined;
  return { code: (code.textContent ?? '').replace(/\n$/, ''), language: block.getAttribute('data-lang') ?? '' };
}
