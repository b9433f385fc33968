/**
 * The process the anchor kill test kills: Warden's ledger opened as the app opens it (with the
 * keychain holding its key and anchor), appending durably in a loop while the anchor follows every
 * few milliseconds. Prints `acked <seq>` after each durable append.
 *
 * Env: WARDEN_USER_DATA, WARDEN_KEYCHAIN_SERVICE.
 */
import { openLedgerForApp } from '../../../electron/core/ledger';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';

const userData = process.env.WARDEN_USER_DATA;
const service = process.env.WARDEN_KEYCHAIN_SERVICE;
if (!userData || !service) throw new Error('anchor-child: WARDEN_USER_DATA and WARDEN_KEYCHAIN_SERVICE are required');

const { ledger } = await openLedgerForApp(userData, { keychain: new KeytarSecretStore({ service }), anchorIntervalMs: 2, rotateBytes: 16 * 1024 });
if (ledger.ledger.safeMode) throw new Error(`anchor-child: opened in safe mode: ${JSON.stringify(ledger.ledger.recovery.breaks)}`);
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const records = await ledger.ledger.append([{ type: 'op.transition', payload: { i, pad: 'x'.repeat(i % 700) } }], { durable: true });
  process.stdout.write(`acked ${records.at(-1)!.seq}\n`);
}
