// Talking to the Hub (or a mirror): the revision resolved to its commit and the commit's file list through
// @huggingface/hub, over a fetch of ours that applies the access rules to every request — the first one, each
// redirect and each next page of the listing alike: the token goes only to the configured endpoint's origin (never
// to a CDN it redirects to), a URL is followed only to https or to the endpoint's own scheme, every request is
// timed and retried under the one policy of hubRetry.ts, and a listing stops at a page limit and a request budget
// derived from the number of files the model info counts. The library's own credentials check (tokens must start
// with "hf_") would refuse a mirror's tokens, so the header is added here instead of passing `accessToken`.
import { HubApiError, listFiles, modelInfo } from '@huggingface/hub';
import { escapeForMessage } from '../text/escapeForMessage';
import { CHATGLM_REPO, DEFAULT_ENDPOINT, type HubFile } from './chatglmRepository';
import { DownloadError, isAbort } from './downloadErrors';
import { DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, RetryableError, withRetries, type RetryInfo, type RetryPolicy } from './hubRetry';

export interface HubAccess {
  /** The endpoint's origin and path prefix, e.g. https://huggingface.co or https://hf-mirror.com. */
  endpoint: URL;
  token?: string;
  signal?: AbortSignal;
  /** Retries, backoff and timeouts of the metadata requests (the same policy as the files'). */
  retry?: RetryPolicy;
  onRetry?: (info: RetryInfo) => void;
}

const MAX_REDIRECTS = 8;

/** The endpoint setting as a URL (no trailing slash); an error naming the setting otherwise. */
export function parseEndpoint(value: string | undefined): URL {
  const text = (value ?? '').trim() || DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DownloadError('endpoint-invalid', `The Hub endpoint "${escapeForMessage(text)}" is not a URL (for example https://huggingface.co).`, { endpoint: escapeForMessage(text) });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DownloadError('endpoint-invalid', `The Hub endpoint "${escapeForMessage(text)}" must be an http or https URL.`, { endpoint: escapeForMessage(text) });
  }
  if (url.username || url.password) {
    throw new DownloadError('endpoint-invalid', 'The Hub endpoint must not carry a user name or password; give the token separately.', { endpoint: url.origin });
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  url.search = '';
  url.hash = '';
  return url;
}

/** The endpoint as the library's `hubUrl` (no trailing slash). */
export function hubUrl(endpoint: URL): string {
  return `${endpoint.origin}${endpoint.pathname.replace(/\/+$/, '')}`;
}

/** Whether a request to `url` may carry the token: only the configured endpoint's origin. */
export function mayCarryToken(url: URL, endpoint: URL): boolean {
  return url.origin === endpoint.origin;
}

/** Loopback hosts: a request to them never leaves this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Refuses to send a token over plain http to a host other than this machine: anyone on the way could read it, and
 * a leaked token cannot be taken back. A public mirror needs no token; a private one should speak https.
 */
export function checkTokenTransport(endpoint: URL, token: string | undefined): void {
  if (!token || endpoint.protocol !== 'http:' || isLoopbackHost(endpoint.hostname)) return;
  throw new DownloadError('token-insecure',
    `The Hub endpoint ${escapeForMessage(endpoint.origin)} is plain http: the Hugging Face token would travel in cleartext, so nothing was sent.`,
    { endpoint: escapeForMessage(endpoint.origin) });
}

/** A URL as a message shows it: scheme and host (`data:` has none), escaped. */
function shownTarget(url: URL): string {
  return escapeForMessage(url.host ? `${url.protocol}//${url.host}` : url.protocol);
}

/** Refuses `next` unless it is https, or http when the endpoint itself is http. `what`: "A redirect", "A next page". */
export function checkScheme(next: URL, endpoint: URL, what: string): URL {
  if (next.protocol === 'https:' || (next.protocol === endpoint.protocol && endpoint.protocol === 'http:')) return next;
  throw new DownloadError('redirect-refused', `${what} to ${shownTarget(next)} was refused: only https (or the endpoint's own scheme) is followed.`, { endpoint: endpoint.origin });
}

/** The next URL of a redirect, or the refusal: https always, http only when the endpoint itself is http. */
export function followRedirect(from: URL, location: string | undefined, endpoint: URL): URL {
  if (!location) throw new DownloadError('hub-error', `The Hub answered a redirect without a location (${from.origin}).`, { endpoint: endpoint.origin });
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new DownloadError('hub-error', `The Hub answered a redirect to something that is not a URL: "${escapeForMessage(location.slice(0, 200))}".`, { endpoint: endpoint.origin });
  }
  return checkScheme(next, endpoint, 'A redirect');
}

/** Requests one listing may still make (its redirects and retries included), and what the limit is called. */
export interface RequestBudget {
  limit: number;
  used: number;
  /** "The file list of zai-org/chatglm3-6b" */
  what: string;
}

/** The most a metadata answer may hold (the model info of a 10,000-file repository is about 1 MB). */
const MAX_METADATA_BYTES = 64 * 1024 * 1024;

async function readCapped(res: Response, what: string): Promise<ArrayBuffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (res.body) {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > MAX_METADATA_BYTES) {
        await res.body.cancel().catch(() => undefined);
        throw new DownloadError('hub-error', `${what}: the answer is larger than ${MAX_METADATA_BYTES / 1024 / 1024} MB.`);
      }
      chunks.push(chunk);
    }
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out.buffer;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A fetch for @huggingface/hub. Every URL it is given (the first request, a next page) and every redirect obeys
 * the scheme rule; the token is added per request to the endpoint's origin only; each request is retried and timed
 * under the access's policy (429 and 5xx after their Retry-After), and its whole answer read within the timeout
 * (a body that stalls is retried too); a budget, when given, counts every request made.
 */
export function guardedFetch(access: HubAccess, what: string, budget?: RequestBudget): typeof fetch {
  return async (input, init) => {
    const first = checkScheme(new URL(input instanceof Request ? input.url : String(input)), access.endpoint, 'A request');
    return withRetries(what, access.retry ?? DEFAULT_RETRY, access.signal, access.onRetry, async (signal) => {
      let url = first;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        if (budget && ++budget.used > budget.limit) {
          throw new DownloadError('listing-too-long', `${budget.what} took more than ${budget.limit} requests (its budget); nothing was downloaded.`, { limit: budget.limit });
        }
        const headers = new Headers(init?.headers);
        headers.delete('authorization');
        if (access.token && mayCarryToken(url, access.endpoint)) headers.set('authorization', `Bearer ${access.token}`);
        const res = await fetch(url, { ...init, headers, redirect: 'manual', signal });
        if (res.status >= 300 && res.status < 400 && res.status !== 304) {
          await res.body?.cancel();
          url = followRedirect(url, res.headers.get('location') ?? undefined, access.endpoint);
          continue;
        }
        if (isRetryableStatus(res.status)) {
          await res.body?.cancel();
          throw new RetryableError(`HTTP ${res.status}`, parseRetryAfter(res.headers.get('retry-after')), res.status);
        }
        const body = await readCapped(res, what);
        return new Response(NULL_BODY.has(res.status) ? null : body, { status: res.status, statusText: res.statusText, headers: res.headers });
      }
      throw new DownloadError('hub-error', `The Hub redirected more than ${MAX_REDIRECTS} times.`, { endpoint: access.endpoint.origin });
    });
  };
}

/** The server's own words for a failure (the `error` of a JSON body, or its text), escaped and shortened. */
export function serverReason(data: unknown): string | undefined {
  const d = data as { error?: unknown; message?: unknown } | undefined;
  const text = typeof d?.error === 'string' ? d.error : typeof d?.message === 'string' ? d.message : undefined;
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  return escapeForMessage(trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed);
}

/** The words of a 401/403: the server's reason kept; "set a token" only when none was sent. */
export function unauthorizedMessage(subject: string, status: number, tokenSent: boolean, reason: string | undefined): string {
  const said = reason ? ` The server said: "${reason}".` : '';
  return tokenSent
    ? `${subject} was refused (HTTP ${status}) although a Hugging Face token was sent: the token is not accepted for this repository, or the model's terms are not accepted on its page.${said}`
    : `${subject} was refused (HTTP ${status}): the repository is gated or private. Set a Hugging Face token.${said}`;
}

/** A Hub failure as our error: 401/403 → unauthorized, 404 → not found; an abort stays an abort. */
export function hubFailure(e: unknown, repo: string, revision: string, access: HubAccess): unknown {
  if (isAbort(e) || e instanceof DownloadError) return e;
  const { endpoint } = access;
  const facts = { repo, revision, endpoint: endpoint.origin };
  if (e instanceof HubApiError) {
    const reason = serverReason(e.data);
    if (e.statusCode === 401 || e.statusCode === 403) {
      const tokenSent = access.token !== undefined;
      return new DownloadError('hub-unauthorized', unauthorizedMessage(`Access to ${repo} at ${endpoint.origin}`, e.statusCode, tokenSent, reason),
        { ...facts, status: e.statusCode, tokenSent, ...(reason ? { serverReason: reason } : {}) });
    }
    if (e.statusCode === 404) {
      return new DownloadError('hub-not-found', `${endpoint.origin} has no ${repo} at revision "${escapeForMessage(revision)}" (HTTP 404).`, { ...facts, status: 404 });
    }
    return new DownloadError('hub-error', `${endpoint.origin} answered HTTP ${e.statusCode} for ${repo}.${reason ? ` The server said: "${reason}".` : ''}`, { ...facts, status: e.statusCode });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new DownloadError('network', `Could not reach ${endpoint.origin}: ${escapeForMessage(message)}`, facts);
}

export interface ResolvedRevision {
  commit: string;
  files: HubFile[];
  /** How many files the model info counts (the listing's limits are derived from it). */
  expectedFiles: number;
}

/** The smallest page the Hub's tree listing serves (50 entries with expand, 1,000 without). */
const SMALLEST_PAGE = 50;
/** Files assumed when the model info does not count them (a mirror without siblings). */
const FILES_WHEN_UNCOUNTED = 10_000;

/** A listing's page limit and request budget for `expectedFiles` files: every page at the smallest size, plus spare. */
export function listingLimits(expectedFiles: number, policy: RetryPolicy = DEFAULT_RETRY): { pages: number; requests: number } {
  const pages = Math.ceil(Math.max(1, expectedFiles) / SMALLEST_PAGE) + 2;
  return { pages, requests: pages * 2 + policy.attempts * 2 };
}

/** The revision's commit (branch or tag → sha) and that commit's files with their sizes and hashes. */
export async function resolveRevision(access: HubAccess, repo = CHATGLM_REPO, revision = 'main'): Promise<ResolvedRevision> {
  const hub = hubUrl(access.endpoint);
  const origin = escapeForMessage(access.endpoint.origin);
  try {
    const info = await modelInfo({ hubUrl: hub, fetch: guardedFetch(access, `Asking ${origin} for ${repo} at "${escapeForMessage(revision)}"`), name: repo, revision, additionalFields: ['sha', 'filePaths'] });
    const commit = String((info as { sha?: unknown }).sha ?? '');
    if (!/^[0-9a-f]{40}$/.test(commit)) throw new DownloadError('hub-error', `${origin} did not name the commit of ${repo}@${escapeForMessage(revision)}.`, { repo, revision });
    // filePaths: the model info's siblings (an empty list when the server sent none).
    const counted = (info as { filePaths?: unknown }).filePaths;
    const expectedFiles = Array.isArray(counted) && counted.length ? counted.length : FILES_WHEN_UNCOUNTED;
    const limits = listingLimits(expectedFiles, access.retry ?? DEFAULT_RETRY);
    const what = `The file list of ${repo} from ${origin}`;
    const pageFetch = guardedFetch(access, what, { limit: limits.requests, used: 0, what });
    let pages = 0;
    const countedFetch: typeof fetch = (input, init) => {
      // The library asks for each next page with a new call: the page limit is counted here.
      if (++pages > limits.pages) {
        return Promise.reject(new DownloadError('listing-too-long',
          `${what} did not end within ${limits.pages} pages (the limit for the ${expectedFiles} files its model info counts); nothing was downloaded.`, { repo, revision, limit: limits.pages }));
      }
      if (pages > 1) {
        try {
          checkScheme(new URL(input instanceof Request ? input.url : String(input)), access.endpoint, 'The next page of the file list');
        } catch (e) {
          return Promise.reject(e);
        }
      }
      return pageFetch(input, init);
    };
    const files: HubFile[] = [];
    for await (const entry of listFiles({ hubUrl: hub, fetch: countedFetch, repo: { type: 'model', name: repo }, revision: commit, recursive: true })) {
      if (entry.type !== 'file') continue;
      files.push({
        path: entry.path,
        size: entry.lfs?.size ?? entry.size,
        ...(entry.lfs ? { sha256: entry.lfs.oid } : entry.oid ? { gitOid: entry.oid } : {}),
      });
    }
    return { commit, files, expectedFiles };
  } catch (e) {
    throw hubFailure(e, repo, revision, access);
  }
}
