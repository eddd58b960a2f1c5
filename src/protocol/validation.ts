// How every webview protocol is checked: each message is a strict zod object tagged by `type`, and a parser never
// throws; it returns the message or a short ProtocolError naming the type and the first problem.
import { z } from 'zod';

/** A strict message schema: `{type: <literal>, ...shape}` and nothing else. */
export const messageSchema = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), ...shape }).strict();

export interface ProtocolError {
  error: string;
}

export function isProtocolError(x: unknown): x is ProtocolError {
  return typeof x === 'object' && x !== null && 'error' in x && !('type' in x);
}

/** The parser of one direction of a protocol: validates a received message against `schema`; never throws. */
export function messageParser<T>(schema: z.ZodType<T>): (raw: unknown) => T | ProtocolError {
  return (raw) => parseMessage(schema, raw);
}

function parseMessage<T>(schema: z.ZodType<T>, raw: unknown): T | ProtocolError {
  try {
    const r = schema.safeParse(raw);
    if (r.success) return r.data;
    const first = r.error.issues[0];
    const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
    const type = typeof raw === 'object' && raw !== null && typeof (raw as { type?: unknown }).type === 'string'
      ? String((raw as { type: string }).type).slice(0, 40) : '?';
    return { error: `invalid message (${type})${where}: ${first?.message ?? 'rejected'}` };
  } catch (e) {
    return { error: `invalid message: ${e instanceof Error ? e.message : 'unreadable'}` };
  }
}
