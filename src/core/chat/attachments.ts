// Editor context attached to a question, captured as text when it is attached: a selection, a whole file, a
// symbol (its lines), a file's problems (diagnostics) or the working tree's changes (a diff). The model, its stored
// form (validated on load like the rest of a conversation), and the rules for what may be attached at all (a size
// limit, no binary files) and what one chip covers of another (the same code is never sent twice).
import { z } from 'zod';

export const ATTACHMENT_KINDS = ['selection', 'file', 'symbol', 'problems', 'changes'] as const;
export type AttachmentKind = (typeof ATTACHMENT_KINDS)[number];
/** Kinds whose content is the code of their file (all of it, or its `lines`). */
const CODE_KINDS: ReadonlySet<AttachmentKind> = new Set(['selection', 'file', 'symbol']);

/** 1-based, inclusive. */
export interface LineRange {
  start: number;
  end: number;
}

export interface Attachment {
  id: string;
  kind: AttachmentKind;
  /**
   * The path the model and the chip show: relative to the workspace folder with forward slashes (prefixed with the
   * folder's name in a multi-root workspace), or the file name for a file outside the workspace.
   */
  path: string;
  /** Where it came from (a URI string), to open it again and to show the full path in the chip's tooltip. */
  uri: string;
  /** VS Code's language id of the document ("python", "typescriptreact", "plaintext"...). */
  languageId: string;
  /** The selected lines (a selection, a symbol); absent for a whole file, problems and changes. */
  lines?: LineRange;
  /** A symbol's name ("circle_area"): its chip shows it instead of the file name, its header before the path. */
  label?: string;
  content: string;
}

/** Largest text that may be attached (UTF-8 bytes): bigger files are refused before they are read. */
export const MAX_ATTACHMENT_BYTES = 256 * 1024;
/** Attachments of one question. */
export const MAX_ATTACHMENTS = 20;
/** Like git: a NUL byte in the first 8000 bytes makes a file binary. */
const BINARY_SNIFF_BYTES = 8000;

const line = z.number().int().positive();
/** Validates stored attachments (conversation.ts adds it to the message schema; this module must not import that one). */
export const attachmentSchema = z.object({
  // The id format of messages and conversations (conversation.ts ID_PATTERN): the chat protocol checks it.
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  kind: z.enum(ATTACHMENT_KINDS),
  path: z.string().min(1),
  uri: z.string().min(1),
  languageId: z.string(),
  lines: z.object({ start: line, end: line }).refine((r) => r.end >= r.start, 'end before start').optional(),
  label: z.string().max(200).optional(),
  content: z.string(),
});

export interface TextRefusal {
  reason: 'too-large' | 'binary';
  /** Size of what was refused (UTF-8 bytes). */
  bytes: number;
}

/** Whether a file of `bytes` bytes may be attached at all (checked before it is read). */
export function sizeAllowed(bytes: number): boolean {
  return bytes <= MAX_ATTACHMENT_BYTES;
}

/** Why a file read from disk cannot be attached (too large, or binary: a NUL byte near its start), or undefined. */
export function fileRefusal(bytes: Uint8Array): TextRefusal | undefined {
  if (!sizeAllowed(bytes.length)) return { reason: 'too-large', bytes: bytes.length };
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { reason: 'binary', bytes: bytes.length };
  return undefined;
}

/** Why text already in memory (a selection, an open document) cannot be attached (too large), or undefined. */
export function textRefusal(text: string): TextRefusal | undefined {
  const bytes = utf8Length(text);
  return sizeAllowed(bytes) ? undefined : { reason: 'too-large', bytes };
}

/** UTF-8 length of a string without encoding it. */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) { n += 4; i += 1; } // a surrogate pair
    else n += 3;
  }
  return n;
}

/**
 * The lines a selection covers, 1-based. A selection that ends at the very start of a line (a whole-line
 * selection, as Expand Line Selection makes) does not cover that line.
 */
export function selectedLines(start: { line: number }, end: { line: number; character: number }): LineRange {
  const last = end.line > start.line && end.character === 0 ? end.line - 1 : end.line;
  return { start: start.line + 1, end: last + 1 };
}

type Source = Pick<Attachment, 'kind' | 'uri' | 'lines'>;

/** Whether an attachment holds code of its file (a selection, a symbol, the whole file), not problems or changes. */
export function isCode(a: Pick<Attachment, 'kind'>): boolean {
  return CODE_KINDS.has(a.kind);
}

/**
 * Two attachments of the same thing: the same code (the same file and the same lines, or both the whole file), or
 * the problems of the same file, or the changes of the same repository.
 */
export function sameSource(a: Source, b: Source): boolean {
  if (isCode(a) !== isCode(b) || (!isCode(a) && a.kind !== b.kind)) return false;
  return a.uri === b.uri && a.lines?.start === b.lines?.start && a.lines?.end === b.lines?.end;
}

/**
 * Whether `outer` already sends all of `inner`'s code: the same file, and the whole file or lines around inner's.
 * Problems and changes cover nothing and are covered by nothing.
 */
export function covers(outer: Source, inner: Source): boolean {
  if (!isCode(outer) || !isCode(inner) || outer.uri !== inner.uri) return false;
  if (!outer.lines) return true;
  return !!inner.lines && outer.lines.start <= inner.lines.start && inner.lines.end <= outer.lines.end;
}

/** The file name of an attachment's path (what its chip shows before the line range). */
export function attachmentName(a: Pick<Attachment, 'path'>): string {
  return a.path.slice(a.path.lastIndexOf('/') + 1) || a.path;
}
