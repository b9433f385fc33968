/**
 * `npm run ledger:verify -- <dir> [--keychain-service <name>]`: checks a ledger folder's hash
 * chain and prints the first broken record, if any. Sealed records are checked with the ledger's
 * key from the OS keychain (Warden's entry; `--keychain-service` names another service, for a
 * second install or a test's own entries); without it the command says they could not be
 * checked, never that they are intact. Exit code 0 = chain intact, 1 = broken or not checkable,
 * 2 = usage error.
 */
import { LEDGER_KEY_ENTRY, readKeychain } from '../electron/core/ledger/anchor';
import { verifyLedger } from '../electron/core/ledger/verify';
import { KeytarSecretStore } from '../electron/core/secrets/keytar-secret-store';

const usage = 'usage: npm run ledger:verify -- <ledger dir> [--keychain-service <name>]';
const args = process.argv.slice(2);
const serviceAt = args.indexOf('--keychain-service');
const service = serviceAt === -1 ? undefined : args[serviceAt + 1];
const dir = args.find((a, i) => !a.startsWith('--') && (serviceAt === -1 || i !== serviceAt + 1));
if (!dir || (serviceAt !== -1 && !service)) {
  console.error(usage);
  process.exit(2);
}
try {
  // Short timeout: a missing keychain must not hold a command-line check for long.
  const found = await readKeychain({ secrets: new KeytarSecretStore({ timeoutMs: 5000, ...(service ? { service } : {}) }) });
  const key = found.key.state === 'found' ? found.key.key : null;
  if (found.key.state === 'unreadable') console.log(`(the ledger's key could not be read from the keychain: ${found.key.why})`);
  const result = await verifyLedger(dir, { key });
  const s = result.sealing;
  const sealing = s ? ` (${s.sealed} sealed with the key, ${s.plain} plain sha256 from before the ledger had a key${s.unverified ? `, ${s.unverified} sealed but not checked` : ''})` : '';
  if (result.ok) {
    console.log(`ledger OK: ${result.records} records in ${result.segments.length} segment(s) (${result.segments.join(', ') || 'none'})${sealing}`);
    process.exit(0);
  }
  const b = result.firstBroken!;
  if (b.problem === 'key' && b.detail) {
    console.log(`ledger NOT CHECKED: ${b.detail} (keychain entry ${LEDGER_KEY_ENTRY} of service Warden)`);
    process.exit(1);
  }
  console.log(`ledger BROKEN: first broken record in ${b.segment} at byte ${b.offset}${b.seq !== undefined ? ` (seq ${b.seq})` : ''}: ${b.problem}`);
  console.log(`  ${result.records} valid records before it`);
  console.log(`  record: ${JSON.stringify(b.excerpt)}`);
  process.exit(1);
} catch (error) {
  console.error(`ledger:verify: cannot read ${dir}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
