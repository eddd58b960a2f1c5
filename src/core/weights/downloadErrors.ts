// Typed failures of a weights download. A stable code, the English message (the CLI prints it, VS Code localizes
// by code with these facts) and what to do; never the token, never a URL that could carry one.

export type DownloadErrorCode =
  /** Not enough free space where the weights go: nothing was started. */
  | 'space-low'
  /** 401/403: a gated or private repository, or a token the endpoint refuses. */
  | 'hub-unauthorized'
  /** 404: no such repository or revision at this endpoint. */
  | 'hub-not-found'
  /** The endpoint answered something else we cannot use (5xx after the retries, a malformed answer). */
  | 'hub-error'
  /** The network failed and kept failing after the retries; what was received is kept. */
  | 'network'
  /** The file list named a file outside the repository folder, or broke another listing rule. */
  | 'listing-refused'
  /** A redirect to a scheme we do not follow (http from an https endpoint, anything but http/https). */
  | 'redirect-refused'
  /** A file's bytes did not match the listing's size. */
  | 'size-mismatch'
  /** A file's sha256 (or git object id) did not match the listing, twice. */
  | 'checksum-mismatch'
  /** The endpoint setting is not an http(s) URL. */
  | 'endpoint-invalid'
  /** The file list did not end within its page limit or request budget (derived from the files the Hub counts). */
  | 'listing-too-long'
  /** A token would travel in cleartext: plain http to an endpoint that is not this machine. */
  | 'token-insecure';

export interface DownloadErrorFacts {
  file?: string;
  dir?: string;
  neededBytes?: number;
  freeBytes?: number;
  status?: number;
  endpoint?: string;
  repo?: string;
  revision?: string;
  /** A token was sent with the refused request (401/403): the fix is another token, not setting one. */
  tokenSent?: boolean;
  /** The server's own reason for a refusal, escaped and shortened. */
  serverReason?: string;
  /** How long the request that timed out waited. */
  timeoutMs?: number;
  /** The limit a listing hit (pages or requests). */
  limit?: number;
  /** The commit the server said a file came from (X-Repo-Commit), when it is not the listing's. */
  servedCommit?: string;
}

export class DownloadError extends Error {
  override readonly name = 'DownloadError';
  constructor(readonly code: DownloadErrorCode, message: string, readonly facts: DownloadErrorFacts = {}) {
    super(message);
  }
}

export function isDownloadError(e: unknown): e is DownloadError {
  return e instanceof DownloadError;
}

export function isAbort(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || (e as { code?: unknown }).code === 'ABORT_ERR');
}

/** Figures as people read them: 12.5 GB, 640 MB, 12 KB (decimal units, as the Hub and file managers show sizes). */
export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e8 ? 0 : 1)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} KB`;
  return `${n} B`;
}
