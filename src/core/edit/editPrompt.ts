// Edit Selection's question and how its answer is read: the prompt asks for the rewritten code only, in one fenced
// block; the model may still talk around it, so the code is the first fenced block when there is one (streaming
// included: an open fence yields what has arrived so far), otherwise the whole reply without blank edges.
import MarkdownIt from 'markdown-it';
import { fenceFor } from '../explain/explainPrompt';

export interface EditRequest {
  /** What the user asked for, e.g. "use math.tau". */
  instruction: string;
  /** The selected text, verbatim. */
  code: string;
  /** VS Code language id of the document. */
  languageId: string;
  /** Base name of the file. */
  fileName: string;
}

/**
 * Produces the localized instruction lines for one edit: the rules (code only, same language, keep what is not
 * asked to change) around the user's own words.
 */
export type EditTemplate = (instruction: string, languageId: string, fileName: string) => string;

/** The model's input for one selection: our template, then the code in a fence the code cannot close. */
export function buildEditPrompt(request: EditRequest, template: EditTemplate): string {
  const instruction = request.instruction.trim();
  if (!instruction) throw new RangeError('the edit instruction is empty');
  const code = request.code.replace(/\r\n?/g, '\n');
  const fence = fenceFor(code);
  const lang = /^[A-Za-z0-9_+#.-]{1,40}$/.test(request.languageId) ? request.languageId : '';
  return `${template(instruction, request.languageId, request.fileName)}\n\n${fence}${lang}\n${code}\n${fence}`;
}

export interface ExtractedCode {
  code: string;
  /** The code came from a fenced block (else: the whole reply). */
  fenced: boolean;
  /** The block's closing fence has arrived (always true for an unfenced reply that is final). */
  closed: boolean;
}

/** Blocks only: the fences are all that is read. */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.core.ruler.disable(['inline', 'text_join']);

/**
 * The code of a reply (or of the part streamed so far): the first fenced block as CommonMark reads it, from the
 * markdown-it parse the chat panel shows it by (so a fence in a quote or a list item counts, its markers removed; a
 * `~~~` fence may have backticks in its info string; a closing fence is only fence characters and spaces or tabs).
 * Before any fence arrives a streaming reply yields "": it may still be prose that precedes one.
 */
export function extractCode(reply: string, options: { final: boolean }): ExtractedCode {
  const text = reply.replace(/\r\n?/g, '\n');
  const fence = md.parse(text, {}).find((t) => t.type === 'fence' && t.map);
  const lineCount = text.split('\n').length;
  // The last line of a streaming reply may be a fence still being written ("``" + "`python"): wait for it.
  if (fence?.map && (options.final || fence.map[0] < lineCount - 1)) {
    const body = fence.content.replace(/\n$/, '').split('\n');
    const bodyLines = fence.content === '' ? 0 : body.length;
    // markdown-it's map covers the opening line, the body and, when there is one, the closing line.
    const closed = fence.map[1] - fence.map[0] === bodyLines + 2;
    if (closed) return { code: fence.content.replace(/\n$/, ''), fenced: true, closed: true };
    // Open fence: while streaming, its last line may be incomplete (the next delta continues it) or a closing
    // fence on its way; keep only whole lines. A final reply whose fence never closed keeps all it has.
    if (!options.final && !text.endsWith('\n')) body.pop();
    return { code: bodyLines === 0 ? '' : body.join('\n'), fenced: true, closed: false };
  }
  if (!options.final) return { code: '', fenced: false, closed: false };
  return { code: text.replace(/^\s*\n/, '').replace(/\s+$/, ''), fenced: false, closed: true };
}
