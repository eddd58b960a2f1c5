// JSON file store: atomic writes (write-file-atomic: temp file + fsync + rename), a `.bak` copy of the last good
// file, and a loader that recovers every valid conversation from a damaged file instead of starting empty.
// Several VS Code windows share one globalStorage file: a save first merges conversations another window wrote
// since our last read (see save()), so one window does not wipe out the other's.
import { copyFile, mkdir, readFile, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { conversationSchema, markInterrupted, type Conversation } from './conversation';
import type { ConversationStore, LoadProblem, LoadResult } from './store';

export const STORE_FORMAT_VERSION = 1;

interface ParsedFile {
  conversations: Conversation[];
  /** Entries that were present but invalid, or a truncated tail that could not be read. */
  invalid: number;
  /** The JSON as a whole did not parse (truncated, overwritten...). */
  damaged: boolean;
}

export class FileConversationStore implements ConversationStore {
  /** True when the file on disk is known to be good (we wrote it, or it loaded cleanly): only then is it backed up. */
  private diskIsGood = false;
  private readonly backupPath: string;
  /** Ids the caller holds (from load, then from each save): one missing from the next save was deleted by it. */
  private ownIds = new Set<string>();
  /** Conversations another window wrote that the caller never saw: carried along in every save. */
  private foreign = new Map<string, Conversation>();
  /** mtime of the file when we last read or wrote it; a different one means another writer. */
  private knownMtimeMs: number | undefined;

  constructor(readonly path: string, private readonly now: () => number = Date.now) {
    this.backupPath = `${path}.bak`;
  }

  async load(): Promise<LoadResult> {
    const problems: LoadProblem[] = [];
    const main = await readIfExists(this.path);
    if (main.error) {
      problems.push({ code: 'unreadable', message: `Cannot read ${this.path}: ${main.error}` });
      return { conversations: [], problems };
    }
    let parsed: ParsedFile | undefined = main.text === undefined ? undefined : parseStoreFile(main.text);
    if (parsed && !parsed.damaged && parsed.invalid === 0) {
      this.diskIsGood = true;
      this.ownIds = new Set(parsed.conversations.map((c) => c.id));
      this.knownMtimeMs = await mtimeOf(this.path);
      return { conversations: parsed.conversations.map(markInterrupted), problems };
    }

    // Missing or damaged: look at the backup too and keep the newest copy of each conversation.
    const backup = await readIfExists(this.backupPath);
    const fromBackup = backup.text === undefined ? undefined : parseStoreFile(backup.text);
    let keptAsidePath: string | undefined;
    if (parsed) {
      keptAsidePath = `${this.path}.corrupt-${this.now()}`;
      await rename(this.path, keptAsidePath);
      this.diskIsGood = false;
      const message = parsed.damaged
        ? `The conversation file was damaged; ${parsed.conversations.length} conversation(s) were recovered from it.`
        : `${parsed.invalid} invalid conversation(s) were left out.`;
      problems.push({ code: parsed.damaged ? 'corrupt-file' : 'invalid-conversations', message, keptAsidePath, dropped: parsed.invalid });
    } else {
      parsed = { conversations: [], invalid: 0, damaged: false };
    }

    const merged = new Map<string, Conversation>();
    for (const c of parsed.conversations) merged.set(c.id, c);
    let restored = 0;
    for (const c of fromBackup?.conversations ?? []) {
      const have = merged.get(c.id);
      if (!have) { merged.set(c.id, c); restored += 1; }
      else if (c.updatedAt > have.updatedAt) merged.set(c.id, c);
    }
    if (restored > 0) {
      problems.push({ code: 'restored-from-backup', message: `${restored} conversation(s) were restored from ${this.backupPath}.` });
    }
    this.ownIds = new Set(merged.keys());
    return { conversations: [...merged.values()].map(markInterrupted), problems };
  }

  async save(conversations: readonly Conversation[]): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const toWrite = await this.mergeOtherWriters(conversations);
    if (this.diskIsGood) {
      // Copy to a temp name first so a crash mid-copy never leaves a half-written .bak.
      const tmp = `${this.backupPath}.tmp`;
      try {
        await copyFile(this.path, tmp);
        await rename(tmp, this.backupPath);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    const body = JSON.stringify({ version: STORE_FORMAT_VERSION, conversations: toWrite }, null, 1);
    await writeFileAtomic(this.path, body, { encoding: 'utf8', fsync: true });
    this.diskIsGood = true;
    this.ownIds = new Set(conversations.map((c) => c.id));
    this.knownMtimeMs = await mtimeOf(this.path);
  }

  /**
   * Adds what other windows saved: when the file changed since we last read or wrote it, its conversations that
   * the caller never held become `foreign` and are written along with the caller's. For an id the caller holds, the
   * caller's copy wins; an id the caller held and dropped was deleted and stays deleted.
   */
  private async mergeOtherWriters(ours: readonly Conversation[]): Promise<readonly Conversation[]> {
    const mtime = await mtimeOf(this.path);
    if (mtime !== undefined && mtime !== this.knownMtimeMs) {
      const disk = await readIfExists(this.path);
      const parsed = disk.text === undefined ? undefined : parseStoreFile(disk.text);
      // Never let a damaged file written by someone else replace our good .bak.
      this.diskIsGood = !!parsed && !parsed.damaged && parsed.invalid === 0;
      if (parsed && !parsed.damaged) {
        this.foreign = new Map(parsed.conversations.filter((c) => !this.ownIds.has(c.id)).map((c) => [c.id, c] as const));
      }
    }
    if (this.foreign.size === 0) return ours;
    const oursIds = new Set(ours.map((c) => c.id));
    return [...ours, ...[...this.foreign.values()].filter((c) => !oursIds.has(c.id))];
  }
}

async function mtimeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function readIfExists(path: string): Promise<{ text?: string; error?: string }> {
  try {
    return { text: await readFile(path, 'utf8') };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return err.code === 'ENOENT' ? {} : { error: err.message };
  }
}

/** Parses a store file; on a JSON syntax error it salvages every complete conversation object it can find. */
export function parseStoreFile(text: string): ParsedFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    const salvaged = salvageConversations(text);
    const valid = salvaged.objects.map((o) => conversationSchema.safeParse(o)).filter((r) => r.success).map((r) => r.data as Conversation);
    return { conversations: valid, invalid: salvaged.objects.length - valid.length + (salvaged.incompleteTail ? 1 : 0), damaged: true };
  }
  const list = Array.isArray(data) ? data : (data as { conversations?: unknown } | null)?.conversations;
  if (!Array.isArray(list)) return { conversations: [], invalid: 0, damaged: true };
  const conversations: Conversation[] = [];
  let invalid = 0;
  for (const item of list) {
    const r = conversationSchema.safeParse(item);
    if (r.success) conversations.push(r.data as Conversation);
    else invalid += 1;
  }
  return { conversations, invalid, damaged: false };
}

/**
 * Finds the `"conversations": [` array and returns each complete top-level `{...}` element that parses as JSON,
 * scanning with string/escape awareness so braces inside message text do not confuse it.
 */
export function salvageConversations(text: string): { objects: unknown[]; incompleteTail: boolean } {
  const objects: unknown[] = [];
  const key = text.indexOf('"conversations"');
  let i = key >= 0 ? text.indexOf('[', key) : text.indexOf('[');
  if (i < 0) return { objects, incompleteTail: false };
  i += 1;
  while (i < text.length) {
    while (i < text.length && /[\s,]/.test(text[i])) i += 1;
    if (i >= text.length || text[i] !== '{') break;
    const end = matchingBrace(text, i);
    if (end < 0) return { objects, incompleteTail: true };
    try {
      objects.push(JSON.parse(text.slice(i, end + 1)));
    } catch {
      objects.push(undefined); // counted as invalid by the caller
    }
    i = end + 1;
  }
  return { objects, incompleteTail: false };
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i += 1;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth += 1;
    else if (ch === '}' || ch === ']') {
      depth -= 1;
      if (depth === 0) return ch === '}' ? i : -1;
    }
  }
  return -1;
}
