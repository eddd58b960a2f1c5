// How the session reaches an external server behind a team proxy (docs/TEAM.md): the key travels as
// `Authorization: Bearer` (over the configured headers), and a pinned CA file replaces Node's bundled roots.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { SessionSettings } from './sessionSettings';

export function externalHeaders(external: SessionSettings['external']): Record<string, string> {
  if (!external.apiKey) return { ...external.headers };
  const rest = Object.fromEntries(Object.entries(external.headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
  return { ...rest, authorization: `Bearer ${external.apiKey}` };
}

/** The CA file's PEM; a file that cannot be read or holds no certificate fails with its path named. */
export function readCaFile(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
    new X509Certificate(pem);
  } catch (e) {
    throw new Error(`The CA file ${path} (tritonChatglm.externalCaFile) is not a readable PEM certificate: ${e instanceof Error ? e.message : String(e)}`);
  }
  return pem;
}
