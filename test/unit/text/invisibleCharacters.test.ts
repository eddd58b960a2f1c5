// Which characters count as invisible or bidirectional controls (marked in the panel, warned about on Copy/Insert).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  codePointLabel, describeInvisibleCharacters, findInvisibleCharacters, hasInvisibleCharacters, invisibleCharacterName, invisibleCharacterPattern,
  removeInvisibleCharacters, showInvisibleCharactersOnOneLine,
} from '../../../src/core/text/invisibleCharacters';

const cp = (n: number) => String.fromCodePoint(n);

describe('invisible characters', () => {
  it('covers the bidi controls, zero-width characters, separators, BOM, soft hyphen, tags, fillers and C0/C1 controls', () => {
    const expected = [
      ...range(0x202a, 0x202e), ...range(0x2066, 0x2069), ...range(0x200b, 0x200f), 0x2028, 0x2029, 0xfeff, 0x00ad, 0x061c, 0x180e,
      ...range(0x2060, 0x2064), 0xe0001, ...range(0xe0020, 0xe007f), 0x115f, 0x1160, 0x3164, 0xffa0, 0x034f, 0x180b,
      0x0000, 0x0007, 0x0008, 0x000b, 0x000c, 0x001b, 0x007f, 0x0085, 0x009f,
    ];
    for (const c of expected) assert.ok(hasInvisibleCharacters(`a${cp(c)}b`), codePointLabel(c));
  });

  it('leaves ordinary text alone: tab, line feed, carriage return, CJK, emoji, RTL letters, variation selectors', () => {
    for (const s of ['\t', '\n', '\r', '中文', 'é', '😀', '❤️', 'שלום', 'مرحبا', ' ', '\u00a0', 'x = 1;']) assert.ok(!hasInvisibleCharacters(s), JSON.stringify(s));
  });

  it('finds each character once with its count, name and label, in order of appearance (whole code points)', () => {
    const trojan = 'if (accessLevel != "user\u202E \u2066// Check if admin\u2069 \u2066") {\u{E0041}\u202E';
    assert.deepEqual(findInvisibleCharacters(trojan).map((c) => [c.label, c.name, c.count]), [
      ['U+202E', 'RIGHT-TO-LEFT OVERRIDE', 2],
      ['U+2066', 'LEFT-TO-RIGHT ISOLATE', 2],
      ['U+2069', 'POP DIRECTIONAL ISOLATE', 1],
      ['U+E0041', 'TAG "A"', 1],
    ]);
    assert.equal([...'a\u{E0041}b'.matchAll(invisibleCharacterPattern())][0]![0].length, 2, 'a tag character is one match of two code units');
  });

  it('names unknown format characters by category and describes a list briefly', () => {
    assert.equal(invisibleCharacterName(0x0600), 'FORMAT CHARACTER');
    assert.equal(invisibleCharacterName(0x001b), 'CONTROL CHARACTER');
    const found = findInvisibleCharacters('\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2061');
    assert.equal(describeInvisibleCharacters(found, 3, (n) => `and ${n} more`),
      'U+200B ZERO WIDTH SPACE, U+200C ZERO WIDTH NON-JOINER, U+200D ZERO WIDTH JOINER, and 4 more');
    assert.match(describeInvisibleCharacters(found, 10), /U\+2061 FUNCTION APPLICATION ×2$/);
  });
});

/** Default_Ignorable_Code_Point of Unicode's DerivedCoreProperties.txt (unchanged from Unicode 15.1 to 17.0). */
const DEFAULT_IGNORABLE: Array<[number, number]> = [
  [0x00ad, 0x00ad], [0x034f, 0x034f], [0x061c, 0x061c], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x200b, 0x200f],
  [0x202a, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfeff, 0xfeff], [0xffa0, 0xffa0], [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
];

describe('invisible characters: default-ignorable code points, variation selectors, emoji', () => {
  it('the engine\'s \\p{Default_Ignorable_Code_Point} is the DerivedCoreProperties list, and every one of them is in the class', () => {
    const fromEngine: number[] = [];
    const di = /\p{Default_Ignorable_Code_Point}/u;
    for (let c = 0; c <= 0x10ffff; c += 1) if (di.test(String.fromCodePoint(c))) fromEngine.push(c);
    const listed = DEFAULT_IGNORABLE.flatMap(([a, b]) => range(a, b));
    assert.deepEqual(fromEngine, listed, `Unicode ${process.versions.unicode}`);
    const missing = listed.filter((c) => !hasInvisibleCharacters(`a${cp(c)}b`));
    assert.deepEqual(missing.map(codePointLabel), [], 'each default-ignorable code point, after ASCII, is marked');
    assert.equal(listed.length, 4174);
  });

  it('lets one VS15/VS16 after an emoji through; marks a run of selectors, one after ASCII, and every other selector', () => {
    for (const ok of ['\u2764\uFE0F', '\u2764\uFE0E', '\u263A\uFE0F text', '\u{1F600}', '\u{1F469}\u200D\u{1F4BB}', '\u{1F3F3}\uFE0F\u200D\u{1F308}', '\u{1F44D}\u{1F3FD}\u200D']) {
      // (the last: a ZWJ that joins nothing is marked, the modifier is visible)
      if (ok.endsWith('\u200D')) assert.deepEqual(findInvisibleCharacters(ok).map((c) => c.label), ['U+200D'], JSON.stringify(ok));
      else assert.ok(!hasInvisibleCharacters(ok), JSON.stringify(ok));
    }
    assert.deepEqual(findInvisibleCharacters('\u2764\uFE0F\uFE0F\uFE0E').map((c) => [c.label, c.count]), [['U+FE0F', 2], ['U+FE0E', 1]], 'a run: all marked');
    assert.deepEqual(findInvisibleCharacters('\u{1F600}\u{E0100}\u{E0101}').map((c) => c.name), ['VARIATION SELECTOR-17', 'VARIATION SELECTOR-18']);
    assert.deepEqual(findInvisibleCharacters('1\uFE0F\u20E3 a\uFE0E').map((c) => c.label), ['U+FE0F', 'U+FE0E'], 'after ASCII');
    assert.deepEqual(findInvisibleCharacters('\u4E00\uFE00').map((c) => c.name), ['VARIATION SELECTOR-1'], 'VS1-14 always');
    assert.deepEqual(findInvisibleCharacters('\u17B4\u17B5\u180F').map((c) => c.name), ['KHMER VOWEL INHERENT AQ', 'KHMER VOWEL INHERENT AA', 'MONGOLIAN FREE VARIATION SELECTOR']);
    assert.deepEqual(findInvisibleCharacters('a\u200Db \u{1F600}\u200Db').map((c) => [c.label, c.count]), [['U+200D', 2]], 'a ZWJ outside an emoji sequence');
  });

  it('hides `rm -rf ~` in selectors after an emoji no more: each selector counts', () => {
    const smuggled = `\u{1F600}${Array.from('rm -rf ~', (ch) => cp(0xe0100 + ch.charCodeAt(0))).join('')}`;
    assert.equal(findInvisibleCharacters(smuggled).reduce((n, c) => n + c.count, 0), 8);
    assert.equal(removeInvisibleCharacters(`evil\u200B.example.com\u{E0041}`), 'evil.example.com');
  });
});

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

describe('showInvisibleCharactersOnOneLine', () => {
  it('writes invisible characters, line breaks and tabs as code points, so a path stays one line', () => {
    assert.equal(showInvisibleCharactersOnOneLine('/a/invoice\u202Etxt.exe'), '/a/invoice<U+202E>txt.exe');
    assert.equal(showInvisibleCharactersOnOneLine('x.py\nlines 1–9\r\tb\u{E0041}'), 'x.py<U+000A>lines 1–9<U+000D><U+0009>b<U+E0041>');
    assert.equal(showInvisibleCharactersOnOneLine('plain 你好.py'), 'plain 你好.py');
  });
});
