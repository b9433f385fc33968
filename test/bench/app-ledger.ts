/**
 * The ledger as the app opens it, for benches: `openLedgerForApp` (the redactor, records sealed
 * with the ledger's key, the anchor kept in the keychain). Run inside `scripts/with-keyring.sh`
 * the keychain is the real one (libsecret → gnome-keyring, as on a person's desktop); outside a
 * D-Bus session a store in memory stands in for it, and each bench's result names which it was.
 */
import { randomUUID } from 'node:crypto';
import { openLedgerForApp } from '../../electron/core/ledger';
import type { LedgerService } from '../../electron/core/ledger/service';
import type { LedgerFs } from '../../electron/core/ledger/ledger-fs';
import type { SecretStore } from '../../electron/core/ports';
import { KeytarSecretStore } from '../../electron/core/secrets/keytar-secret-store';

/** A keychain for one bench: the real one inside a D-Bus session, else one in memory. */
export interface BenchKeychain {
  store: SecretStore;
  /** 'real keychain' or 'keychain stand-in' (for result names). */
  label: string;
  /** Removes what the bench left in the keychain. */
  cleanup(): Promise<void>;
}

/**
 * A keychain for one ledger (see the file comment). One per ledger: the anchor in it names that
 * ledger, and a second ledger opened under it is (rightly) refused as a rolled-back one.
 */
export function benchKeychain(): BenchKeychain {
  if (process.env.DBUS_SESSION_BUS_ADDRESS) {
    const store = new KeytarSecretStore({ service: `Warden-bench-${process.pid}-${randomUUID().slice(0, 8)}` });
    return {
      store,
      label: 'real keychain',
      cleanup: async () => {
        for (const k of await store.keys('')) await store.delete(k);
      },
    };
  }
  const m = new Map<string, string>();
  const store: SecretStore = { get: async (k) => m.get(k) ?? null, set: async (k, v) => void m.set(k, v), delete: async (k) => m.delete(k) };
  return { store, label: 'keychain stand-in', cleanup: async () => m.clear() };
}

/**
 * The app's ledger under `userDataDir`, sealed with `keychain`. The background verification the
 * app starts at open is left off when `verify` is false (a bench measuring calls, not start).
 */
export async function appLedger(userDataDir: string, keychain: BenchKeychain, options: { fs?: LedgerFs; verify?: boolean } = {}): Promise<LedgerService> {
  const { ledger } = await openLedgerForApp(userDataDir, { keychain: keychain.store, verifyInBackground: options.verify ?? false, ...(options.fs ? { fs: options.fs } : {}) });
  if (ledger.ledger.keyId === null || ledger.ledger.safeMode) throw new Error('the bench ledger did not get its key from the keychain');
  return ledger;
}
