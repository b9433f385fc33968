/**
 * OAuth sign-in, sign-out and status for remote servers, and the provider hook the connection
 * layer uses for `auth.kind === 'oauth'` servers.
 *
 * A login is one person-started flow: a loopback receiver on 127.0.0.1 (random port, random
 * `state`, single use, timeout), the SDK's `auth()` with Warden's provider (discovery, S256 and
 * issuer checks, registration or a pre-registered id, PKCE, `resource`), the authorization page in
 * the system browser through the `BrowserOpener` port, the RFC 9207 `iss` check, then the code
 * exchange. Every URL fetched goes through the server's network scope (https or loopback http,
 * no private/link-local/reserved addresses, other origins only with the person's yes). Tokens end
 * up only in the OS keychain, keyed by server, account, issuer and resource.
 *
 * When a server's sign-in is discarded (the server is deleted, an account removed, or its address
 * changes) `discardServer` drops every vault of it from memory, so nothing still holding one can
 * present a token, and revokes the tokens at the authorization server (RFC 7009), as sign-out does.
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
import { OAuthNetworkScope, type OriginConfirmer, type ResolveHost } from './network-scope';
import { checkAuthorizationResponseIssuer, issuerMatches, WardenOAuthProvider } from './provider';

/** The part of the server settings the OAuth layer reads (ServerService satisfies it). */
export interface OAuthServerLookup {
  getServer(serverId: string): ServerDefinition | undefined;
  accountsOf(serverId: string): ReadonlyArray<{ id: string }>;
}

export interface OAuthServiceDeps {
  secrets: SecretStore;
  browser: BrowserOpener;
  servers: OAuthServerLookup;
  /** The network fetch under the guard (tests may pass an instrumented one). */
  fetch?: FetchLike;
  /** The DNS port of the network scope (default: the operating system's resolver). */
  resolveHost?: ResolveHost;
  /**
   * Asks the person, in a dialog the renderer does not own, before a sign-in contacts a site other
   * than the server's own (its authorization server). Default: refuses.
   */
  confirmAuthorizationServer?: OriginConfirmer;
  /** Told every token and client secret read or written (the ledger's redactor). */
  onSecretValue?: (value: string) => void;
  clock?: Clock;
  /** How long a login waits for the browser's redirect (default 5 minutes). */
  loginTimeoutMs?: number;
  /** `client_name` sent with dynamic client registration. */
  clientName?: string;
  /** Called after a login stored tokens (e.g. reconnect the account) and after a logout. */
  onChanged?: (status: AuthStatus) => void;
}

/** How long revoking one account's tokens may take before the deletion goes ahead without it. */
const REVOCATION_TIMEOUT_MS = 10_000;

/** OAuth for every (server, account) of the running core. */
export class OAuthService {
  private readonly vaults = new Map<string, OAuthCredentialVault>();
  private readonly seenIssuers = new Map<string, Set<string>>();
  private readonly inProgress = new Set<string>();
  private readonly clock: Clock;
  private readonly announce: (value: string) => void;

  constructor(private readonly deps: OAuthServiceDeps) {
    this.clock = deps.clock ?? systemClock;
    const sink = deps.onSecretValue;
    // The redactor counts registrations; a token read on every request is registered once.
    const known = new Set<string>();
    this.announce = sink
      ? (value) => {
          if (known.has(value)) return;
          known.add(value);
          sink(value);
        }
      : () => {};
  }

  /**
   * The provider a connection of an OAuth server uses (the connection layer's `authProviderFor`);
   * its `fetch` is the guarded fetch the connection sends its requests through.
   *
   * Connect mode: it presents stored tokens and refreshes them, but never registers a client,
   * opens a browser or asks the person anything; without a usable session, or when the server now
   * names an authorization server the person did not choose, the connect fails ("sign in").
   */
  providerFor(definition: ServerDefinition, accountId: string): OAuthClientProvider | undefined {
    if (definition.transport !== 'http' || definition.auth.kind !== 'oauth') return undefined;
    const vault = this.vault(definition, accountId);
    return new WardenOAuthProvider({
      vault,
      mode: 'connect',
      network: this.scope(definition, vault, 'connect'),
      ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
      ...this.clientOptions(definition),
    });
  }

  /** Signs one account in (see the file comment). Resolves with the new status; rejects with a WardenError. */
  async login(target: AuthTarget): Promise<AuthStatus> {
    const definition = this.oauthServer(target);
    const key = vaultKey(target.serverId, target.accountId);
    if (this.inProgress.has(key)) throw new WardenError('CONFLICT', `A sign-in for ${target.serverId}/${target.accountId} is already waiting for the browser.`);
    this.inProgress.add(key);
    const receiver = await startLoopbackCallback({ timeoutMs: this.deps.loginTimeoutMs });
    const vault = this.vault(definition, target.accountId);
    const network = this.scope(definition, vault, 'login');
    try {
      const provider = new WardenOAuthProvider({
        vault,
        mode: 'login',
        network,
        ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
        redirectUrl: receiver.redirectUrl,
        state: receiver.state,
        browser: this.deps.browser,
        clock: this.clock,
        ...this.clientOptions(definition),
      });
      const serverUrl = new URL(definition.url);
      const challenge = await this.probe(serverUrl, provider.fetch);
      // Scopes configured on the server definition are added to what the server asks for, so a
      // person can request more (e.g. what a tool's 403 insufficient_scope named) at sign-in.
      const scope = unionScopes(challenge.scope, definition.auth.kind === 'oauth' ? definition.auth.scopes : undefined);
      const options = { serverUrl, fetchFn: provider.fetch, ...challenge, ...(scope ? { scope } : {}) };
      try {
        let result = await auth(provider, options);
        if (result === 'REDIRECT') {
          const { code, iss } = await receiver.result;
          checkAuthorizationResponseIssuer(provider.discoveredMetadata, iss);
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
      void network.close();
    }
    const status = await this.status(target);
    this.deps.onChanged?.(status);
    return status;
  }

  /**
   * Signs out: asks the authorization server to revoke the tokens (RFC 7009, when it lists a
   * revocation endpoint; best effort, bounded), then deletes the account's tokens, client
   * registration and verifier from the keychain — the deletion happens whatever the server says.
   */
  async logout(target: AuthTarget): Promise<AuthStatus & { removedEntries: number; revoked: boolean }> {
    const definition = this.oauthServer(target);
    const key = vaultKey(target.serverId, target.accountId);
    const vault = this.vault(definition, target.accountId);
    const revoked = await this.revoke(definition, vault).catch(() => false);
    const removedEntries = await vault.deleteAll(this.issuersOf(key));
    const status = await this.status(target);
    this.deps.onChanged?.(status);
    return { ...status, removedEntries, revoked };
  }

  /**
   * The server's sign-in is about to be deleted from the keychain (the server is removed, these
   * accounts are removed, or its address or sign-in method changed): every vault of it is retired
   * at once, so a connection still holding one can no longer present or store a token, and the
   * tokens still in the keychain are revoked at the authorization server (bounded, best effort).
   * Never throws: the deletion goes ahead whatever the authorization server says.
   */
  async discardServer(definition: ServerDefinition, accountIds: readonly string[]): Promise<void> {
    const accounts = new Set(accountIds);
    for (const [key, vault] of this.vaults) {
      if (vault.serverId !== definition.id || !accounts.has(vault.accountId)) continue;
      vault.retire();
      this.vaults.delete(key);
    }
    for (const accountId of accounts) this.seenIssuers.delete(vaultKey(definition.id, accountId));
    if (definition.transport !== 'http' || definition.auth.kind !== 'oauth') return;
    await Promise.all(
      [...accounts].map((accountId) => {
        // A vault of its own, outside the map: it reads what the keychain holds right now.
        const vault = new OAuthCredentialVault(this.deps.secrets, definition.id, accountId, definition.url, this.announce);
        return this.revoke(definition, vault).catch(() => false);
      }),
    );
  }

  /**
   * RFC 7009 revocation of the current refresh token and access token; true when the server
   * accepted every request. Goes through the server's network scope in connect mode: only the
   * authorization server the account signed in with is contacted.
   */
  private async revoke(definition: HttpServerDefinition, vault: OAuthCredentialVault): Promise<boolean> {
    const issuer = await vault.currentIssuer();
    const tokens = issuer ? await vault.tokens(issuer) : undefined;
    if (!issuer || !tokens) return false;
    const network = this.scope(definition, vault, 'connect');
    try {
      const guarded = new WardenOAuthProvider({ vault, mode: 'connect', network, ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}) }).fetch;
      // Bounded: an unreachable authorization server must not hold up signing out or deleting.
      const deadline = AbortSignal.timeout(REVOCATION_TIMEOUT_MS);
      const bounded: FetchLike = (url, init) => guarded(url, { ...init, signal: deadline });
      const metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: bounded });
      const endpoint = (metadata as { revocation_endpoint?: unknown } | undefined)?.revocation_endpoint;
      if (!metadata || typeof endpoint !== 'string' || !issuerMatches(metadata.issuer, issuer)) return false;
      network.trustMetadata(issuer, metadata);
      const client = await vault.clientInformation(issuer);
      const clientId = client?.client_id ?? (definition.auth.kind === 'oauth' ? definition.auth.clientId : undefined);
      if (!clientId) return false;
      const clientSecret = client?.client_secret ?? (await vault.clientSecret()) ?? undefined;
      const revokeOne = async (token: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> => {
        const body = new URLSearchParams({ token, token_type_hint: hint, client_id: clientId });
        if (clientSecret) body.set('client_secret', clientSecret);
        const response = await bounded(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        await response.body?.cancel().catch(() => {});
        return response.ok;
      };
      // The refresh token first: revoking it ends the grant on most servers; the access token too,
      // for servers that keep issued access tokens alive until they expire.
      const results: boolean[] = [];
      if (tokens.refresh_token) results.push(await revokeOne(tokens.refresh_token, 'refresh_token'));
      if (tokens.access_token) results.push(await revokeOne(tokens.access_token, 'access_token'));
      return results.length > 0 && results.every(Boolean);
    } finally {
      void network.close();
    }
  }

  /** Whether the account is signed in; never returns token values. */
  async status(target: AuthTarget): Promise<AuthStatus> {
    const definition = this.oauthServer(target);
    const vault = this.vault(definition, target.accountId);
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
   * The network scope of one server's OAuth traffic. Sign-in may ask the person about another
   * origin; a connection or a revocation only reaches the authorization server the account
   * already signed in with.
   */
  private scope(definition: HttpServerDefinition, vault: OAuthCredentialVault, mode: 'login' | 'connect'): OAuthNetworkScope {
    const refuse: OriginConfirmer = async () => false;
    return new OAuthNetworkScope({
      serverName: definition.name,
      serverUrl: definition.url,
      serverHeaderNames: definition.headers.map((h) => h.name),
      ...(this.deps.resolveHost ? { resolve: this.deps.resolveHost } : {}),
      approvedIssuer: () => vault.currentIssuer(),
      ...(mode === 'login' ? { confirm: this.deps.confirmAuthorizationServer ?? refuse } : {}),
    });
  }

  /**
   * Asks the server once without a token, to read the `resource_metadata` and `scope` of its 401
   * challenge (RFC 9728 §5.1) — what a connection would learn on its first request.
   */
  private async probe(serverUrl: URL, guardedFetch: FetchLike): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    let response: Response;
    try {
      response = await guardedFetch(serverUrl, {
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

  /** The vault of one (server, account) at the server's current address. */
  private vault(definition: HttpServerDefinition, accountId: string): OAuthCredentialVault {
    const key = `${vaultKey(definition.id, accountId)} ${definition.url}`;
    let vault = this.vaults.get(key);
    if (!vault) this.vaults.set(key, (vault = new OAuthCredentialVault(this.deps.secrets, definition.id, accountId, definition.url, this.announce)));
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
