// The one line a collapsed explanation thread shows: the first sentence of the answer, without Markdown marks,
// cut at a readable length. Several threads collapsed to one line each keep the code between them readable.

const MAX_SUMMARY = 120;

export function firstSentence(markdown: string, maxChars = MAX_SUMMARY): string {
  const plain = markdown
    .replace(/^\s*(#{1,6}\s+|[-*+]\s+|>\s*)/gm, '') // headings, list marks, quotes
    .replace(/(\*\*|__|~~)(.+?)\1/g, '$2') // bold, strike-through
    .replace(/`{3,}[^\n]*\n[\s\S]*?(`{3,}|$)/g, ' ') // fenced blocks do not summarise
    .replace(/`([^`\n]+)`/g, '$1') // inline code: its text
    .replace(/\s+/g, ' ')
    .trim();
  // A sentence ends at . ! ? followed by a space (not "12.57", not "e.g" mid-word) or at a CJK full stop.
  const end = /[.!?](?=\s)|[。！？]/.exec(plain);
  const sentence = end ? plain.slice(0, end.index + 1) : plain;
  const chars = Array.from(sentence);
  return chars.length > maxChars ? `${chars.slice(0, maxChars - 1).join('').trimEnd()}…` : sentence;
}
