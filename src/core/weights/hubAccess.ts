// Talking to the Hub (or a mirror): the revision resolved to its commit and the commit's file list through
// @huggingface/hub, over a fetch of ours that applies the access rules to every request and redirect — the token
// goes only to the configured endpoint's origin (never to a CDN it redirects to), and a redirect is followed only
// to https or to the endpoint's own scheme. The library's own credentials check (tokens must start with "hf_")
// would refuse a mirror's tokens, so the header is added here instead of passing `accessToken`.
import { HubApiError, listFiles, modelInfo } from '@huggingface/hub';
import { CHATGLM_REPO, DEFAULT_ENDPOINT, type HubFile } from './chatglmRepository';
import { DownloadError, isAbort } from './downloadErrors';

export interface HubAccess {
  /** The endpoint's origin and path prefix, e.g. https://huggingface.co or https://hf-mirror.com. */
  endpoint: URL;
  token?: string;
  signal?: AbortSignal;
}

const MAX_REDIRECTS = 8;

/** The endpoint setting as a URL (no trailing slash); an error naming the setting otherwise. */
export function parseEndpoint(value: string | undefined): URL {
  const text = (value ?? '').trim() || DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DownloadError('endpoint-invalid', `The Hub endpoint "${text}" is not a URL (for example https://huggingface.co).`, { endpoint: text });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DownloadError('endpoint-invalid', `The Hub endpoint "${text}" must be an http or https URL.`, { endpoint: text });
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

/** The next URL of a redirect, or the refusal: https always, http only when the endpoint itself is http. */
export function followRedirect(from: URL, location: string | undefined, endpoint: URL): URL {
  if (!location) throw new DownloadError('hub-error', `The Hub answered a redirect without a location (${from.origin}).`, { endpoint: endpoint.origin });
  const next = new URL(location, from);
  if (next.protocol === 'https:' || (next.protocol === endpoint.protocol && endpoint.protocol === 'http:')) return next;
  throw new DownloadError('redirect-refused', `A redirect to ${next.protocol}//${next.host} was refused: only https (or the endpoint's own scheme) is followed.`, { endpoint: endpoint.origin });
}

/** A fetch for @huggingface/hub: redirects followed by hand under the rules above, the token added per request. */
export function guardedFetch(access: HubAccess): typeof fetch {
  return async (input, init) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const headers = new Headers(init?.headers);
      headers.delete('authorization');
      if (access.token && mayCarryToken(url, access.endpoint)) headers.set('authorization', `Bearer ${access.token}`);
      const res = await fetch(url, { ...init, headers, redirect: 'manual', ...(access.signal ? { signal: access.signal } : {}) });
      if (res.status < 300 || res.status >= 400 || res.status === 304) return res;
      await res.body?.cancel();
      url = followRedirect(url, res.headers.get('location') ?? undefined, access.endpoint);
    }
    throw new DownloadError('hub-error', `The Hub redirected more than ${MAX_REDIRECTS} times.`, { endpoint: access.endpoint.origin });
  };
}

/** A Hub failure as our error: 401/403 → unauthorized, 404 → not found; an abort stays an abort. */
export function hubFailure(e: unknown, repo: string, revision: string, endpoint: URL): unknown {
  if (isAbort(e) || e instanceof DownloadError) return e;
  const facts = { repo, revision, endpoint: endpoint.origin };
  if (e instanceof HubApiError) {
    if (e.statusCode === 401 || e.statusCode === 403) {
      return new DownloadError('hub-unauthorized', `${endpoint.origin} refused access to ${repo} (HTTP ${e.statusCode}): the repository is gated or private, or the token is not accepted. Set a Hugging Face token.`, { ...facts, status: e.statusCode });
    }
    if (e.statusCode === 404) {
      return new DownloadError('hub-not-found', `${endpoint.origin} has no ${repo} at revision "${revision}" (HTTP 404).`, { ...facts, status: 404 });
    }
    return new DownloadError('hub-error', `${endpoint.origin} answered HTTP ${e.statusCode} for ${repo}.`, { ...facts, status: e.statusCode });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new DownloadError('network', `Could not reach ${endpoint.origin}: ${message}`, facts);
}

export interface ResolvedRevision {
  commit: string;
  files: HubFile[];
}

/** The revision's commit (branch or tag → sha) and that commit's files with their sizes and hashes. */
export async function resolveRevision(access: HubAccess, repo = CHATGLM_REPO, revision = 'main'): Promise<ResolvedRevision> {
  const common = { hubUrl: hubUrl(access.endpoint), fetch: guardedFetch(access) };
  try {
    const info = await modelInfo({ ...common, name: repo, revision, additionalFields: ['sha'] });
    const commit = String((info as { sha?: unknown }).sha ?? '');
    if (!/^[0-9a-f]{40}$/.test(commit)) throw new DownloadError('hub-error', `${access.endpoint.origin} did not name the commit of ${repo}@${revision}.`, { repo, revision });
    const files: HubFile[] = [];
    for await (const entry of listFiles({ ...common, repo: { type: 'model', name: repo }, revision: commit, recursive: true })) {
      if (entry.type !== 'file') continue;
      files.push({
        path: entry.path,
        size: entry.lfs?.size ?? entry.size,
        ...(entry.lfs ? { sha256: entry.lfs.oid } : entry.oid ? { gitOid: entry.oid } : {}),
      });
    }
    return { commit, files };
  } catch (e) {
    throw hubFailure(e, repo, revision, access.endpoint);
  }
}
