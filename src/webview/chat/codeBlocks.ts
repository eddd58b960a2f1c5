// Wraps each rendered <pre><code> in a block under a one-line toolbar: the language, then icon buttons (Copy, Insert
// at Cursor, Open in Editor, Apply to Selection; each with a tooltip and an accessible name naming the block). Lays
// large plain code out in chunks (codeChunks.ts) and marks the invisible characters of all code (blocks and inline).
// The buttons carry only data-action; one delegated click handler (chatPanel.ts) reads the code from the DOM text.
import { format, LANGUAGE_PATTERN, type Strings } from '../../protocol';
import { chunkLargeCode } from './codeChunks';
import { el, iconButton } from '../shared/dom';
import { markInvisibleCharacters } from './invisibleMarks';

export const CODE_ACTIONS = { copy: 'codeCopy', insert: 'codeInsert', apply: 'codeApply', open: 'codeOpen' } as const;

/** The toolbar's buttons in order: action, codicon, label. */
const CODE_BUTTONS = [
  [CODE_ACTIONS.copy, 'copy', 'copy'],
  [CODE_ACTIONS.insert, 'insert', 'insert'],
  [CODE_ACTIONS.open, 'new-file', 'openInEditor'],
  [CODE_ACTIONS.apply, 'diff', 'applyToSelection'],
] as const;

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
      ...CODE_BUTTONS.map(([action, name, key]) => iconButton(name, action, `${strings[key]}: ${label}`, {}, strings[key])),
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
