/**
 * The ledger's public surface, and the one call the app shell makes to get it.
 */
import { join } from 'node:path';
import type { SecretStore } from '../ports';
import { Redactor } from '../redact/redactor';
import { LedgerService, type LedgerServiceOptions } from './service';

export { Ledger, segmentName } from './ledger';
export { LedgerService } from './service';
export { IndexedHistory, MemoryHistory, type HistoryReads } from './history';
export { LedgerProjections } from './projections';
export { verifyLedger } from './verify';
export { LEDGER_ANCHOR_ENTRY, LEDGER_KEY_ENTRY } from './anchor';
export { auditToCsv, auditToJsonl } from './export';
export { Redactor, REDACTED } from '../redact/redactor';

/**
 * Opens the app's ledger in `<userDataDir>/ledger` with a fresh redactor, running log recovery.
 *
 * Why one call: the redactor must be the same object the keychain feeds (`onSecretValue`) and
 * the ledger scrubs with, and it must exist before the first secret is read. `keychain` holds the
 * ledger's key and anchor (the app passes the OS keychain: a store that does not announce values,
 * since the anchor changes as records are written). Usage in main:
 *   const { ledger, onSecretValue } = await openLedgerForApp(app.getPath('userData'), { keychain });
 *   const core = createCore({ ..., ledger, servers: { onSecretValue } });
 *   await core.recovered;
 * Benches pass `fs` (a slower disk) and `verifyInBackground: false` to measure calls on exactly
 * this ledger without the start's full verification running beside them.
 */
export async function openLedgerForApp(
  userDataDir: string,
  options: { cancelPendingOnRestart?: boolean; rotateBytes?: number; keychain?: SecretStore; anchorIntervalMs?: number } & Pick<LedgerServiceOptions, 'fs' | 'verifyInBackground'> = {},
): Promise<{ ledger: LedgerService; redactor: Redactor; onSecretValue: (value: string) => void }> {
  const redactor = new Redactor();
  const { keychain, anchorIntervalMs, ...rest } = options;
  const ledger = await LedgerService.open({
    dir: join(userDataDir, 'ledger'),
    redactor,
    ...rest,
    // The key and the anchor live in the keychain; the key's text is scrubbed like any secret.
    ...(keychain ? { keychain: { secrets: keychain, onSecretValue: (v: string) => redactor.register(v), ...(anchorIntervalMs !== undefined ? { anchorIntervalMs } : {}) } } : {}),
  });
  return { ledger, redactor, onSecretValue: (value) => redactor.register(value) };
}
