/**
 * Model providers' API keys in the OS keychain, each bound to the origin it was entered for.
 *
 * A key is stored under `model-provider:<providerId>@<origin>`, and read back only for the origin
 * of the provider's base URL at the time of the request. So a key entered for
 * `https://api.anthropic.com` can never be sent anywhere else: not after a base URL change made
 * in the app (which removes it, see ModelProviderService.update), and not after `models.json` was
 * edited by hand or by another program (the lookup for the new origin simply finds nothing). This
 * is the token-passthrough rule applied to API keys: a credential goes only to the party it was
 * issued for.
 *
 * The `:` keeps these names apart from server secrets (`<serverId>/<accountId>/<name>`): entity ids
 * never contain one, so no server's prefix can match a provider's key. Every value read or
 * written is announced to `onSecretValue` (the ledger's redactor) before anything could echo it.
 */
import type { ListableSecretStore } from '../secrets/keytar-secret-store';

const PREFIX = 'model-provider:';

/** The keychain entry name of a provider's key for one origin. */
export function providerKeyName(providerId: string, origin: string): string {
  return `${PREFIX}${providerId}@${encodeURIComponent(origin)}`;
}

/** `{ providerId, origin }` of an entry name made by `providerKeyName`; null for anything else. */
export function parseProviderKeyName(name: string): { providerId: string; origin: string } | null {
  const m = /^model-provider:([a-z0-9-]+)@([^@/]+)$/.exec(name);
  if (!m) return null;
  try {
    return { providerId: m[1]!, origin: decodeURIComponent(m[2]!) };
  } catch {
    return null;
  }
}

/** The keychain entries of model providers. */
export class ProviderKeys {
  constructor(
    private readonly secrets: ListableSecretStore,
    private readonly onSecretValue: (value: string) => void = () => {},
  ) {}

  /** The key stored for `providerId` at `origin`, or null. Rejects KEYCHAIN_UNAVAILABLE. */
  async get(providerId: string, origin: string): Promise<string | null> {
    const value = await this.secrets.get(providerKeyName(providerId, origin));
    if (value !== null) this.onSecretValue(value);
    return value;
  }

  /**
   * Stores the key for `origin` and deletes the provider's keys for any other origin.
   * Rejects KEYCHAIN_UNAVAILABLE (nothing is then stored anywhere else).
   */
  async set(providerId: string, origin: string, key: string): Promise<void> {
    // The redactor learns the value before it is written anywhere, even if the write fails.
    this.onSecretValue(key);
    await this.secrets.set(providerKeyName(providerId, origin), key);
    await this.removeExcept(providerId, origin);
  }

  /** Deletes every key of `providerId`; returns how many there were. */
  async removeAll(providerId: string): Promise<number> {
    return this.removeExcept(providerId, null);
  }

  /** Deletes the provider's keys for every origin but `keep`; returns how many were deleted. */
  async removeExcept(providerId: string, keep: string | null): Promise<number> {
    const names = await this.secrets.keys(`${PREFIX}${providerId}@`);
    let removed = 0;
    for (const name of names) {
      const parsed = parseProviderKeyName(name);
      if (!parsed || parsed.providerId !== providerId || parsed.origin === keep) continue;
      if (await this.secrets.delete(name)) removed += 1;
    }
    return removed;
  }

  /** Every `(providerId, origin)` that has a key, as `providerKeyName` strings (one keychain call). */
  async present(): Promise<Set<string>> {
    return new Set(await this.secrets.keys(PREFIX));
  }
}
