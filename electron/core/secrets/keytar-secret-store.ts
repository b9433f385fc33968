/**
 * The SecretStore port over keytar (macOS Keychain, Windows Credential Vault, libsecret on Linux).
 *
 * Never a plaintext fallback: if the OS keychain cannot be reached (keytar fails to load, no
 * D-Bus session, no Secret Service, a locked or hanging keyring), every operation rejects with
 * WardenError('KEYCHAIN_UNAVAILABLE', why) and nothing is written anywhere else.
 *
 * Every secret value read or written is announced through `onSecretValue`, so the ledger's
 * redactor learns it before the value can reach any payload. A value that is a
 * JSON document of OAuth material is announced field by field too (its tokens and client
 * secret), since a server echoes a bare token, never the document it was stored in.
 */
import { createHash } from 'node:crypto';
import { WardenError } from '../../../shared/result';
import type { SecretStore } from '../ports';

/** The part of keytar this store uses (injected for the unavailable-keychain path only). */
export interface KeytarLike {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
  findCredentials(service: string): Promise<Array<{ account: string; password: string }>>;
}

/** A SecretStore that can also enumerate its keys (to delete every secret of a server or account). */
export interface ListableSecretStore extends SecretStore {
  /** Keys (not values) starting with `prefix`. */
  keys(prefix: string): Promise<string[]>;
}

/** Options of the keytar store: service name, redactor hook, per-call timeout, loader. */
export interface KeytarSecretStoreOptions {
  /** Keychain service name; one per app so entries are easy to find and never collide. */
  service?: string;
  /** Called once with every distinct secret value read or written (feed the ledger redactor: `(v) => redactor.register(v)`). */
  onSecretValue?: (value: string) => void;
  /** How long one keychain call may take before it counts as unavailable (a hung D-Bus call). */
  timeoutMs?: number;
  /** Loads keytar; defaults to importing the native module. */
  load?: () => Promise<KeytarLike>;
}

/** The keychain service name Warden's entries are stored under. */
export const DEFAULT_SECRET_SERVICE = 'Warden';

const MAX_SECRET_BYTES = 16 * 1024;

async function loadKeytar(): Promise<KeytarLike> {
  const mod = (await import('keytar')) as unknown as { default?: KeytarLike } & KeytarLike;
  return mod.default ?? mod;
}

/** The OS keychain through keytar; KEYCHAIN_UNAVAILABLE instead of any fallback. */
export class KeytarSecretStore implements ListableSecretStore {
  private readonly service: string;
  private readonly timeoutMs: number;
  private readonly announce: (value: string) => void;
  private keytar: Promise<KeytarLike> | undefined;

  constructor(private readonly options: KeytarSecretStoreOptions = {}) {
    this.service = options.service ?? DEFAULT_SECRET_SERVICE;
    this.timeoutMs = options.timeoutMs ?? 20_000;
    const hook = options.onSecretValue;
    // Each distinct value is announced once: the redactor reference-counts registrations, and a
    // value read on every connect must not be counted again each time. Only hashes are kept here.
    const seen = new Set<string>();
    const once = (value: string) => {
      const digest = createHash('sha256').update(value, 'utf8').digest('hex');
      if (seen.has(digest)) return;
      seen.add(digest);
      hook!(value);
    };
    this.announce = hook
      ? (value) => {
          once(value);
          // OAuth material is stored as JSON; a server echoes the bare token, not the document.
          for (const field of credentialFields(value)) once(field);
        }
      : () => {};
  }

  /** Reads one secret; null when none is stored under `key`. */
  async get(key: string): Promise<string | null> {
    checkKey(key);
    const value = await this.call('read', (k) => k.getPassword(this.service, key));
    if (value !== null) this.announce(value);
    return value;
  }

  /**
   * Stores one secret. Rejects with KEYCHAIN_UNAVAILABLE when the keychain cannot take it; there
   * is no other place a secret is ever written.
   */
  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    if (typeof value !== 'string' || value.length === 0) throw new WardenError('VALIDATION_FAILED', 'value: a secret must be a non-empty string');
    if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_BYTES) {
      throw new WardenError('VALIDATION_FAILED', `value: a secret must be at most ${MAX_SECRET_BYTES} bytes`);
    }
    // Announce first: even if the write fails, the redactor must already know this value.
    this.announce(value);
    await this.call('store', (k) => k.setPassword(this.service, key, value));
  }

  /** Deletes one secret; false when there was none. */
  async delete(key: string): Promise<boolean> {
    checkKey(key);
    return this.call('delete', (k) => k.deletePassword(this.service, key));
  }

  /** Keys under this service starting with `prefix`. Values seen while listing are announced too. */
  async keys(prefix: string): Promise<string[]> {
    const creds = await this.call('list', (k) => k.findCredentials(this.service));
    const out: string[] = [];
    for (const c of creds) {
      if (!c.account.startsWith(prefix)) continue;
      this.announce(c.password);
      out.push(c.account);
    }
    return out.sort();
  }

  /**
   * Announces every stored value of this service to `onSecretValue`.
   *
   * Call once at start-up so the redactor knows secrets stored in earlier runs before anything
   * (a server's stderr, an error message) could echo them into the ledger.
   */
  async announceAll(): Promise<number> {
    return (await this.keys('')).length;
  }

  private async call<T>(what: string, op: (k: KeytarLike) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      this.keytar ??= (this.options.load ?? loadKeytar)().catch((error: unknown) => {
        this.keytar = undefined; // a later call may find the keychain back
        throw error;
      });
      const keytar = await this.keytar;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      });
      return await Promise.race([op(keytar), timeout]);
    } catch (error) {
      if (error instanceof WardenError) throw error;
      const why = error instanceof Error ? error.message : String(error);
      throw new WardenError(
        'KEYCHAIN_UNAVAILABLE',
        `The OS keychain is unavailable, so Warden could not ${what} the secret (${why}). ` +
          'Warden never stores secrets anywhere else; unlock or start your keychain (on Linux: a Secret Service such as gnome-keyring in a D-Bus session) and try again.',
      );
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
}

/** Fields of a stored JSON document that are credentials on their own (OAuth tokens, client secret). */
const CREDENTIAL_FIELDS = ['access_token', 'refresh_token', 'id_token', 'client_secret'] as const;

/** The credential strings inside `value` when it is a JSON object that holds any; else none. */
function credentialFields(value: string): string[] {
  if (!value.startsWith('{')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object') return [];
  const doc = parsed as Record<string, unknown>;
  return CREDENTIAL_FIELDS.map((f) => doc[f]).filter((v): v is string => typeof v === 'string' && v.length > 0);
}

function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 1000) {
    throw new WardenError('VALIDATION_FAILED', 'key: expected a non-empty secret key of at most 1000 characters');
  }
}
