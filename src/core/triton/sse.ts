// Incremental parser for Triton's /generate_stream Server-Sent Events. Network chunks split events (and UTF-8
// characters) anywhere, so bytes go through a streaming decoder and text is buffered until a blank line.

export interface SseEvent {
  /** The `data:` lines of one event, joined with "\n" (Triton sends exactly one per event). */
  data: string;
  /** The `event:` field, if any (Triton sends none). */
  event?: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';

  /** Feeds one network chunk; returns the events it completed. */
  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    // Normalise CRLF / CR line endings so "\r\n\r\n" separates events like "\n\n". A lone trailing "\r" may be
    // the first half of a CRLF split across chunks: keep it until the next chunk decides.
    const keepCr = this.buffer.endsWith('\r');
    let text = keepCr ? this.buffer.slice(0, -1) : this.buffer;
    text = text.replace(/\r\n?/g, '\n');
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n\n', start);
      if (end < 0) break;
      const ev = parseEventBlock(text.slice(start, end));
      if (ev) events.push(ev);
      start = end + 2;
    }
    this.buffer = text.slice(start) + (keepCr ? '\r' : '');
    return events;
  }

  /**
   * Ends the stream. A final event without its blank line is still delivered (Triton always terminates events,
   * so this only matters for a connection cut at the last moment, where the JSON parse decides validity).
   */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    const rest = this.buffer.replace(/\r\n?/g, '\n');
    this.buffer = '';
    const out: SseEvent[] = [];
    for (const block of rest.split('\n\n')) {
      const ev = parseEventBlock(block);
      if (ev) out.push(ev);
    }
    return out;
  }

  /** Bytes/characters received but not yet part of a complete event. */
  get pending(): string {
    return this.buffer;
  }
}

function parseEventBlock(block: string): SseEvent | undefined {
  const data: string[] = [];
  let event: string | undefined;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue; // comments / keep-alives
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  }
  if (data.length === 0) return undefined;
  return event === undefined ? { data: data.join('\n') } : { data: data.join('\n'), event };
}
