// Which characters count as invisible or bidirectional controls (marked in the panel, warned about on Copy/Insert).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  codePointLabel, describeInvisibleCharacters, findInvisibleCharacters, hasInvisibleCharacters, invisibleCharacterName, invisibleCharacterPattern,
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

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}
