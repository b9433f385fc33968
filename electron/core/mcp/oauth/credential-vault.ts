/**
 * OAuth material of one (server, account) in the OS keychain, keyed by issuer (issue 5 §1, §4).
 *
 * Layout (keys from `secretKey`, so every entry is under the server/account prefix and is deleted
 * with the account):
 * - `<server>/<account>/oauth-issuer`            the authorization server the current tokens came from
 * - `<server>/<account>/oauth-tokens@<issuer>`   tokens (JSON, with the time they were obtained)
 * - `<server>/<account>/oauth-client@<issuer>`   dynamically registered client information (JSON)
 * - `<server>/<account>/oauth-verifier@<issuer>` the PKCE verifier of a login in progress
 *
 * Keying by issuer means that when a resource server starts naming a different authorization
 * server, the old tokens and client registration are never presented to the new one. Nothing here
 * is ever written anywhere but the SecretStore (which refuses rather than falling back to a file).
 */
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { secretKey, secretKeyPrefix } from '../../../../shared/domain/servers';
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

/** Tokens as stored: the SDK's tokens plus when they were obtained, to compute expiry. */
export type StoredTokens = OAuthTokens & { obtained_at?: number };

/** The keychain-backed OAuth store of one (server, account), with a small read cache. */
export class OAuthCredentialVault {
  private readonly cache = new Map<string, string | null>();

  constructor(
    private readonly secrets: SecretStore,
    readonly serverId: string,
    readonly accountId: string,
  ) {}

  private key(name: string, issuer?: string): string {
    return secretKey(this.serverId, this.accountId, name, issuer);
  }

  private async read(key: string): Promise<string | null> {
    if (this.cache.has(key)) return this.cache.get(key)!;
    const value = await this.secrets.get(key);
    this.cache.set(key, value);
    return value;
  }

  private async write(key: string, value: string): Promise<void> {
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

  /** Forgets cached reads, so the next read goes to the keychain. */
  clearCache(): void {
    this.cache.clear();
  }

  /** The authorization server the current tokens were issued by, or null when signed out. */
  currentIssuer(): Promise<string | null> {
    return this.read(this.key(OAUTH_SECRET_NAMES.issuer));
  }

  /** Tokens stored for `issuer`. */
  async tokens(issuer: string): Promise<StoredTokens | undefined> {
    return parseJson<StoredTokens>(await this.read(this.key(OAUTH_SECRET_NAMES.tokens, issuer)));
  }

  /** Stores tokens for `issuer` and makes it the current issuer. */
  async saveTokens(issuer: string, tokens: StoredTokens): Promise<void> {
    await this.write(this.key(OAUTH_SECRET_NAMES.tokens, issuer), JSON.stringify(tokens));
    await this.write(this.key(OAUTH_SECRET_NAMES.issuer), issuer);
  }

  async clientInformation(issuer: string): Promise<OAuthClientInformationMixed | undefined> {
    return parseJson<OAuthClientInformationMixed>(await this.read(this.key(OAUTH_SECRET_NAMES.client, issuer)));
  }

  async saveClientInformation(issuer: string, info: OAuthClientInformationMixed): Promise<void> {
    await this.write(this.key(OAUTH_SECRET_NAMES.client, issuer), JSON.stringify(info));
  }

  async codeVerifier(issuer: string): Promise<string | null> {
    return this.read(this.key(OAUTH_SECRET_NAMES.verifier, issuer));
  }

  async saveCodeVerifier(issuer: string, verifier: string): Promise<void> {
    await this.write(this.key(OAUTH_SECRET_NAMES.verifier, issuer), verifier);
  }

  /** A pre-registered client's secret, if one is stored for this account. */
  clientSecret(): Promise<string | null> {
    return this.read(this.key(OAUTH_SECRET_NAMES.clientSecret));
  }

  /** Deletes one kind of material for `issuer`; returns how many entries existed. */
  async delete(kind: 'tokens' | 'client' | 'verifier', issuer: string): Promise<number> {
    return (await this.remove(this.key(OAUTH_SECRET_NAMES[kind], issuer))) ? 1 : 0;
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
    // under issuers this process never saw.
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
    if (await this.remove(this.key(OAUTH_SECRET_NAMES.issuer))) removed++;
    this.clearCache();
    return removed;
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
