// The last few suggestions, so typing through a shown suggestion reuses it: the user typed what it began with,
// the rest is still the answer (no new request, no flicker). Entries are keyed by the document and the text around
// the cursor; anything else typed misses.

interface Entry {
  document: string;
  prefix: string;
  suffix: string;
  completion: string;
}

export class CompletionCache {
  private readonly entries: Entry[] = [];

  constructor(private readonly capacity = 20) {}

  /** Remembers what `prefix|suffix` of `document` completed to ('' is remembered too: nothing to suggest there). */
  put(document: string, prefix: string, suffix: string, completion: string): void {
    const i = this.entries.findIndex((e) => e.document === document && e.prefix === prefix && e.suffix === suffix);
    if (i >= 0) this.entries.splice(i, 1);
    this.entries.push({ document, prefix, suffix, completion });
    if (this.entries.length > this.capacity) this.entries.shift();
  }

  /**
   * The rest of a remembered suggestion when the user has typed its start since (same text after the cursor);
   * undefined when nothing fits. An exact hit returns the suggestion itself (possibly '').
   */
  get(document: string, prefix: string, suffix: string): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.document !== document || e.suffix !== suffix || !prefix.startsWith(e.prefix)) continue;
      const typed = prefix.slice(e.prefix.length);
      if (typed === '') return e.completion;
      if (typed.length < e.completion.length && e.completion.startsWith(typed)) return e.completion.slice(typed.length);
    }
    return undefined;
  }

  /** Forget a document's entries (closed, or edited elsewhere than at the cursor). */
  forget(document: string): void {
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.entries[i]!.document === document) this.entries.splice(i, 1);
  }

  get size(): number {
    return this.entries.length;
  }
}
