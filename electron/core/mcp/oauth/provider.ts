/**
 * Warden's `OAuthClientProvider` for the MCP SDK.
 *
 * The SDK's `auth()` does discovery (RFC 9728 protected-resource metadata, RFC 8414 / OIDC
 * authorization-server metadata), dynamic client registration, PKCE, the `resource` parameter and
 * refresh; this provider supplies storage and the checks the SDK leaves to the client:
 * - the authorization server's metadata must exist, list `S256` in
 *   `code_challenge_methods_supported`, and name as `issuer` the URL it was discovered at
 *   (RFC 8414 §3.3), and all its endpoints must be https or loopback http — checked when the SDK
 *   reports discovery, i.e. before any registration, token request or browser;
 * - tokens, client information and the PKCE verifier live only in the OS keychain, keyed by
 *   server, account and issuer, tokens also by resource (`OAuthCredentialVault`);
 * - every request of the flow goes through `fetch`, the guarded fetch of this server's network
 *   scope (which hosts and origins may be reached; see network-scope.ts); a connection uses the
 *   same fetch for its MCP requests (`guardedFetchOf`);
 * - the authorization URL is opened only if it is https or loopback http, through the
 *   `BrowserOpener` port, and only in a login the person started (`mode: 'login'`). A connection
 *   that finds no usable token fails with UnauthorizedError ("sign in") instead of popping up a
 *   browser by itself.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { WardenError } from '../../../../shared/result';
import type { BrowserOpener, Clock } from '../../ports';
import { systemClock } from '../../ports';
import type { OAuthCredentialVault, StoredTokens } from './credential-vault';
import type { OAuthNetworkScope } from './network-scope';
import { assertOAuthUrl, createGuardedFetch, oauthUrlProblem } from './url-policy';

/** A client id registered with the authorization server out of band (from the server definition). */
export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string;
}

export interface WardenOAuthProviderOptions {
  vault: OAuthCredentialVault;
  /** Where this server's OAuth traffic may go; the provider's `fetch` applies it. */
  network: OAuthNetworkScope;
  /** The network fetch under the guard (default: the global fetch). */
  fetch?: FetchLike;
  /** `login`: a person started sign-in, the browser may open. `connect`: never opens anything. */
  mode: 'login' | 'connect';
  /** The loopback redirect URI of the running login; connect mode uses a placeholder (never visited). */
  redirectUrl?: string;
  /** The `state` to put in the authorization URL (login mode: the loopback receiver's). */
  state?: string;
  /** Opens the authorization URL (login mode). */
  browser?: BrowserOpener;
  preRegistered?: PreRegisteredClient;
  /** Scopes from the server definition, used when the server advertises none. */
  scopes?: readonly string[];
  clientName?: string;
  clock?: Clock;
}

/** The redirect URI registered for connect-mode providers: loopback, any port (RFC 8252 §7.3). */
export const PLACEHOLDER_REDIRECT_URL = 'http://127.0.0.1/callback';

/** `WardenOAuthProvider` for one (server, account); one instance per login or connection. */
export class WardenOAuthProvider implements OAuthClientProvider {
  /** Authorization server of the discovery in progress (the SDK reports it before anything else). */
  private issuer: string | undefined;
  /** Every issuer this provider dealt with, so logout can delete their material too. */
  readonly seenIssuers = new Set<string>();
  /** Set once the browser was asked to open an authorization URL. */
  authorizationUrlOpened: URL | undefined;
  /**
   * The fetch for everything this provider's flow requests (pass it as `fetchFn` to `auth()` and
   * as `fetch` to the server's transport): the network scope's guard.
   */
  readonly fetch: FetchLike;
  private metadata: AuthorizationServerMetadata | undefined;
  private readonly clock: Clock;

  constructor(private readonly options: WardenOAuthProviderOptions) {
    this.clock = options.clock ?? systemClock;
    this.fetch = createGuardedFetch(options.network, options.fetch);
    if (options.mode === 'login' && (!options.redirectUrl || !options.browser || !options.state)) {
      throw new Error('WardenOAuthProvider: login mode needs redirectUrl, state and browser');
    }
  }

  get redirectUrl(): string {
    return this.options.redirectUrl ?? PLACEHOLDER_REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.options.scopes?.length ? this.options.scopes.join(' ') : undefined;
    return {
      client_name: this.options.clientName ?? 'Warden',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A desktop app cannot keep a secret: a public client, protected by PKCE.
      token_endpoint_auth_method: this.options.preRegistered?.clientSecret ? 'client_secret_basic' : 'none',
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    if (!this.options.state) throw new UnauthorizedError('no sign-in in progress');
    return this.options.state;
  }

  /** The authorization server the current (or last) discovery named, once known. */
  get currentIssuer(): string | undefined {
    return this.issuer;
  }

  /** The checked metadata of that authorization server, once known. */
  get discoveredMetadata(): AuthorizationServerMetadata | undefined {
    return this.metadata;
  }

  private async issuerOrStored(): Promise<string | undefined> {
    return this.issuer ?? (await this.options.vault.currentIssuer()) ?? undefined;
  }

  /**
   * Checks the discovered authorization server before the SDK uses it: metadata present, PKCE
   * S256 listed, issuer equal to where it was discovered, endpoints https or loopback.
   *
   * Throwing here aborts `auth()` before registration, token requests or the browser.
   */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    const discoveredAt = String(state.authorizationServerUrl);
    const problem = oauthUrlProblem(discoveredAt);
    if (problem) throw new WardenError('DENIED', `Refusing authorization server ${discoveredAt}: ${problem}.`);
    // A refused protected-resource-metadata request is swallowed by the SDK, which then falls
    // back to the server's own origin; the refusal (naming the URL and why) is the real answer.
    if (!state.resourceMetadata) {
      const refused = this.options.network.takeRefusal();
      if (refused) throw refused;
    }
    const metadata = state.authorizationServerMetadata;
    if (!metadata) {
      throw new WardenError(
        'UNSUPPORTED',
        `Authorization server ${discoveredAt} publishes no OAuth metadata, so it does not support PKCE S256 as far as Warden can tell; refusing to sign in.`,
      );
    }
    checkMetadata(metadata, discoveredAt);
    this.options.network.trustMetadata(discoveredAt, metadata);
    this.metadata = metadata;
    this.issuer = discoveredAt;
    this.seenIssuers.add(discoveredAt);
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const pre = this.options.preRegistered;
    if (pre) {
      const secret = pre.clientSecret ?? (await this.options.vault.clientSecret()) ?? undefined;
      return { client_id: pre.clientId, ...(secret ? { client_secret: secret } : {}) };
    }
    const issuer = await this.issuerOrStored();
    const info = issuer ? await this.options.vault.clientInformation(issuer) : undefined;
    if (!info && this.options.mode === 'connect') {
      // Registering a client is part of signing in; a background connection does not start it.
      throw new UnauthorizedError('This server needs you to sign in (OAuth); start sign-in for this account.');
    }
    return info;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    // Pre-registered ids come from the server definition; nothing to store.
    if (this.options.preRegistered) return;
    const issuer = info.issuer ?? (await this.issuerOrStored());
    if (!issuer) throw new WardenError('AUTH_FAILED', 'OAuth client information arrived before any authorization server was discovered.');
    await this.options.vault.saveClientInformation(issuer, info);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const issuer = await this.issuerOrStored();
    if (!issuer) return undefined;
    const stored = await this.options.vault.tokens(issuer);
    if (!stored) return undefined;
    const { obtained_at: _obtainedAt, ...tokens } = stored;
    return tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const issuer = tokens.issuer ?? this.issuer;
    if (!issuer) throw new WardenError('AUTH_FAILED', 'OAuth tokens arrived without the authorization server that issued them.');
    const stored: StoredTokens = { ...tokens, issuer, obtained_at: this.clock.now() };
    await this.options.vault.saveTokens(issuer, stored);
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.options.mode !== 'login') {
      // A background connection never opens a browser on its own: the person starts sign-in.
      throw new UnauthorizedError('This server needs you to sign in (OAuth); start sign-in for this account.');
    }
    const url = assertOAuthUrl(authorizationUrl, 'open the authorization page');
    this.authorizationUrlOpened = url;
    await this.options.browser!.open(url.href);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    // Connect mode never continues to a browser, so a verifier would only be litter.
    if (this.options.mode !== 'login') return;
    const issuer = await this.issuerOrStored();
    if (!issuer) throw new WardenError('AUTH_FAILED', 'PKCE verifier created before any authorization server was discovered.');
    await this.options.vault.saveCodeVerifier(issuer, codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const issuer = await this.issuerOrStored();
    const verifier = issuer ? await this.options.vault.codeVerifier(issuer) : null;
    if (!verifier) throw new WardenError('AUTH_FAILED', 'No PKCE verifier is stored for this sign-in; start the sign-in again.');
    return verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const issuer = await this.issuerOrStored();
    if (!issuer || scope === 'discovery') return;
    const vault = this.options.vault;
    if (scope === 'all' || scope === 'tokens') await vault.delete('tokens', issuer);
    if ((scope === 'all' || scope === 'client') && !this.options.preRegistered) await vault.delete('client', issuer);
    if (scope === 'all' || scope === 'verifier') await vault.delete('verifier', issuer);
  }
}

/** RFC 8414 and MCP 2025-11-25 checks on authorization server metadata discovered at `discoveredAt`. */
export function checkMetadata(metadata: AuthorizationServerMetadata, discoveredAt: string): void {
  if (!issuerMatches(metadata.issuer, discoveredAt)) {
    throw new WardenError(
      'AUTH_FAILED',
      `Authorization server metadata names issuer ${JSON.stringify(metadata.issuer)} but was discovered for ${discoveredAt} (RFC 8414 issuer check); refusing to sign in.`,
    );
  }
  const methods = metadata.code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes('S256')) {
    throw new WardenError(
      'UNSUPPORTED',
      `Authorization server ${discoveredAt} does not support PKCE S256 (code_challenge_methods_supported: ${methods ? JSON.stringify(methods) : 'absent'}); refusing to sign in.`,
    );
  }
  for (const field of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'] as const) {
    const value = (metadata as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    const problem = oauthUrlProblem(value);
    if (problem) throw new WardenError('DENIED', `Authorization server ${discoveredAt} lists ${field} ${value.split('?')[0]}: ${problem}.`);
  }
}

/** Same issuer, tolerating one trailing slash (as the SDK does): `https://as.example` ≡ `https://as.example/`. */
export function issuerMatches(a: string, b: string): boolean {
  const norm = (s: string): string => {
    try {
      return new URL(s).href.replace(/\/$/, '');
    } catch {
      return s.replace(/\/$/, '');
    }
  };
  return norm(a) === norm(b);
}

/**
 * The guarded fetch that belongs with `provider`, when it is Warden's: a connection of an OAuth
 * server sends its MCP requests and its token refreshes through it, so they obey the same
 * network scope as sign-in.
 */
export function guardedFetchOf(provider: OAuthClientProvider): FetchLike | undefined {
  return provider instanceof WardenOAuthProvider ? provider.fetch : undefined;
}

/**
 * The RFC 9207 check of an authorization response: when the response carries `iss` it must be
 * exactly the issuer Warden sent the person to, and when that server advertises
 * `authorization_response_iss_parameter_supported` it must be there. A mismatch means the code
 * may have come from another authorization server (a mix-up attack); throws AUTH_FAILED.
 */
export function checkAuthorizationResponseIssuer(metadata: AuthorizationServerMetadata | undefined, iss: string | undefined): void {
  if (!metadata) return;
  const advertised = (metadata as { authorization_response_iss_parameter_supported?: unknown }).authorization_response_iss_parameter_supported === true;
  if (iss === undefined) {
    if (!advertised) return;
    throw new WardenError(
      'AUTH_FAILED',
      `Sign-in refused: ${metadata.issuer} promises to say who answered (RFC 9207 "iss"), but the response came back without it, so it may not be from that server; no token was requested.`,
    );
  }
  if (iss !== metadata.issuer) {
    throw new WardenError(
      'AUTH_FAILED',
      `Sign-in refused: the response says it came from ${JSON.stringify(iss.slice(0, 200))}, but Warden sent you to ${metadata.issuer} (RFC 9207 issuer check); no token was requested.`,
    );
  }
}
