/**
 * Which URLs OAuth may touch (issue 5 §4): only https, or plain http to this machine (loopback).
 *
 * Applies to every URL Warden opens in the browser (the authorization URL) and every URL it
 * fetches during discovery, registration, token exchange and refresh. A token, a client secret or
 * a PKCE verifier sent over plain http to another host would be handed to anyone on the path, and
 * a `javascript:`/`file:` URL opened in the browser would run or read locally, so both are refused
 * before any byte leaves.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isLoopbackHost } from '../../../../shared/domain/servers';
import { WardenError } from '../../../../shared/result';

/** Why `raw` may not be opened or fetched for OAuth, or null when it may. */
export function oauthUrlProblem(raw: string | URL): string | null {
  let url: URL;
  try {
    url = raw instanceof URL ? raw : new URL(raw);
  } catch {
    return 'it is not an absolute URL';
  }
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    return isLoopbackHost(url.hostname) ? null : `plain http to ${url.hostname} is not loopback (only https, or http on 127.0.0.1/::1/localhost)`;
  }
  return `scheme ${url.protocol} is not allowed (only https, or http on loopback)`;
}

/**
 * Throws WardenError('DENIED') naming the URL's origin when OAuth may not use it.
 *
 * `purpose` says what the URL was for ("open the authorization page", "fetch"), so the message
 * tells the person which step was refused.
 */
export function assertOAuthUrl(raw: string | URL, purpose: string): URL {
  const problem = oauthUrlProblem(raw);
  if (problem) throw new WardenError('DENIED', `Refusing to ${purpose} ${describeUrl(raw)}: ${problem}.`);
  return raw instanceof URL ? raw : new URL(raw);
}

/** Origin + path of a URL, never its query (which may carry a code or state). */
function describeUrl(raw: string | URL): string {
  try {
    const u = raw instanceof URL ? raw : new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return JSON.stringify(String(raw).slice(0, 100));
  }
}

const MAX_REDIRECTS = 5;

/**
 * Wraps `fetch` so OAuth discovery and token requests only ever reach https or loopback-http URLs.
 *
 * Redirects are followed by hand (at most five), so a permitted URL cannot bounce a request to a
 * forbidden one: every hop is checked before it is requested. A caller that asked for
 * `redirect: 'manual'` or `'error'` gets exactly that. A refused URL rejects with
 * WardenError('DENIED') and is never requested.
 */
export function createGuardedFetch(base: FetchLike = fetch): FetchLike {
  return async (input, init) => {
    let url = assertOAuthUrl(input instanceof URL ? input : String(input), 'fetch');
    if (init?.redirect === 'manual' || init?.redirect === 'error') return base(url, init);
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await base(url, request);
      const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
      if (!location) return response;
      if (hop >= MAX_REDIRECTS) {
        await response.body?.cancel();
        throw new WardenError('DENIED', `Refusing to follow more than ${MAX_REDIRECTS} redirects from ${describeUrl(url)}.`);
      }
      await response.body?.cancel();
      url = assertOAuthUrl(new URL(location, url), 'follow a redirect to');
      // 303 (and 301/302 after a POST, as browsers do) turns into a body-less GET.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method && request.method !== 'GET')) {
        const { body: _body, ...rest } = request;
        request = { ...rest, method: 'GET' };
      }
    }
  };
}
