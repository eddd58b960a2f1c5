// Makes a message safe to keep in an exported Markdown file, which may later be rendered by something that allows
// raw HTML and loads images (a Markdown preview, a code host): raw HTML is escaped so that it shows as the text it
// is (`<img onerror=…>` becomes `&lt;img onerror=…>`), and images become plain links (nothing loads by itself).
// Code (fences, indented code, code spans) is left exactly as written: it renders as text anyway. What is live is
// read from markdown-it's parse with HTML on (markdownLiveSpots.ts: token positions, never a search of the text),
// and only those characters change, so everything else stays the message's own Markdown. Escaping can make
// something new (a `<` that hid a `](url)` now lets it close an image), so the result is parsed again until nothing
// is live; a message that cannot be made inert that way, or whose parse cannot be mapped back, is exported whole as
// a code block.
import { liveSpots, type LiveSpot } from './markdownLiveSpots';

const MAX_PASSES = 8;

export function sanitizeForExport(markdown: string): string {
  // markdown-it reads the text this way before parsing; offsets refer to it.
  const source = markdown.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD');
  let text = source;
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    const spots = liveSpots(text);
    if (!spots) break;
    if (spots.length === 0) return text;
    text = applySpots(text, spots);
  }
  return asCodeBlock(source);
}

/** `<` becomes `&lt;`; an image's `!` goes, leaving a link. */
function applySpots(text: string, spots: LiveSpot[]): string {
  let out = '';
  let last = 0;
  for (const spot of spots) {
    if (spot.at < last) continue;
    out += text.slice(last, spot.at) + (spot.kind === 'html' ? '&lt;' : '');
    last = spot.at + 1;
  }
  return out + text.slice(last);
}

/** A fence longer than any backtick run inside: everything in it is text. */
function asCodeBlock(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}
