// Makes invisible and bidirectional control characters visible wherever a message shows text (prose, inline code,
// links, headings, tables, list items, code blocks; answers and the user's own messages), like the editor's unicode
// highlighting: each becomes a marker showing its code point, with a tooltip naming it. The character itself stays
// in the DOM, inside an element that is not rendered (and the marker is an isolate), so it can no longer reorder or
// hide the text around it, while Copy and Insert still see the exact text (and the host warns before passing it on).
// Link tooltips are rewritten here too: the real URL first, then the answer's own title, said to be the answer's.
import { codePointLabel, invisibleCharacterName, invisibleCharacterPattern, showInvisibleCharacters } from '../../core/text/invisibleCharacters';
import { format, type Strings } from '../../protocol';
import { el } from '../shared/dom';
import { MAX_LINK_LENGTH } from '../../core/links/linkSyntax';
import { LINK_ATTR, LINK_REFUSED_ATTR, LINK_TITLE_ATTR } from './markdown';

export function invisibleMarker(ch: string, strings: Strings): HTMLElement {
  const cp = ch.codePointAt(0)!;
  const label = codePointLabel(cp);
  return el('span', { class: 'invisible-char', 'data-code-point': label, title: format(strings.invisibleCharacter, label, invisibleCharacterName(cp)) },
    el('span', { class: 'invisible-char-raw' }, ch));
}

/** Appends `text` to `parent` as text (extending its last text node), with a marker for each invisible character. */
export function appendMarkedText(parent: Node, text: string, strings: Strings, pattern = invisibleCharacterPattern()): void {
  const appendText = (s: string) => {
    const tail = parent.lastChild;
    if (tail?.nodeType === Node.TEXT_NODE) (tail as Text).appendData(s);
    else parent.appendChild(document.createTextNode(s));
  };
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) appendText(text.slice(last, m.index));
    parent.appendChild(invisibleMarker(m[0], strings));
    last = m.index + m[0].length;
  }
  if (last < text.length) appendText(text.slice(last));
}

/** A name that must stay one line (a chip's file name): its line breaks and tabs are marked too. */
export function appendMarkedName(parent: Node, text: string, strings: Strings): void {
  appendMarkedText(parent, text, strings, new RegExp(`${invisibleCharacterPattern().source}|[\\t\\n\\r]`, 'gu'));
}

const ANY = new RegExp(invisibleCharacterPattern().source, 'u');

/** Skips what is marked already: markers, and code written in chunks (marked as written, codeChunks.ts). */
function skip(node: Node): number {
  const e = node as Element;
  return e.classList.contains('invisible-char') || e.classList.contains('code-chunk-group') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
}

/** Marks the invisible characters in every text under `root`, and writes its links' tooltips. */
export function markInvisibleCharacters(root: DocumentFragment | Element, strings: Strings): void {
  if (ANY.test(root.textContent ?? '')) {
    const doc = root.ownerDocument ?? document;
    const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT, {
      acceptNode: (n) => (n.nodeType === Node.TEXT_NODE ? (ANY.test((n as Text).data) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP) : skip(n)),
    });
    const texts: Text[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n as Text);
    for (const t of texts) {
      const frag = doc.createDocumentFragment();
      appendMarkedText(frag, t.data, strings);
      t.replaceWith(frag);
    }
  }
  for (const a of Array.from(root.querySelectorAll(`a[${LINK_REFUSED_ATTR}]`))) {
    const why = a.getAttribute(LINK_REFUSED_ATTR) === 'too-long' ? format(strings.linkInactiveTooLong, MAX_LINK_LENGTH.toLocaleString('en-US')) : strings.linkInactiveRefused;
    a.removeAttribute(LINK_REFUSED_ATTR);
    a.classList.add('link-inactive');
    a.setAttribute('title', why);
  }
  for (const a of Array.from(root.querySelectorAll(`a[${LINK_TITLE_ATTR}]`))) {
    const title = a.getAttribute(LINK_TITLE_ATTR) ?? '';
    a.removeAttribute(LINK_TITLE_ATTR);
    const first = a.getAttribute(LINK_ATTR) ?? a.getAttribute('title');
    const fromAnswer = format(strings.linkTitleFromAnswer, showInvisibleCharacters(title));
    a.setAttribute('title', first ? `${first}\n${fromAnswer}` : fromAnswer);
  }
}
