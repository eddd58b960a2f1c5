// The attachments waiting above the chat input: what the user attached (selections, files; each removable) and the
// active editor's file as a chip they can switch on and off. Policy:
// - The active file is attached by default only in a trusted workspace. In an untrusted one it is shown but off
//   until the user switches it on: reading files is safe there, sending one nobody chose is not what the user
//   expects. Manual attachments work the same everywhere.
// - The user's choice for the active-file chip holds until they click it again (also for the next file).
// - Attaching the same code twice (same file and lines) keeps one chip, with the newer text.
// - After a question is sent the attachments it took go; the active-file chip stays for the next question.
import { MAX_ATTACHMENTS, sameSource, type Attachment, type TextRefusal } from './attachments';

/** The active editor's document, as the chip shows it; its text is read when a question is sent. */
export interface ActiveFile {
  uri: string;
  path: string;
  languageId: string;
  /** Why it cannot be attached (too large), if so: the chip says so and it is never sent. */
  refusal?: TextRefusal;
}

export interface ActiveFileState {
  file: ActiveFile;
  /** Whether it goes with the next question. */
  enabled: boolean;
  /** On only because of the workspace's trust (the user has not chosen). */
  byDefault: boolean;
}

export type AddResult = 'added' | 'replaced' | 'full';

export class PendingAttachments {
  private added: Attachment[] = [];
  private active: ActiveFile | undefined;
  private activeChoice: boolean | undefined;

  constructor(private trusted: boolean) {}

  get items(): readonly Attachment[] {
    return this.added;
  }

  get activeFile(): ActiveFileState | undefined {
    if (!this.active) return undefined;
    const wanted = this.activeChoice ?? this.trusted;
    return { file: this.active, enabled: wanted && !this.active.refusal, byDefault: this.activeChoice === undefined };
  }

  get isTrusted(): boolean {
    return this.trusted;
  }

  add(a: Attachment): AddResult {
    const i = this.added.findIndex((x) => sameSource(x, a));
    if (i >= 0) {
      this.added[i] = { ...a, id: this.added[i]!.id };
      return 'replaced';
    }
    if (this.added.length >= MAX_ATTACHMENTS) return 'full';
    this.added.push(a);
    return 'added';
  }

  remove(id: string): boolean {
    const before = this.added.length;
    this.added = this.added.filter((a) => a.id !== id);
    return this.added.length !== before;
  }

  setActiveFile(file: ActiveFile | undefined): void {
    this.active = file;
  }

  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
  }

  toggleActiveFile(enabled: boolean): void {
    this.activeChoice = enabled;
  }

  /** The active file when it goes with the next question: switched on, attachable, and not attached already as a whole file. */
  activeFileToSend(): ActiveFile | undefined {
    const state = this.activeFile;
    if (!state?.enabled) return undefined;
    if (this.added.some((a) => a.uri === state.file.uri && !a.lines)) return undefined;
    return state.file;
  }

  /** What the next question carries, in chip order: the active file's attachment (read by the caller), then the rest. */
  forSend(active: Attachment | undefined): Attachment[] {
    return active ? [active, ...this.added] : [...this.added];
  }

  /** The question went out with these: their chips go. */
  sent(ids: Iterable<string>): void {
    const gone = new Set(ids);
    this.added = this.added.filter((a) => !gone.has(a.id));
  }
}
