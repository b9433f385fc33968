/**
 * The ledger's public surface, and the one call the app shell makes to get it.
 */
import { join } from 'node:path';
import { Redactor } from '../redact/redactor';
import { LedgerService } from './service';

export { Ledger, segmentName } from './ledger';
export { LedgerService } from './service';
export { IndexedHistory, MemoryHistory, type HistoryReads } from './history';
export { LedgerProjections } from './projections';
export { verifyLedger } from './verify';
export { auditToCsv, auditToJsonl } from './export';
export { Redactor, REDACTED } from '../redact/redactor';

/**
 * Opens the app's ledger in `<userDataDir>/ledger` with a fresh redactor, running log recovery.
 *
 * Why one call: the redactor must be the same object the keychain feeds (`onSecretValue`) and
 * the ledger scrubs with, and it must exist before the first secret is read. Usage in main:
 *   const { ledger, onSecretValue } = await openLedgerForApp(app.getPath('userData'));
 *   const core = createCore({ ..., ledger, servers: { onSecretValue } });
 *   await core.recovered;
 */
export async function openLedgerForApp(
  userDataDir: string,
  options: { cancelPendingOnRestart?: boolean; rotateBytes?: number } = {},
): Promise<{ ledger: LedgerService; redactor: Redactor; onSecretValue: (value: string) => void }> {
  const redactor = new Redactor();
  const ledger = await LedgerService.open({ dir: join(userDataDir, 'ledger'), redactor, ...options });
  return { ledger, redactor, onSecretValue: (value) => redactor.register(value) };
}
