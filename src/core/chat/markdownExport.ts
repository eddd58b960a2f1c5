// A conversation as a Markdown document (Export as Markdown): the title, a note on what was made safe, then each
// message under its speaker's name, as written except for raw HTML (escaped: shown as text) and images (made
// links), which would be live wherever the file is rendered later (exportSanitizer.ts); a partial answer says so.
// The title and the notes are plain text (a title may hold a file name, a note a server's error): escaped.
// Labels come from the caller, in the person's language.
import type { Conversation, MessageStatus } from './conversation';
import { sanitizeForExport } from './exportSanitizer';

export interface MarkdownExportLabels {
  /** Used when the conversation has no title. */
  untitled: string;
  user: string;
  /** An answer's heading: the name of the model that wrote it (`model`: its Triton name, absent on answers saved before
   *  answers named it). */
  assistant(model: string | undefined): string;
  /** The note under the title: raw HTML is shown as text and images as links. */
  safetyNote: string;
  /** The note after an answer that is not complete (`error`: a failed answer's error text, on one line). */
  statusNote(status: Exclude<MessageStatus, 'complete'>, error: string): string;
}

export function conversationToMarkdown(conversation: Conversation, labels: MarkdownExportLabels): string {
  const parts = [`# ${asText(oneLine(conversation.title) || labels.untitled)}`, `> ${asText(oneLine(labels.safetyNote))}`];
  for (const m of conversation.messages) {
    parts.push(`## ${m.role === 'user' ? labels.user : asText(oneLine(labels.assistant(m.model)))}`);
    if (m.content.trim() !== '') parts.push(sanitizeForExport(m.content.trim()));
    if (m.status !== 'complete') parts.push(`> *${asText(oneLine(labels.statusNote(m.status, oneLine(m.error ?? ''))))}*`);
  }
  return `${parts.join('\n\n')}\n`;
}

/** A file name for the export: the title without characters file systems refuse, shortened; `.md` appended. */
export function exportFileName(title: string, fallback = 'conversation'): string {
  // oneLine() has already turned control characters that are whitespace into spaces; the rest go with the others.
  const safe = Array.from(oneLine(title), (ch) => (ch.charCodeAt(0) < 0x20 || ch === '\u007f' ? '-' : ch)).join('')
    .replace(/[\\/:*?"<>|]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-. ]+|[-. ]+$/g, '');
  const short = Array.from(safe).slice(0, 60).join('').trim();
  return `${short || fallback}.md`;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Plain text (a title holding a file name, a server's error) in Markdown: the punctuation that can open a tag, an
 * image, a link, an entity, code or emphasis is backslash-escaped; it renders as the same characters.
 */
const asText = (s: string) => s.replace(/[\\`*_[\]<>!&~|#]/g, '\\$&');
