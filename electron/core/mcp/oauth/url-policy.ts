/**
 * Which URLs OAuth may touch: only https, or plain http to this machine (loopback).
 *
 * Applies to every URL Warden opens in the browser (the authorization URL) and every URL it
 * fetches during discovery, registration, token exchange and refresh. A token, a client secret or
 * a PKCE verifier sent over plain http to another host would be handed to anyone on the path, and
 * a `javascript:`/`file:` URL opened in the browser would run or read locally, so both are refused
 * before any byte leaves. Which hosts and origins a server's OAuth traffic may reach beyond that
 * is the network scope's decision (network-scope.ts); `createGuardedFetch` applies both.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isLoopbackHost } from '../../../../shared/domain/servers';
import { WardenError } from '../../../../shared/result';
import { describeUrl, refusalIn, type OAuthNetworkScope } from './network-scope';

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

const MAX_REDIRECTS = 5;

/** Headers that carry credentials of the origin they were meant for. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'cookie2'];

/**
 * Wraps `fetch` for the OAuth traffic of one server (`scope`): discovery, registration, token
 * requests, revocation, and the MCP requests of an OAuth server.
 *
 * Every URL, and every redirect hop, must be https or loopback http and pass the scope's address
 * and origin rules before it is requested; the request then goes through the scope's connection
 * pool, whose lookup checks the addresses again at the moment the socket opens. Headers configured
 * on the server definition go to the server's own origin only.
 *
 * Redirects are followed by hand (at most five). A redirect from https to plain http is refused;
 * on any change of origin the credentials (`Authorization`, cookies, the server's configured
 * headers) are dropped, and a request whose body would be re-sent as is (307/308: a token or
 * client-credential POST) is refused rather than handing its body to another origin. A caller that
 * asked for `redirect: 'manual'` or `'error'` gets exactly that (the SDK follows same-origin
 * redirects itself and calls this fetch again for each hop). A refusal rejects with
 * WardenError('DENIED') and nothing is sent to the refused URL.
 */
export function createGuardedFetch(scope: OAuthNetworkScope, base: FetchLike = fetch): FetchLike {
  const send = async (url: URL, init: RequestInit): Promise<Response> => {
    try {
      // `dispatcher` is undici's (Node's fetch) extension of RequestInit.
      return await base(url, { ...init, dispatcher: scope.dispatcher } as unknown as RequestInit);
    } catch (error) {
      throw refusalIn(error) ?? error;
    }
  };
  return async (input, init) => {
    let url = assertOAuthUrl(input instanceof URL ? input : String(input), 'fetch');
    await scope.check(url);
    const headers = new Headers(init?.headers);
    if (!scope.isServerOrigin(url)) dropHeaders(headers, scope.serverHeaderNames);
    let request: RequestInit = { ...init, headers };
    if (init?.redirect === 'manual' || init?.redirect === 'error') return send(url, request);
    request = { ...request, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await send(url, request);
      const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
      if (!location) return response;
      await response.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) {
        throw new WardenError('DENIED', `Refusing to follow more than ${MAX_REDIRECTS} redirects from ${describeUrl(url)}.`);
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new WardenError('DENIED', `Refusing to follow a redirect from ${describeUrl(url)}: its Location is not a URL.`);
      }
      next = assertOAuthUrl(next, 'follow a redirect to');
      if (url.protocol === 'https:' && next.protocol === 'http:') {
        throw new WardenError('DENIED', `Refusing to follow a redirect from ${describeUrl(url)} to ${describeUrl(next)}: it leaves https for plain http.`);
      }
      await scope.check(next);
      // 303 (and 301/302 after a POST, as browsers do) turns into a body-less GET.
      const becomesGet =
        response.status === 303 || ((response.status === 301 || response.status === 302) && (request.method ?? 'GET').toUpperCase() !== 'GET');
      if (next.origin !== url.origin) {
        if (!becomesGet && request.body !== undefined && request.body !== null) {
          throw new WardenError(
            'DENIED',
            `Refusing to follow a redirect from ${describeUrl(url)} to another site (${describeUrl(next)}): the request's body (which may carry a token or client credentials) would be sent there.`,
          );
        }
        const moved = new Headers(request.headers);
        dropHeaders(moved, CREDENTIAL_HEADERS);
        dropHeaders(moved, scope.serverHeaderNames);
        request = { ...request, headers: moved };
      }
      if (becomesGet) {
        const { body: _body, ...rest } = request;
        const moved = new Headers(rest.headers);
        moved.delete('content-type');
        moved.delete('content-length');
        request = { ...rest, headers: moved, method: 'GET' };
      }
      url = next;
    }
  };
}

function dropHeaders(headers: Headers, names: Iterable<string>): void {
  for (const name of names) headers.delete(name);
}
