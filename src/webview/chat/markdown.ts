// Model output is untrusted text: the configured markdown-it (markdownItSetup.ts) renders it with raw HTML off,
// and DOMPurify sanitises the HTML into a DocumentFragment (parsed in an inert document, never assigned through
// innerHTML). Links keep no href: the URL moves to data-href when the shared link syntax finds it openable at all,
// and activating a link asks the host (links.ts). The tooltip is the URL; the answer's own title waits in
// data-answer-title until invisibleMarks.ts writes it after the URL, said to be the answer's.
import DOMPurify from 'dompurify';
import { parseLink } from '../../core/links/linkSyntax';
import { createMarkdownIt, outlineBlocks, type BlockOutline } from './markdownItSetup';

export { escapeHtml, type BlockOutline } from './markdownItSetup';

const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'del', 'code', 'pre', 'blockquote',
  'ul', 'ol', 'li', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span', 'div', 'sup', 'sub',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start'];
export const LINK_ATTR = 'data-href';
export const LINK_TITLE_ATTR = 'data-answer-title';
/** On a link that does not open: why (`too-long`, or `refused` for anything else the link syntax refuses). */
export const LINK_REFUSED_ATTR = 'data-link-refused';

let hooksInstalled = false;
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName !== 'A') return;
    let href = node.getAttribute('href');
    node.removeAttribute('href'); // nothing in the panel navigates
    // markdown-it percent-encodes the brackets of an IPv6 host (`http://[::1]:8000/`): put them back, so the link
    // reaches the policy as written (a local host, which asks first) instead of being refused as malformed.
    if (href !== null) href = href.replace(/^(https?:\/\/)%5B([0-9a-f:.]+)%5D(?=[:/?#]|$)/i, '$1[$2]');
    const title = node.getAttribute('title');
    node.removeAttribute('title');
    if (title) node.setAttribute(LINK_TITLE_ATTR, title);
    if (href === null) return;
    const parsed = parseLink(href);
    if (parsed.kind === 'reject') {
      // Shown as a link, but it does not open: invisibleMarks.ts says why in its tooltip.
      node.setAttribute(LINK_REFUSED_ATTR, parsed.reason === 'too-long' ? 'too-long' : 'refused');
      return;
    }
    node.setAttribute(LINK_ATTR, href);
    node.setAttribute('role', 'link');
    node.setAttribute('tabindex', '0');
    node.setAttribute('title', href);
  });
}

export interface MarkdownRenderer {
  /** Sanitised DOM for a piece of markdown. */
  render(markdown: string): DocumentFragment;
  /** The top-level blocks of `markdown` with their line ranges (block parse only; used to cut a streamed block). */
  outline(markdown: string): BlockOutline[];
}

/**
 * `imageText(altOrUrl)` gives the localized "[image not loaded: …]" text. `breaks` keeps single line breaks (for
 * what people type: a question's lines stay lines).
 */
export function createMarkdownRenderer(imageText: (what: string) => string, options: { breaks?: boolean } = {}): MarkdownRenderer {
  installHooks();
  const md = createMarkdownIt(imageText, options);
  return {
    render(markdown: string): DocumentFragment {
      const html = md.render(markdown);
      return DOMPurify.sanitize(html, {
        ALLOWED_TAGS,
        ALLOWED_ATTR,
        ALLOW_DATA_ATTR: false,
        ALLOW_ARIA_ATTR: false,
        RETURN_DOM_FRAGMENT: true,
      });
    },
    outline: (markdown) => outlineBlocks(md, markdown),
  };
}
