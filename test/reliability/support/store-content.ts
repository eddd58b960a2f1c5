/** Deterministic message text (about 6 KB, ASCII + CJK + JSON-hostile characters) derived from a message id. */
export function contentFor(id: string): string {
  return `${id} ${'“quoted” \\ {brace} [bracket] 中文字符 '.repeat(120)}${id}`;
}
