// Model output is untrusted text. markdown-it runs with raw HTML off and linkify off; images are replaced by a text
// marker (no remote or local fetch ever happens); the HTML it produces is then sanitised by DOMPurify into a
// DocumentFragment (parsed in an inert document, never assigned through innerHTML), and links are limited to
// http(s)/mailto.
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { highlightCode } from './highlight';

const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'del', 'code', 'pre', 'blockquote',
  'ul', 'ol', 'li', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span', 'div', 'sup', 'sub',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start'];
const SAFE_HREF = /^(https?:|mailto:)/i;

let hooksInstalled = false;
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (!SAFE_HREF.test(href.trim())) node.removeAttribute('href');
      else node.setAttribute('rel', 'noopener noreferrer');
    }
  });
}

export interface MarkdownRenderer {
  /** Sanitised DOM for a piece of markdown. */
  render(markdown: string): DocumentFragment;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

/**
 * `imageText(altOrUrl)` gives the localized "[image not loaded: …]" text. `breaks` keeps single line breaks (for
 * what people type: a question's lines stay lines).
 */
export function createMarkdownRenderer(imageText: (what: string) => string, options: { breaks?: boolean } = {}): MarkdownRenderer {
  installHooks();
  const md = new MarkdownIt({
    html: false,
    linkify: false,
    typographer: false,
    breaks: options.breaks ?? false,
    highlight: (code, lang) => highlightCode(code, lang.split(/\s+/)[0] ?? ''),
  });
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx];
    const what = token.content || token.attrGet('src') || '';
    return `<span class="md-image-removed">${escapeHtml(imageText(what))}</span>`;
  };
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
  };
}
