/**
 * OAuth material of one (server, account) in the OS keychain, keyed by issuer and by resource.
 *
 * Layout (keys from `secretKey`, so every entry is under the server/account prefix and is deleted
 * with the account; `<r>` is a short hash of the resource, the server's origin + path):
 * - `<server>/<account>/oauth-issuer~<r>`            the authorization server the current tokens came from
 * - `<server>/<account>/oauth-tokens~<r>@<issuer>`   tokens (JSON, with the time they were obtained and the resource)
 * - `<server>/<account>/oauth-client@<issuer>`       dynamically registered client information (JSON)
 * - `<server>/<account>/oauth-verifier@<issuer>`     the PKCE verifier of a login in progress
 *
 * Keying by issuer means that when a resource server starts naming a different authorization
 * server, the old tokens and client registration are never presented to the new one. Keying
 * tokens by resource means that tokens obtained for one server address are never presented to
 * another, even if the address changed in a way Warden did not see (a settings file edited while
 * it was closed). Nothing here is ever written anywhere but the SecretStore (which refuses rather
 * than falling back to a file).
 *
 * Every token and client secret is handed to `onSecretValue` (the ledger's redactor) one by one,
 * when it is saved and whenever it is read: the keychain store only knows the JSON text it
 * stores, and a server that echoes the bare access token must find it scrubbed.
 */
import { createHash } from 'node:crypto';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { secretKey, secretKeyPrefix } from '../../../../shared/domain/servers';
import { WardenError } from '../../../../shared/result';
import type { SecretStore } from '../../ports';

/** Secret names used by the OAuth layer (the `name` part of `secretKey`). */
export const OAUTH_SECRET_NAMES = {
  issuer: 'oauth-issuer',
  tokens: 'oauth-tokens',
  client: 'oauth-client',
  verifier: 'oauth-verifier',
  /** A pre-registered confidential client's secret, if the person stored one. */
  clientSecret: 'oauth-client-secret',
} as const;

/** Tokens as stored: the SDK's tokens plus when they were obtained (to compute expiry) and for which resource. */
export type StoredTokens = OAuthTokens & { obtained_at?: number; resource?: string };

/** The resource a server URL's tokens belong to: its origin + path (what the endpoint hash covers). */
export function oauthResource(serverUrl: string | URL): string {
  const u = new URL(serverUrl);
  return `${u.origin}${u.pathname}`;
}

/** The keychain-backed OAuth store of one (server, account, resource), with a small read cache. */
export class OAuthCredentialVault {
  private readonly cache = new Map<string, string | null>();
  private readonly resourceTag: string;
  private retired = false;
  readonly resource: string;

  /**
   * @param serverUrl the server's configured URL; tokens are stored and found for its resource only
   * @param onSecretValue told every token and client secret read or written (the redactor)
   */
  constructor(
    private readonly secrets: SecretStore,
    readonly serverId: string,
    readonly accountId: string,
    serverUrl: string | URL,
    private readonly onSecretValue: (value: string) => void = () => {},
  ) {
    this.resource = oauthResource(serverUrl);
    this.resourceTag = createHash('sha256').update(this.resource, 'utf8').digest('hex').slice(0, 16);
  }

  private key(name: string, issuer?: string): string {
    return secretKey(this.serverId, this.accountId, name, issuer);
  }

  private tokensKey(issuer: string): string {
    return this.key(`${OAUTH_SECRET_NAMES.tokens}~${this.resourceTag}`, issuer);
  }

  private issuerKey(): string {
    return this.key(`${OAUTH_SECRET_NAMES.issuer}~${this.resourceTag}`);
  }

  private async read(key: string): Promise<string | null> {
    if (this.retired) return null;
    if (this.cache.has(key)) return this.cache.get(key)!;
    const value = await this.secrets.get(key);
    if (this.retired) return null;
    this.cache.set(key, value);
    return value;
  }

  private async write(key: string, value: string): Promise<void> {
    this.refuseIfRetired();
    this.cache.delete(key);
    await this.secrets.set(key, value);
    this.cache.set(key, value);
  }

  private async remove(key: string): Promise<boolean> {
    this.cache.delete(key);
    const removed = await this.secrets.delete(key);
    this.cache.set(key, null);
    return removed;
  }

  private refuseIfRetired(): void {
    if (this.retired) {
      throw new WardenError('CONFLICT', 'This sign-in was removed (the server was deleted or its address changed); nothing was stored.');
    }
  }

  /** Forgets cached reads, so the next read goes to the keychain. */
  clearCache(): void {
    this.cache.clear();
  }

  /**
   * Drops everything this vault holds in memory and makes it answer "nothing stored" from now on
   * (writes are refused): for the vaults of a server whose sign-in is being discarded, so a
   * connection still holding one can neither present nor store a token.
   */
  retire(): void {
    this.retired = true;
    this.cache.clear();
  }

  /** The authorization server the current tokens were issued by, or null when signed out. */
  currentIssuer(): Promise<string | null> {
    return this.read(this.issuerKey());
  }

  /** Tokens stored for `issuer` and this resource. */
  async tokens(issuer: string): Promise<StoredTokens | undefined> {
    const stored = parseJson<StoredTokens>(await this.read(this.tokensKey(issuer)));
    // Belt and braces: the key already names the resource; the value must say the same.
    if (!stored || (stored.resource !== undefined && stored.resource !== this.resource)) return undefined;
    this.announceTokens(stored);
    // The client registration belongs to the session: its secret must be known to the redactor
    // before a server could echo it, even in a run that never needs to present it.
    await this.clientInformation(issuer);
    return stored;
  }

  /** Stores tokens for `issuer` and this resource, and makes `issuer` the current one. */
  async saveTokens(issuer: string, tokens: StoredTokens): Promise<void> {
    this.refuseIfRetired();
    // Announced before the write: even a failed write must not leave a token unknown to the redactor.
    this.announceTokens(tokens);
    await this.write(this.tokensKey(issuer), JSON.stringify({ ...tokens, resource: this.resource }));
    await this.write(this.issuerKey(), issuer);
  }

  async clientInformation(issuer: string): Promise<OAuthClientInformationMixed | undefined> {
    const info = parseJson<OAuthClientInformationMixed>(await this.read(this.key(OAUTH_SECRET_NAMES.client, issuer)));
    if (info) this.announce(info.client_secret);
    return info;
  }

  async saveClientInformation(issuer: string, info: OAuthClientInformationMixed): Promise<void> {
    this.refuseIfRetired();
    this.announce(info.client_secret);
    await this.write(this.key(OAUTH_SECRET_NAMES.client, issuer), JSON.stringify(info));
  }

  async codeVerifier(issuer: string): Promise<string | null> {
    return this.read(this.key(OAUTH_SECRET_NAMES.verifier, issuer));
  }

  async saveCodeVerifier(issuer: string, verifier: string): Promise<void> {
    await this.write(this.key(OAUTH_SECRET_NAMES.verifier, issuer), verifier);
  }

  /** A pre-registered client's secret, if one is stored for this account. */
  async clientSecret(): Promise<string | null> {
    const secret = await this.read(this.key(OAUTH_SECRET_NAMES.clientSecret));
    if (secret !== null) this.announce(secret);
    return secret;
  }

  /** Deletes one kind of material for `issuer`; returns how many entries existed. */
  async delete(kind: 'tokens' | 'client' | 'verifier', issuer: string): Promise<number> {
    const key = kind === 'tokens' ? this.tokensKey(issuer) : this.key(OAUTH_SECRET_NAMES[kind], issuer);
    return (await this.remove(key)) ? 1 : 0;
  }

  /**
   * Logout: deletes tokens, client information and verifier for every issuer given (plus the
   * current one) and the issuer pointer. Returns how many keychain entries were removed.
   */
  async deleteAll(extraIssuers: Iterable<string> = []): Promise<number> {
    const issuers = new Set(extraIssuers);
    const current = await this.currentIssuer();
    if (current) issuers.add(current);
    let removed = 0;
    // A store that can list its keys (the keytar store can) lets logout find material stored
    // under issuers (and addresses) this process never saw.
    const listable = this.secrets as SecretStore & { keys?: (prefix: string) => Promise<string[]> };
    if (typeof listable.keys === 'function') {
      for (const key of await listable.keys(`${secretKeyPrefix(this.serverId, this.accountId)}oauth-`)) {
        if (key === this.key(OAUTH_SECRET_NAMES.clientSecret)) continue; // configuration, not a session
        if (await this.secrets.delete(key)) removed++;
      }
    }
    for (const issuer of issuers) {
      for (const kind of ['tokens', 'client', 'verifier'] as const) removed += await this.delete(kind, issuer);
    }
    if (await this.remove(this.issuerKey())) removed++;
    this.clearCache();
    return removed;
  }

  private announceTokens(tokens: StoredTokens): void {
    this.announce(tokens.access_token);
    this.announce(tokens.refresh_token);
    this.announce(tokens.id_token);
  }

  private announce(value: unknown): void {
    if (typeof value === 'string' && value.length > 0) this.onSecretValue(value);
  }
}

function parseJson<T>(raw: string | null): T | undefined {
  if (raw === null) return undefined;
  try {
    const value = JSON.parse(raw) as unknown;
    return value && typeof value === 'object' ? (value as T) : undefined;
  } catch {
    // A damaged entry counts as absent: the person signs in again, nothing is guessed.
    return undefined;
  }
}
