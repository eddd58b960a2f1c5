// Per-user API keys of a team deployment. The keys file (nginx/keys.map) holds only each key's HMAC-SHA256 digest
// and its id, as lines of an nginx `map`: it can be kept in git, and nginx (set-misc's set_hmac_sha256) computes
// the same digest of the presented key to find the id. The key itself is printed once, when it is added.
import { createHmac, randomBytes } from 'node:crypto';

/** The HMAC key: a public label (the keys are 256-bit random, so no secret is needed to make the digest one-way). */
export const KEY_DIGEST_LABEL = 'triton-chatglm-team-key-v1';
export const KEY_PREFIX = 'tcg_';
const KEY_ID = /^[A-Za-z0-9._@-]{1,64}$/;
const LINE = /^([0-9a-f]{64})\s+"([A-Za-z0-9._@-]{1,64})";\s*(?:#\s*(.*))?$/;

export interface KeyEntry {
  digest: string;
  id: string;
  /** The comment after the entry (when it was added). */
  note: string;
}

export class TeamKeyError extends Error {
  override readonly name = 'TeamKeyError';
}

export function newApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function keyDigest(key: string): string {
  return createHmac('sha256', KEY_DIGEST_LABEL).update(key, 'utf8').digest('hex');
}

export function validKeyId(id: string): boolean {
  return KEY_ID.test(id);
}

/** Reads keys.map; a line that is not an entry, a comment or blank is an error naming its number. */
export function parseKeysFile(text: string): KeyEntry[] {
  const entries: KeyEntry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m) throw new TeamKeyError(`keys file line ${i + 1} is not "<sha256 hex> \\"<id>\\";"`);
    entries.push({ digest: m[1]!, id: m[2]!, note: (m[3] ?? '').trim() });
  });
  return entries;
}

export function formatKeysFile(entries: readonly KeyEntry[]): string {
  const head = [
    '# API keys of this team deployment: HMAC-SHA256 digest of each key -> key id (an nginx map; no key is stored here).',
    '# Managed by `triton-chatglm team keys add|revoke`; nginx reads it again on `nginx -s reload`.',
  ];
  return `${[...head, ...entries.map((e) => `${e.digest} "${e.id}";${e.note ? ` # ${e.note}` : ''}`)].join('\n')}\n`;
}

/** A new key for `id` (one key per id: revoke first to replace it). Returns the new entries and the key. */
export function addKey(entries: readonly KeyEntry[], id: string, now: Date): { entries: KeyEntry[]; key: string } {
  if (!validKeyId(id)) throw new TeamKeyError(`key id "${id}": use letters, digits and . _ @ - (up to 64)`);
  if (entries.some((e) => e.id === id)) throw new TeamKeyError(`key id "${id}" exists; revoke it first to issue a new key`);
  const key = newApiKey();
  return { entries: [...entries, { digest: keyDigest(key), id, note: `added ${now.toISOString().slice(0, 10)}` }], key };
}

export function revokeKey(entries: readonly KeyEntry[], id: string): KeyEntry[] {
  if (!entries.some((e) => e.id === id)) throw new TeamKeyError(`no key with id "${id}"`);
  return entries.filter((e) => e.id !== id);
}
