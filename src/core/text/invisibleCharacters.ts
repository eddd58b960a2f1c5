// Characters that change how text reads without being seen (Trojan Source, CVE-2021-42574; hidden "ASCII smuggling"
// in tag characters): bidirectional embeddings, overrides and isolates, zero-width characters, line/paragraph
// separators, the BOM, soft hyphens, tag characters, variation selectors, Khmer inherent vowels, Hangul fillers,
// every other default-ignorable code point, and control characters other than tab / line feed / carriage return.
// The chat panel marks them wherever they appear in a message, and Copy / Insert / Apply warn before passing them on.
// One class, built from Unicode properties the JavaScript engine maintains (`\p{Cf}`, `\p{Default_Ignorable_Code_Point}`,
// `\p{Emoji}`, `\p{Extended_Pictographic}`): node 20.20's ICU 78 follows Unicode 17.0; the webview's Chromium has its own.
// Pure (no VS Code, no DOM, no Node): used by the webview bundle and the extension host alike.

/** Variation selectors VS1–VS256. */
const VS = '[\\uFE00-\\uFE0F\\u{E0100}-\\u{E01EF}]';

/**
 * What is let through although it is in the class, because emoji need it and it hides nothing:
 * - one VS15/VS16 (text/emoji presentation) right after a non-ASCII emoji (every standard emoji/text variation base
 *   has the Emoji property), not followed by another selector: a run of selectors, or one after ASCII, is marked;
 * - a zero width joiner inside an emoji ZWJ sequence (👩‍💻: pictograph, optional modifier or VS16, ZWJ, pictograph).
 */
const ALLOWED = `(?<=[^\\x00-\\x7F])(?<=\\p{Emoji})[\\uFE0E\\uFE0F](?!${VS})`
  + '|(?<=[\\p{Extended_Pictographic}\\p{Emoji_Modifier}\\uFE0F])\\u200D(?=\\p{Extended_Pictographic})';

/** Format characters, default-ignorables, separators, Hangul fillers, C0/C1 controls but tab, LF and CR. */
const CLASS = '[\\p{Cf}\\p{Default_Ignorable_Code_Point}\\u2028\\u2029\\u115F\\u1160\\u3164\\uFFA0\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]';

const SOURCE = `(?!${ALLOWED})${CLASS}`;

/** A fresh global pattern (callers use lastIndex, so each gets its own). */
export function invisibleCharacterPattern(): RegExp {
  return new RegExp(SOURCE, 'gu');
}

const TEST = new RegExp(SOURCE, 'u');

export function hasInvisibleCharacters(text: string): boolean {
  return TEST.test(text);
}

/** `text` without its invisible characters (what a label reads as, for comparing it with a link's target). */
export function removeInvisibleCharacters(text: string): string {
  return text.replace(invisibleCharacterPattern(), '');
}

/** Unicode names of the characters people actually meet; the rest are named by their kind. */
const NAMES: Record<number, string> = {
  0x00ad: 'SOFT HYPHEN',
  0x034f: 'COMBINING GRAPHEME JOINER',
  0x061c: 'ARABIC LETTER MARK',
  0x115f: 'HANGUL CHOSEONG FILLER',
  0x1160: 'HANGUL JUNGSEONG FILLER',
  0x17b4: 'KHMER VOWEL INHERENT AQ',
  0x17b5: 'KHMER VOWEL INHERENT AA',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0x3164: 'HANGUL FILLER',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE (BYTE ORDER MARK)',
  0xffa0: 'HALFWIDTH HANGUL FILLER',
  0xe0001: 'LANGUAGE TAG',
  0xe007f: 'CANCEL TAG',
};

/** "U+202E", "U+E0041". */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

export function invisibleCharacterName(codePoint: number): string {
  const known = NAMES[codePoint];
  if (known) return known;
  if (codePoint >= 0xe0020 && codePoint <= 0xe007e) return `TAG ${JSON.stringify(String.fromCharCode(codePoint - 0xe0000))}`;
  if (codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f)) return 'CONTROL CHARACTER';
  if (codePoint >= 0x180b && codePoint <= 0x180f) return 'MONGOLIAN FREE VARIATION SELECTOR';
  if (codePoint >= 0xfe00 && codePoint <= 0xfe0f) return `VARIATION SELECTOR-${codePoint - 0xfe00 + 1}`;
  if (codePoint >= 0xe0100 && codePoint <= 0xe01ef) return `VARIATION SELECTOR-${codePoint - 0xe0100 + 17}`;
  if (/\p{Cf}/u.test(String.fromCodePoint(codePoint))) return 'FORMAT CHARACTER';
  return 'DEFAULT IGNORABLE CHARACTER';
}

export interface InvisibleCharacterCount {
  codePoint: number;
  /** "U+202E" */
  label: string;
  name: string;
  count: number;
}

/** The invisible characters of `text`, each once with how often it occurs, in order of first appearance. */
export function findInvisibleCharacters(text: string): InvisibleCharacterCount[] {
  const found = new Map<number, InvisibleCharacterCount>();
  for (const m of text.matchAll(invisibleCharacterPattern())) {
    const cp = m[0].codePointAt(0)!;
    const seen = found.get(cp);
    if (seen) seen.count += 1;
    else found.set(cp, { codePoint: cp, label: codePointLabel(cp), name: invisibleCharacterName(cp), count: 1 });
  }
  return [...found.values()];
}

/** "U+202E RIGHT-TO-LEFT OVERRIDE ×2, U+2066 LEFT-TO-RIGHT ISOLATE" (at most `max` kinds, then "+N more"). */
export function describeInvisibleCharacters(found: readonly InvisibleCharacterCount[], max = 6, more = (n: number) => `+${n}`): string {
  const shown = found.slice(0, max).map((c) => `${c.label} ${c.name}${c.count > 1 ? ` ×${c.count}` : ''}`);
  if (found.length > max) shown.push(more(found.length - max));
  return shown.join(', ');
}

/** `text` with each invisible character written as `<U+202E>` (for tooltips and dialogs, which cannot mark them). */
export function showInvisibleCharacters(text: string): string {
  return text.replace(invisibleCharacterPattern(), (ch) => `<${codePointLabel(ch.codePointAt(0)!)}>`);
}

/** Like showInvisibleCharacters, and line breaks and tabs too: for a name or path that must stay one line (a tooltip). */
export function showInvisibleCharactersOnOneLine(text: string): string {
  return showInvisibleCharacters(text).replace(/[\t\n\r]/g, (ch) => `<${codePointLabel(ch.codePointAt(0)!)}>`);
}
