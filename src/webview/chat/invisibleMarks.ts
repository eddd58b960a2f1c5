// Makes invisible and bidirectional control characters visible in code (like the editor's unicode highlighting):
// each becomes a marker showing its code point, with a tooltip naming it. The character itself stays in the DOM,
// inside an element that is not rendered, so it can no longer reorder or hide the code around it, while Copy and
// Insert still see the exact text (and the host warns before passing it on).
import { codePointLabel, invisibleCharacterName, invisibleCharacterPattern } from '../../core/text/invisibleCharacters';
import { format, type Strings } from '../../protocol';
import { el } from '../shared/dom';

export function invisibleMarker(ch: string, strings: Strings): HTMLElement {
  const cp = ch.codePointAt(0)!;
  const label = codePointLabel(cp);
  return el('span', { class: 'invisible-char', 'data-code-point': label, title: format(strings.invisibleCharacter, label, invisibleCharacterName(cp)) },
    el('span', { class: 'invisible-char-raw' }, ch));
}

/** Appends `text` to `parent` as text (extending its last text node), with a marker for each invisible character. */
export function appendMarkedText(parent: Node, text: string, strings: Strings): void {
  const appendText = (s: string) => {
    const tail = parent.lastChild;
    if (tail?.nodeType === Node.TEXT_NODE) (tail as Text).appendData(s);
    else parent.appendChild(document.createTextNode(s));
  };
  let last = 0;
  for (const m of text.matchAll(invisibleCharacterPattern())) {
    if (m.index > last) appendText(text.slice(last, m.index));
    parent.appendChild(invisibleMarker(m[0], strings));
    last = m.index + m[0].length;
  }
  if (last < text.length) appendText(text.slice(last));
}

const ANY = new RegExp(invisibleCharacterPattern().source, 'u');

/** Marks the invisible characters inside every <code> (blocks and inline) under `root`. */
export function markInvisibleCharacters(root: ParentNode, strings: Strings): void {
  for (const code of Array.from(root.querySelectorAll('code'))) {
    if (code.firstElementChild?.classList.contains('code-chunk-group') || !ANY.test(code.textContent ?? '')) continue; // chunks are marked as written
    const walker = code.ownerDocument.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    const texts: Text[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!(n.parentElement?.classList.contains('invisible-char-raw'))) texts.push(n as Text);
    }
    for (const t of texts) {
      if (!ANY.test(t.data)) continue;
      const frag = code.ownerDocument.createDocumentFragment();
      appendMarkedText(frag, t.data, strings);
      t.replaceWith(frag);
    }
  }
}
