// What VS Code keeps for the chat panel while it is hidden (getState/setState), and the debounced saving of it.
import type { StateMessage, WebviewToHost } from '../../protocol';
import type { VsCodeApi } from '../shared/vscodeApi';

export interface PersistedState {
  version: 2;
  state: StateMessage | null;
  strings: Record<string, string>;
  draft: string;
  /** A question being edited in place, with its text so far. */
  editing?: { messageId: string; text: string };
}

export type ChatVsCodeApi = VsCodeApi<WebviewToHost, PersistedState>;

const SAVE_DELAY_MS = 500;

/** The state saved by an earlier page of this panel, if it is one this version can read (older ones are dropped). */
export function restoreState(api: ChatVsCodeApi): PersistedState | undefined {
  const saved = api.getState();
  return saved && saved.version === 2 ? saved : undefined;
}

/** Saves `snapshot()` at most every SAVE_DELAY_MS while things change, and at once when asked. */
export class StateSaver {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly api: ChatVsCodeApi, private readonly snapshot: () => PersistedState) {}

  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => { this.timer = undefined; this.saveNow(); }, SAVE_DELAY_MS);
  }

  saveNow(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = undefined; }
    this.api.setState(this.snapshot());
  }
}
