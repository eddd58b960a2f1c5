// Makes a message safe to keep in an exported Markdown file, which may later be rendered by something that allows
// raw HTML and loads images (a Markdown preview, a code host): raw HTML is escaped so that it shows as the text it
// is (`<img onerror=…>` becomes `&lt;img onerror=…>`), and images become plain links (nothing loads by itself).
// Code (fences, indented code, code spans) is left exactly as written: it renders as text anyway. The source is
// read the way such a renderer reads it (markdown-it with HTML on), and only the characters that make HTML or an
// image are changed, so everything else stays the message's own Markdown.
import MarkdownIt from 'markdown-it';

type Token = ReturnType<MarkdownIt['parse']>[number];

const md = new MarkdownIt({ html: true, linkify: false });

/** `<` that opens a tag, comment, declaration or processing instruction. */
const TAG_START = /<(?=[A-Za-z/!?])/g;

export function sanitizeForExport(markdown: string): string {
  const tokens = md.parse(markdown, {});
  const starts = [0];
  for (let i = markdown.indexOf('\n'); i >= 0; i = markdown.indexOf('\n', i + 1)) starts.push(i + 1);
  const offsetOf = (line: number) => (line < starts.length ? starts[line]! : markdown.length);
  const escapes = new Set<number>();
  const bangs = new Set<number>();
  const cursors = new Map<string, number>();
  let blockMap: [number, number] | undefined;
  for (const t of tokens) {
    if (t.map && t.type !== 'inline') blockMap = t.map as [number, number];
    if (t.type === 'html_block' && t.map) {
      const from = offsetOf(t.map[0]);
      for (const m of markdown.slice(from, offsetOf(t.map[1])).matchAll(TAG_START)) escapes.add(from + m.index);
    } else if (t.type === 'inline' && t.children) {
      const map = (t.map ?? blockMap) as [number, number] | undefined;
      if (!map) continue;
      const key = `${map[0]}:${map[1]}`;
      const end = offsetOf(map[1]);
      let cursor = cursors.get(key) ?? offsetOf(map[0]);
      for (const child of flatten(t.children)) {
        const find = (s: string) => (s ? markdown.slice(0, end).indexOf(s, cursor) : -1);
        if (child.type === 'code_inline') {
          const at = find(child.content);
          if (at >= 0) cursor = at + child.content.length;
        } else if (child.type === 'html_inline') {
          const at = find(child.content);
          if (at < 0) continue;
          for (const m of child.content.matchAll(TAG_START)) escapes.add(at + m.index);
          cursor = at + child.content.length;
        } else if (child.type === 'image') {
          const at = find('![');
          if (at < 0) continue;
          bangs.add(at);
          cursor = at + 2;
        }
      }
      cursors.set(key, cursor);
    }
  }
  if (escapes.size === 0 && bangs.size === 0) return markdown;
  let out = '';
  let last = 0;
  for (const at of [...escapes, ...bangs].sort((a, b) => a - b)) {
    out += markdown.slice(last, at) + (escapes.has(at) ? '&lt;' : '');
    last = at + 1;
  }
  return out + markdown.slice(last);
}

/** An image's alt text is parsed into children of its own; they come after the image in source order. */
function flatten(children: Token[]): Token[] {
  return children.flatMap((c) => (c.type === 'image' && c.children?.length ? [c, ...flatten(c.children)] : [c]));
}
