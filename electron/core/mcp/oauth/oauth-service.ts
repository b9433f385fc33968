/**
 * OAuth sign-in, sign-out and status for remote servers (issue 5 §4), and the provider hook the
 * connection layer uses for `auth.kind === 'oauth'` servers.
 *
 * A login is one person-started flow: a loopback receiver on 127.0.0.1 (random port, random
 * `state`, single use, timeout), the SDK's `auth()` with Warden's provider (discovery, S256 and
 * issuer checks, registration or a pre-registered id, PKCE, `resource`), the authorization page in
 * the system browser through the `BrowserOpener` port, then the code exchange. Every URL fetched
 * goes through the https-or-loopback guard. Tokens end up only in the OS keychain.
 */
import {
  auth,
  discoverAuthorizationServerMetadata,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { AuthStatus, AuthTarget } from '../../../../shared/contract/auth';
import type { HttpServerDefinition, ServerDefinition } from '../../../../shared/domain/servers';
import { WardenError } from '../../../../shared/result';
import { systemClock, type BrowserOpener, type Clock, type SecretStore } from '../../ports';
import { OAuthCredentialVault } from './credential-vault';
import { startLoopbackCallback } from './loopback-callback';
import { issuerMatches, WardenOAuthProvider } from './provider';
import { createGuardedFetch } from './url-policy';

/** The part of the server settings the OAuth layer reads (ServerService satisfies it). */
export interface OAuthServerLookup {
  getServer(serverId: string): ServerDefinition | undefined;
  accountsOf(serverId: string): ReadonlyArray<{ id: string }>;
}

export interface OAuthServiceDeps {
  secrets: SecretStore;
  browser: BrowserOpener;
  servers: OAuthServerLookup;
  /** The network fetch under the https-or-loopback guard (tests may pass an instrumented one). */
  fetch?: FetchLike;
  clock?: Clock;
  /** How long a login waits for the browser's redirect (default 5 minutes). */
  loginTimeoutMs?: number;
  /** `client_name` sent with dynamic client registration. */
  clientName?: string;
  /** Called after a login stored tokens (e.g. reconnect the account) and after a logout. */
  onChanged?: (status: AuthStatus) => void;
}

/** OAuth for every (server, account) of the running core. */
export class OAuthService {
  /** The guarded fetch: pass it as `fetch` to Streamable HTTP / SSE transports of OAuth servers. */
  readonly fetch: FetchLike;
  private readonly vaults = new Map<string, OAuthCredentialVault>();
  private readonly seenIssuers = new Map<string, Set<string>>();
  private readonly inProgress = new Set<string>();
  private readonly clock: Clock;

  constructor(private readonly deps: OAuthServiceDeps) {
    this.fetch = createGuardedFetch(deps.fetch ?? fetch);
    this.clock = deps.clock ?? systemClock;
  }

  /**
   * The provider a connection of an OAuth server uses (the connection layer's `authProviderFor`).
   *
   * Connect mode: it presents stored tokens and refreshes them, but never registers a client or
   * opens a browser; without a usable session the connect fails with UnauthorizedError, which the
   * connection shows as "auth required".
   */
  providerFor(definition: ServerDefinition, accountId: string): OAuthClientProvider | undefined {
    if (definition.transport !== 'http' || definition.auth.kind !== 'oauth') return undefined;
    const provider = new WardenOAuthProvider({
      vault: this.vault(definition.id, accountId),
      mode: 'connect',
      ...this.clientOptions(definition),
    });
    return provider;
  }

  /** Signs one account in (see the file comment). Resolves with the new status; rejects with a WardenError. */
  async login(target: AuthTarget): Promise<AuthStatus> {
    const definition = this.oauthServer(target);
    const key = vaultKey(target.serverId, target.accountId);
    if (this.inProgress.has(key)) throw new WardenError('CONFLICT', `A sign-in for ${target.serverId}/${target.accountId} is already waiting for the browser.`);
    this.inProgress.add(key);
    const receiver = await startLoopbackCallback({ timeoutMs: this.deps.loginTimeoutMs });
    try {
      const vault = this.vault(target.serverId, target.accountId);
      const provider = new WardenOAuthProvider({
        vault,
        mode: 'login',
        redirectUrl: receiver.redirectUrl,
        state: receiver.state,
        browser: this.deps.browser,
        clock: this.clock,
        ...this.clientOptions(definition),
      });
      const serverUrl = new URL(definition.url);
      const challenge = await this.probe(serverUrl);
      // Scopes configured on the server definition are added to what the server asks for, so a
      // person can request more (e.g. what a tool's 403 insufficient_scope named) at sign-in.
      const scope = unionScopes(challenge.scope, definition.auth.kind === 'oauth' ? definition.auth.scopes : undefined);
      const options = { serverUrl, fetchFn: this.fetch, ...challenge, ...(scope ? { scope } : {}) };
      try {
        let result = await auth(provider, options);
        if (result === 'REDIRECT') {
          const { code } = await receiver.result;
          result = await auth(provider, { ...options, authorizationCode: code });
        }
        if (result !== 'AUTHORIZED') throw new WardenError('AUTH_FAILED', 'Sign-in did not complete.');
        if (provider.currentIssuer) await vault.delete('verifier', provider.currentIssuer);
      } finally {
        for (const issuer of provider.seenIssuers) this.issuersOf(key).add(issuer);
      }
    } catch (error) {
      throw asWardenError(error, `Sign-in to ${definition.name} failed`);
    } finally {
      this.inProgress.delete(key);
      await receiver.close();
    }
    const status = await this.status(target);
    this.deps.onChanged?.(status);
    return status;
  }

  /**
   * Signs out: asks the authorization server to revoke the refresh token (RFC 7009, when it lists
   * a revocation endpoint; best effort, bounded), then deletes the account's tokens, client
   * registration and verifier from the keychain — the deletion happens whatever the server says.
   */
  async logout(target: AuthTarget): Promise<AuthStatus & { removedEntries: number; revoked: boolean }> {
    this.oauthServer(target);
    const key = vaultKey(target.serverId, target.accountId);
    const vault = this.vault(target.serverId, target.accountId);
    const revoked = await this.revoke(vault).catch(() => false);
    const removedEntries = await vault.deleteAll(this.issuersOf(key));
    const status = await this.status(target);
    this.deps.onChanged?.(status);
    return { ...status, removedEntries, revoked };
  }

  /** RFC 7009 revocation of the current refresh token (or access token); true when the server accepted it. */
  private async revoke(vault: OAuthCredentialVault): Promise<boolean> {
    const issuer = await vault.currentIssuer();
    const tokens = issuer ? await vault.tokens(issuer) : undefined;
    if (!issuer || !tokens) return false;
    // Bounded: an unreachable authorization server must not hold up signing out.
    const bounded: FetchLike = (url, init) => this.fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: bounded });
    const endpoint = (metadata as { revocation_endpoint?: unknown } | undefined)?.revocation_endpoint;
    if (!metadata || typeof endpoint !== 'string' || !issuerMatches(metadata.issuer, issuer)) return false;
    const client = await vault.clientInformation(issuer);
    const clientId = client?.client_id;
    if (!clientId) return false;
    const body = new URLSearchParams({
      token: tokens.refresh_token ?? tokens.access_token,
      token_type_hint: tokens.refresh_token ? 'refresh_token' : 'access_token',
      client_id: clientId,
    });
    if (client.client_secret) body.set('client_secret', client.client_secret);
    const response = await bounded(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    await response.body?.cancel().catch(() => {});
    return response.ok;
  }

  /** Whether the account is signed in; never returns token values. */
  async status(target: AuthTarget): Promise<AuthStatus> {
    this.oauthServer(target);
    const vault = this.vault(target.serverId, target.accountId);
    const issuer = await vault.currentIssuer();
    const tokens = issuer ? await vault.tokens(issuer) : undefined;
    const expiresAt =
      tokens?.expires_in !== undefined && tokens.obtained_at !== undefined ? new Date(tokens.obtained_at + tokens.expires_in * 1000).toISOString() : null;
    return {
      serverId: target.serverId,
      accountId: target.accountId,
      signedIn: Boolean(tokens?.access_token),
      issuer: tokens ? issuer : null,
      expiresAt,
      canRefresh: Boolean(tokens?.refresh_token),
      loginInProgress: this.inProgress.has(vaultKey(target.serverId, target.accountId)),
    };
  }

  private clientOptions(definition: HttpServerDefinition): { preRegistered?: { clientId: string }; scopes?: string[]; clientName?: string } {
    const a = definition.auth.kind === 'oauth' ? definition.auth : undefined;
    return {
      ...(a?.clientId ? { preRegistered: { clientId: a.clientId } } : {}),
      ...(a?.scopes?.length ? { scopes: a.scopes } : {}),
      ...(this.deps.clientName ? { clientName: this.deps.clientName } : {}),
    };
  }

  /**
   * Asks the server once without a token, to read the `resource_metadata` and `scope` of its 401
   * challenge (RFC 9728 §5.1) — what a connection would learn on its first request.
   */
  private async probe(serverUrl: URL): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    let response: Response;
    try {
      response = await this.fetch(serverUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: this.deps.clientName ?? 'Warden', version: '0' } },
        }),
      });
    } catch (error) {
      if (error instanceof WardenError) throw error;
      throw new WardenError('NOT_CONNECTED', `Could not reach ${serverUrl.origin}: ${error instanceof Error ? error.message : String(error)}`);
    }
    await response.body?.cancel().catch(() => {});
    if (response.status !== 401 && response.status !== 403) return {};
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
  }

  private oauthServer(target: AuthTarget): HttpServerDefinition {
    const definition = this.deps.servers.getServer(target.serverId);
    if (!definition) throw new WardenError('NOT_FOUND', `serverId: no server ${JSON.stringify(target.serverId)}`);
    if (!this.deps.servers.accountsOf(target.serverId).some((a) => a.id === target.accountId)) {
      throw new WardenError('NOT_FOUND', `accountId: server ${target.serverId} has no account ${JSON.stringify(target.accountId)}`);
    }
    if (definition.transport !== 'http' || definition.auth.kind !== 'oauth') {
      throw new WardenError('UNSUPPORTED', `serverId: server ${target.serverId} does not use OAuth (auth.kind must be "oauth")`);
    }
    return definition;
  }

  private vault(serverId: string, accountId: string): OAuthCredentialVault {
    const key = vaultKey(serverId, accountId);
    let vault = this.vaults.get(key);
    if (!vault) this.vaults.set(key, (vault = new OAuthCredentialVault(this.deps.secrets, serverId, accountId)));
    return vault;
  }

  private issuersOf(key: string): Set<string> {
    let set = this.seenIssuers.get(key);
    if (!set) this.seenIssuers.set(key, (set = new Set()));
    return set;
  }
}

/** Space-separated union of a challenge's scope and configured scopes, or undefined when both are empty. */
function unionScopes(challenge: string | undefined, configured: readonly string[] | undefined): string | undefined {
  const all = new Set([...(challenge?.split(' ') ?? []), ...(configured ?? [])].filter(Boolean));
  return all.size ? [...all].join(' ') : undefined;
}

function vaultKey(serverId: string, accountId: string): string {
  return `${serverId}/${accountId}`;
}

/** Keeps WardenErrors; turns SDK/OAuth errors into AUTH_FAILED with their message. */
function asWardenError(error: unknown, context: string): WardenError {
  if (error instanceof WardenError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new WardenError('AUTH_FAILED', `${context}: ${message}`);
}
