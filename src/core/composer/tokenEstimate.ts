// A conservative (over-counting) token estimate for ChatGLM3's SentencePiece vocabulary, used to keep a request
// under the model's input budget without shipping the tokenizer. Over-counting only trims history a bit early;
// under-counting would let the server drop history silently or reject the prompt.

/** Wide scripts where one character is at most about one token (CJK ideographs, kana, Hangul, full-width forms). */
const WIDE = /[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]/u;

/** Per message: the role token plus the metadata/newline piece. */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** `[gMASK] sop` before the first message and the bare `<|assistant|>` the prompt ends with. */
export const PROMPT_OVERHEAD_TOKENS = 3;

export function estimateTokens(text: string): number {
  let tokens = 0;
  let asciiWordRun = 0;
  const flushRun = () => {
    // English averages ~4 characters a token; 3 leaves room for identifiers and rare words.
    tokens += Math.ceil(asciiWordRun / 3);
    asciiWordRun = 0;
  };
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) {
      asciiWordRun += 1;
      continue;
    }
    flushRun();
    if (cp === 0x20 || cp === 0x09) {
      // Single spaces are usually merged into the next piece; count a quarter (runs of indentation add up).
      tokens += 0.25;
    } else if (cp < 0x80) {
      tokens += 1; // punctuation, newlines, symbols: typically one piece each
    } else if (WIDE.test(ch)) {
      tokens += 1;
    } else if (cp > 0xffff) {
      tokens += 4; // emoji and other astral characters may fall back to UTF-8 byte pieces
    } else {
      tokens += 2; // other scripts (Cyrillic, Greek, accents...) are poorly covered by the vocabulary
    }
  }
  flushRun();
  return Math.ceil(tokens);
}
