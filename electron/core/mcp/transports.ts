/**
 * The SDK `Transport` for each kind of server, and the client connected over it:
 *
 * - stdio: Warden's ProcessTransport (process-transport.ts), with secret environment variables
 *   read from the keychain;
 * - http: the SDK's Streamable HTTP, falling back to legacy HTTP+SSE when the server answers the
 *   initialize POST like an old server; secret headers and bearer tokens from the keychain, and
 *   for OAuth servers the provider with its guarded fetch (oauth/provider.ts);
 * - builtin: an in-memory transport to Warden's own server (the offline demo).
 *
 * Every secret read is handed to the server's log first, so it is masked in every line logged.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { envSecretProblem } from '../../../shared/domain/secret-env-names';
import { BEARER_SECRET, envSecretName, headerSecretName, secretKey, type BuiltinServerDefinition, type ServerDefinition } from '../../../shared/domain/servers';
import type { SecretStore } from '../ports';
import { displayText } from '../text/sanitize';
import { MissingSecretError } from './connect-failure';
import { errorText, TEXT_LIMITS } from './connection-common';
import type { LogRing } from './log-ring';
import { cappedFetch } from './capped-fetch';
import { SignInNeeded } from './oauth/network-scope';
import { guardedFetchOf } from './oauth/provider';
import { ProcessTransport } from './process-transport';

/** How the client reached the server, as the status shows it. */
export type TransportKind = 'stdio' | 'streamable-http' | 'sse' | 'in-process';

/** What opening a server needs. */
export interface OpenDeps {
  definition: ServerDefinition;
  accountId: string;
  secrets: SecretStore;
  log: LogRing;
  /** OAuth hook: the provider for an `auth.kind === 'oauth'` server's account. */
  authProviderFor?: (definition: ServerDefinition, accountId: string) => OAuthClientProvider | undefined;
  /** The fetch of OAuth servers whose provider brings none (Warden's brings its server's guarded fetch). */
  authFetch?: FetchLike;
  /** Opens the in-memory transport of a built-in server; absent = none available. */
  builtinTransport?: (builtin: BuiltinServerDefinition['builtin'], where: { serverId: string; accountId: string }) => Promise<Transport>;
  /** Told about the stdio process before it starts (how it ends explains a failed connect). */
  onProcess?: (process: ProcessTransport) => void;
}

/** Connects an SDK client over `transport` (or rejects, leaving nothing open). */
export type Attach = (transport: Transport) => Promise<Client>;

/** Thrown when an OAuth server has no signed-in account to connect with. */
export class AuthRequired extends Error {}

/** Builds the transport and connects a client over it with `attach` (HTTP: Streamable first, then SSE). */
export async function openClient(deps: OpenDeps, attach: Attach): Promise<{ client: Client; kind: TransportKind }> {
  const def = deps.definition;
  if (def.transport === 'builtin') {
    if (!deps.builtinTransport) throw new Error(`the built-in server "${def.builtin}" is not available in this build`);
    return { client: await attach(await deps.builtinTransport(def.builtin, { serverId: def.id, accountId: deps.accountId })), kind: 'in-process' };
  }
  const secret = (name: string) => readSecret(deps, name);
  if (def.transport === 'stdio') {
    const env: Record<string, string> = {};
    for (const v of def.env) {
      // A definition saved before only credential names could be secret (or edited by hand) may
      // still hide a setting: the program is not started with a value the person never saw.
      const problem = v.secret ? envSecretProblem(v.name) : null;
      if (problem) throw new Error(`${problem}. Warden did not start this server: its settings keep ${v.name} hidden; edit the server and enter the value as plain text`);
      env[v.name] = v.secret ? await secret(envSecretName(v.name)) : v.value!;
    }
    const transport = new ProcessTransport({ command: def.command, args: def.args, cwd: def.cwd, env, log: deps.log });
    deps.onProcess?.(transport);
    return { client: await attach(transport), kind: 'stdio' };
  }
  const headers: Record<string, string> = {};
  for (const h of def.headers) headers[h.name] = h.secret ? await secret(headerSecretName(h.name)) : h.value!;
  if (def.auth.kind === 'bearer') headers.Authorization = `Bearer ${await secret(BEARER_SECRET)}`;
  let authProvider: OAuthClientProvider | undefined;
  if (def.auth.kind === 'oauth') {
    authProvider = deps.authProviderFor?.(def, deps.accountId);
    if (!authProvider) throw new AuthRequired('this server uses OAuth; sign in to connect');
  }
  const url = new URL(def.url);
  const requestInit: RequestInit = { headers };
  // Warden's OAuth provider brings the guarded fetch of its server's network scope.
  const authFetch = authProvider ? (guardedFetchOf(authProvider) ?? deps.authFetch) : undefined;
  // One message is capped before the SDK reads it whole; a larger one closes the connection.
  let opened: { close(): Promise<void> } | undefined;
  const fetch = cappedFetch(authFetch, (why) => {
    deps.log.note(`${why}; closing the connection`);
    void opened?.close().catch(() => undefined);
  });
  const options = { requestInit, authProvider, fetch };
  try {
    return { client: await attach((opened = new StreamableHTTPClientTransport(url, options))), kind: 'streamable-http' };
  } catch (error) {
    // The SDK's documented backwards-compatibility rule: a 4xx to the initialize POST means an
    // old HTTP+SSE server. 401/403 are auth answers, not "old server", and never fall back.
    if (!(error instanceof StreamableHTTPError) || !isLegacyAnswer(error.code)) throw error;
    deps.log.note(`Streamable HTTP answered ${error.code}; falling back to legacy HTTP+SSE`);
  }
  return { client: await attach((opened = new SSEClientTransport(url, options))), kind: 'sse' };
}

/** One secret of this (server, account) from the keychain; a missing one is a clear error. */
async function readSecret(deps: OpenDeps, name: string): Promise<string> {
  const key = secretKey(deps.definition.id, deps.accountId, name);
  const value = await deps.secrets.get(key);
  if (value === null) throw new MissingSecretError(name, `secret "${name}" is not set for account ${deps.accountId}`);
  deps.log.addSecret(value);
  return value;
}

/** Statuses that mean "this is an old HTTP+SSE server" per the SDK's compatibility guidance. */
function isLegacyAnswer(code: number | undefined): boolean {
  return code !== undefined && code >= 400 && code < 500 && code !== 401 && code !== 403;
}

/** True when a connect failed because the person must sign in (the status is auth_required, never retried). */
export function needsSignIn(error: unknown): boolean {
  return error instanceof UnauthorizedError || error instanceof AuthRequired;
}

/** A failed connect in the person's words (the server's own text sanitized and capped). */
export function describeConnectError(error: unknown, def: ServerDefinition): string {
  if (error instanceof MissingSecretError || error instanceof AuthRequired) return error.message;
  if (error instanceof SignInNeeded) return error.message;
  if (error instanceof UnauthorizedError) return 'the server requires authorization; sign in to connect';
  const text = errorText(error);
  if (def.transport === 'http' && /fetch failed|ECONNREFUSED/i.test(text)) return `cannot reach ${new URL(def.url).origin}: ${displayText(text, TEXT_LIMITS.message)}`;
  return displayText(text, TEXT_LIMITS.message);
}
