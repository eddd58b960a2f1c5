// Text a server or a file name puts into a message (an error line in the terminal, a VS Code notification, a log
// line) is shown with every character that could hide, reorder or fake text written as `\u{…}`: control characters
// (newline, carriage return, tab and escape included: a newline would start a fake line, an escape sequence would
// drive the terminal), bidirectional controls, zero-width and other invisible characters (the chat panel's class,
// see invisibleCharacters.ts) and lone surrogates. Everything else is left as it is, non-ASCII letters included
// (`docs/说明.md` stays readable); a backslash is not doubled (Windows paths stay as they are).
// Pure (no VS Code, no DOM, no Node): the webview bundle and the extension host use it alike.
import { invisibleCharacterPattern } from './invisibleCharacters';

const INVISIBLE = invisibleCharacterPattern().source;

/** The invisible class, every C0/C1 control (tab, LF and CR too) and any lone surrogate. */
const UNSAFE = new RegExp(`${INVISIBLE}|[\\u0000-\\u001F\\u007F-\\u009F]|\\p{Cs}`, 'gu');

/** `text` safe to put into a one-line message: each unsafe character as `\u{1B}`, `\u{202E}` (hex, upper case). */
export function escapeForMessage(text: string): string {
  return text.replace(UNSAFE, (ch) => `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`);
}
