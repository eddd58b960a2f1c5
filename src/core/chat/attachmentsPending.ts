// The attachments waiting above the chat input: what the user attached (selections, files, symbols, problems,
// changes; each removable) and the active editor's file as a chip of its own. Policy:
// - `tritonChatglm.chat.currentFile` says what that chip is: `suggest` (the default) shows it dashed, "current
//   file — click to attach", and sends nothing until clicked (the click attaches the file as an ordinary chip);
//   `always` attaches it by default, a click leaves it out (and the choice holds for the next file too); `never`
//   shows no such chip.
// - `always` holds only in a trusted workspace: in an untrusted one the chip is shown but off until the user
//   switches it on (reading files is safe there, sending one nobody chose is not what the user expects).
// - A chip of the file's own code (a selection, a symbol, the whole file) replaces its current-file chip, so the
//   same code never goes twice: two selections of one file send the two selections, not the file as well.
// - Attaching the same thing twice keeps one chip, with the newer text; code already inside another chip (a
//   selection of a file attached whole, a range inside a bigger one) is not added again; a whole file or a bigger
//   range takes the place of the chips it contains.
// - After a question is sent the attachments it took go; the current-file chip stays for the next question.
import { covers, isCode, MAX_ATTACHMENTS, sameSource, type Attachment, type TextRefusal } from './attachments';

export const CURRENT_FILE_MODES = ['suggest', 'always', 'never'] as const;
export type CurrentFileMode = (typeof CURRENT_FILE_MODES)[number];

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
  /** Only offered (`suggest`): a click attaches it. */
  suggested: boolean;
  /** Whether it goes with the next question. */
  enabled: boolean;
  /** On only because of the workspace's trust (the user has not chosen). */
  byDefault: boolean;
}

/** `covered`: the code is inside a chip already (nothing was added). */
export type AddResult = 'added' | 'replaced' | 'covered' | 'full';

export class PendingAttachments {
  private added: Attachment[] = [];
  private active: ActiveFile | undefined;
  private activeChoice: boolean | undefined;

  constructor(private trusted: boolean, private mode: CurrentFileMode = 'suggest') {}

  get items(): readonly Attachment[] {
    return this.added;
  }

  /** The current-file chip, if one is shown: none with `never`, nor while a chip of that file's code is attached. */
  get activeFile(): ActiveFileState | undefined {
    if (!this.active || this.mode === 'never') return undefined;
    const uri = this.active.uri;
    if (this.added.some((a) => isCode(a) && a.uri === uri)) return undefined;
    if (this.mode === 'suggest') return { file: this.active, suggested: true, enabled: false, byDefault: true };
    const wanted = this.activeChoice ?? this.trusted;
    return { file: this.active, suggested: false, enabled: wanted && !this.active.refusal, byDefault: this.activeChoice === undefined };
  }

  get isTrusted(): boolean {
    return this.trusted;
  }

  get currentFileMode(): CurrentFileMode {
    return this.mode;
  }

  add(a: Attachment): AddResult {
    const i = this.added.findIndex((x) => sameSource(x, a));
    if (i >= 0) {
      this.added[i] = { ...a, id: this.added[i]!.id };
      return 'replaced';
    }
    if (this.added.some((x) => covers(x, a))) return 'covered';
    const before = this.added.length;
    this.added = this.added.filter((x) => !covers(a, x));
    const swallowed = this.added.length !== before;
    if (!swallowed && this.added.length >= MAX_ATTACHMENTS) return 'full';
    this.added.push(a);
    return swallowed ? 'replaced' : 'added';
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

  setMode(mode: CurrentFileMode): void {
    this.mode = mode;
  }

  /** `always`: the user switched the chip on or off. (`suggest`: the adapter attaches the file with add().) */
  toggleActiveFile(enabled: boolean): void {
    this.activeChoice = enabled;
  }

  /** The active file when it goes with the next question by itself (`always`, switched on, attachable, not replaced). */
  activeFileToSend(): ActiveFile | undefined {
    const state = this.activeFile;
    return state && !state.suggested && state.enabled ? state.file : undefined;
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
