// `chat --history FILE`: the conversation as a JSON array of ChatGLM3 messages ({role, content, metadata?}).
// A file that is not such an array is refused and left exactly as it was; updates are atomic (temp + rename).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { ChatMessage } from '../core/chat/messages';

const messageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'observation']),
  content: z.string(),
  metadata: z.string().optional(),
}).strict();
const historySchema = z.array(messageSchema);

export class HistoryFileError extends Error {
  override readonly name = 'HistoryFileError';
  constructor(readonly file: string, why: string) {
    super(`The history file "${file}" cannot be used: ${why}`);
  }
}

/** Reads the history; a missing file is an empty conversation. */
export async function readHistory(file: string): Promise<ChatMessage[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new HistoryFileError(file, (e as Error).message);
  }
  if (text.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HistoryFileError(file, 'it is not valid JSON.');
  }
  const r = historySchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new HistoryFileError(file, `expected a JSON array of {"role", "content"} messages (${issue.path.join('.') || 'root'}: ${issue.message}).`);
  }
  return r.data;
}

export async function writeHistory(file: string, history: readonly ChatMessage[]): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(tmp, `${JSON.stringify(history, null, 2)}\n`, 'utf8');
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
