// Where conversations live between sessions. The service only needs load/save; the file store is the real one,
// the memory store serves tests and the CLI.
import type { Conversation } from './conversation';

export type LoadProblemCode =
  /** The file could not be parsed as a whole; complete conversations were salvaged from it and/or the backup. */
  | 'corrupt-file'
  /** Some conversations failed validation and were left out (the file is kept aside). */
  | 'invalid-conversations'
  /** The main file was missing or unusable and conversations came from the `.bak` copy. */
  | 'restored-from-backup'
  /** The file exists but could not be read (permissions, I/O). Nothing was loaded from it. */
  | 'unreadable';

export interface LoadProblem {
  code: LoadProblemCode;
  /** English; the VS Code layer shows a localized text chosen by `code`. */
  message: string;
  /** Where the damaged file was moved so nothing is lost for good. */
  keptAsidePath?: string;
  /** Conversations that could not be recovered. */
  dropped?: number;
}

export interface LoadResult {
  conversations: Conversation[];
  problems: LoadProblem[];
}

export interface ConversationStore {
  load(): Promise<LoadResult>;
  save(conversations: readonly Conversation[]): Promise<void>;
}

/** Keeps a deep copy in memory (so callers cannot mutate what was "saved"). */
export class MemoryConversationStore implements ConversationStore {
  saves = 0;
  private data: Conversation[];
  constructor(initial: Conversation[] = []) {
    this.data = structuredClone(initial);
  }
  async load(): Promise<LoadResult> {
    return { conversations: structuredClone(this.data), problems: [] };
  }
  async save(conversations: readonly Conversation[]): Promise<void> {
    this.saves += 1;
    this.data = structuredClone([...conversations]);
  }
  /** What the last save wrote. */
  snapshot(): Conversation[] {
    return structuredClone(this.data);
  }
}
