// How attachments travel to the model: inside the user message, before the question (README "Editor context in
// chat" documents the same layout; the end-to-end journey reads it back from the tiny engine's prompt log).
//
//   File: src/geometry.py (lines 3-4)
//   ```python
//   def circle_area(radius):
//       return math.pi * radius ** 2
//   ```
//
//   File: README.md
//   ````markdown
//   Run it with:
//   ```sh
//   python geometry.py
//   ```
//   ````
//
//   Symbol: circle_area (function) in src/geometry.py (lines 3-4)
//   Problems: src/geometry.py            (a ```text block: "line 7: error: ..." and the line's code)
//   Changes: project (working tree against HEAD)   (a ```diff block: git's unified diff, budgeted)
//
//   What does circle_area return?
//
// - One block per attachment, in the order of the chips, separated by a blank line; then a blank line and the
//   question exactly as typed. Without attachments the message is the question alone.
// - The header names the path relative to the workspace and, for a selection, its lines ("line 7" for one); a
//   symbol's header names the symbol first; problems and changes say what they are (contextContent.ts writes them).
// - The fence is one backtick longer than the longest run of backticks anywhere in the content (at least three), so
//   nothing in a file can close it early; its info string is VS Code's language id (left out unless it is a plain
//   id such as "python", "c++" or "objective-c").
// - Line endings become "\n"; control characters in a path become U+FFFD so the header stays one line.
import type { Attachment } from './attachments';

const LANGUAGE_ID = /^[A-Za-z0-9_+#.-]{1,64}$/;
// eslint-disable-next-line no-control-regex -- exactly what must not reach a header line
const PATH_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** The backtick fence for `content`: longer than any run of backticks inside it, and at least three. */
export function fenceFor(content: string): string {
  let longest = 0;
  for (const run of content.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

const oneLine = (text: string) => text.replace(PATH_CONTROL, '\uFFFD');

/** "line 7" or "lines 3-4". */
function linesText({ start, end }: { start: number; end: number }): string {
  return start === end ? `line ${start}` : `lines ${start}-${end}`;
}

/** The header line of an attachment: "File: <path>" plus its lines for a selection; its kind's words for the others. */
export function attachmentHeader(a: Pick<Attachment, 'path' | 'lines'> & Partial<Pick<Attachment, 'kind' | 'label'>>): string {
  const path = oneLine(a.path);
  const lines = a.lines ? ` (${linesText(a.lines)})` : '';
  switch (a.kind) {
    case 'problems': return `Problems: ${path}`;
    case 'changes': return `Changes: ${path} (working tree against HEAD)`;
    case 'symbol': return `Symbol: ${oneLine(a.label ?? '')} in ${path}${lines}`;
    default: return `File: ${path}${lines}`;
  }
}

/** One attachment as the model reads it: its header and its content in a fence it cannot break out of. */
export function formatAttachment(a: Pick<Attachment, 'path' | 'lines' | 'languageId' | 'content'> & Partial<Pick<Attachment, 'kind' | 'label'>>): string {
  const content = a.content.replace(/\r\n?/g, '\n');
  const fence = fenceFor(content);
  const info = LANGUAGE_ID.test(a.languageId) ? a.languageId : '';
  const body = content === '' || content.endsWith('\n') ? content : `${content}\n`;
  return `${attachmentHeader(a)}\n${fence}${info}\n${body}${fence}`;
}

/** The user message the model receives for a question and its attachments. */
export function formatUserMessage(question: string, attachments: readonly Attachment[] | undefined): string {
  if (!attachments?.length) return question;
  return `${attachments.map(formatAttachment).join('\n\n')}\n\n${question}`;
}
