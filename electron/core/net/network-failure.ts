/**
 * Why a network request did not get an answer, told from the socket error's code wherever it sits
 * in the `cause` chain (undici wraps it in "fetch failed"; the model SDKs wrap that again): the
 * name does not resolve, nothing listens, the TLS handshake failed (and how), or the connection
 * dropped. Shared by the MCP connection layer and the model adapters, so both tell these apart
 * the same way and the renderer says them with the same sentences.
 */
import type { ConnectFailure, TlsProblem } from '../../../shared/domain/connect-failure';
import { sanitizeForDisplay } from '../text/sanitize';

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);
const TLS_PROBLEMS: Record<string, TlsProblem> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed',
  CERT_HAS_EXPIRED: 'expired',
  CERT_NOT_YET_VALID: 'not-yet-valid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'wrong-host',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'untrusted',
  UNABLE_TO_GET_ISSUER_CERT: 'untrusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'untrusted',
  CERT_UNTRUSTED: 'untrusted',
  CERT_REVOKED: 'untrusted',
  CERT_SIGNATURE_FAILURE: 'untrusted',
};

/** Every error in `error`'s cause chain (and AggregateError members), outermost first. */
export function errorChain(error: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 6 || out.includes(e as Record<string, unknown>)) return;
    out.push(e as Record<string, unknown>);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const inner of errors.slice(0, 4)) visit(inner, depth + 1);
    visit((e as { cause?: unknown }).cause, depth + 1);
  };
  visit(error, 0);
  return out;
}

function findCode(error: unknown, accept: (code: string) => boolean): string | undefined {
  for (const e of errorChain(error)) if (typeof e.code === 'string' && accept(e.code)) return e.code;
  return undefined;
}

/** Host (brackets dropped) and port of a URL, the default port filled in. */
export function hostAndPort(url: string): { host: string; port: number | null } {
  try {
    const u = new URL(url);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : null;
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return { host: url, port: null };
  }
}

const clean = (text: string) => sanitizeForDisplay(text).trim().slice(0, 300);

/**
 * The network failure `error` is for a request to `url`, or undefined when it is not one (an HTTP
 * answer, a protocol error, anything without a socket error code).
 */
export function networkFailureOf(error: unknown, url: string): ConnectFailure | undefined {
  const { host, port } = hostAndPort(url);
  if (findCode(error, (c) => DNS_CODES.has(c))) return { kind: 'dns', host: clean(host) };
  if (findCode(error, (c) => c === 'ECONNREFUSED')) return { kind: 'refused', host: clean(host), port };
  const tls = findCode(error, (c) => c in TLS_PROBLEMS || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_') || /CERT/.test(c));
  if (tls) return { kind: 'tls', host: clean(host), problem: TLS_PROBLEMS[tls] ?? 'other', code: clean(tls) };
  const network = findCode(error, (c) => NETWORK_CODES.has(c));
  if (network) return { kind: 'network', host: clean(host), code: network };
  return undefined;
}
