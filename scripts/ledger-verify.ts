/**
 * `npm run ledger:verify -- <dir> [--keychain-service <name>]`: checks a ledger folder's hash
 * chain and prints the first broken record, if any, with the key and the anchor the app reads
 * (the same keychain entries; `--keychain-service` names another service, for a second install
 * or a test's own entries). Sealed records are checked with the key, and the folder must still
 * hold both records the anchor names (`anchorMismatch`, the check the app's start makes): cut,
 * zeroed or deleted newest records, deleted oldest segments and an older copy put back are all
 * "BROKEN". Without the keychain the command says the ledger could not be checked, never that it
 * is intact. Exit code 0 = intact, 1 = broken or not checkable, 2 = usage error.
 */
import { LEDGER_ANCHOR_ENTRY, LEDGER_KEY_ENTRY, openAnchor, readKeychain, type Anchor } from '../electron/core/ledger/anchor';
import { verifyLedger } from '../electron/core/ledger/verify';
import { DEFAULT_SECRET_SERVICE, KeytarSecretStore } from '../electron/core/secrets/keytar-secret-store';

const usage = 'usage: npm run ledger:verify -- <ledger dir> [--keychain-service <name>]';
const args = process.argv.slice(2);
const serviceAt = args.indexOf('--keychain-service');
const service = serviceAt === -1 ? undefined : args[serviceAt + 1];
const dir = args.find((a, i) => !a.startsWith('--') && (serviceAt === -1 || i !== serviceAt + 1));
if (!dir || (serviceAt !== -1 && !service)) {
  console.error(usage);
  process.exit(2);
}
const entries = `keychain entries ${LEDGER_KEY_ENTRY} and ${LEDGER_ANCHOR_ENTRY} of service ${service ?? DEFAULT_SECRET_SERVICE}`;

/** Says why the ledger could not be checked and exits 1: never "OK" for what was not checked. */
function notChecked(why: string): never {
  console.log(`ledger NOT CHECKED: ${why} (${entries})`);
  process.exit(1);
}

try {
  // Short timeout: a missing keychain must not hold a command-line check for long.
  const found = await readKeychain({ secrets: new KeytarSecretStore({ timeoutMs: 5000, ...(service ? { service } : {}) }) });
  if (found.key.state === 'unreadable') {
    notChecked(`the ledger's key and anchor could not be read from the keychain, so neither changed records nor removed ones can be ruled out. ${found.key.why}`);
  }
  const key = found.key.state === 'found' ? found.key.key : null;
  if (!key && found.anchorText !== null) notChecked("the ledger's key is missing from the keychain although Warden anchored the ledger with it, so its records cannot be checked");
  let anchor: Anchor | null = null;
  if (key && found.anchorText !== null) {
    const opened = openAnchor(key, found.anchorText);
    if (typeof opened === 'string') notChecked(`${opened[0]!.toUpperCase()}${opened.slice(1)}, so removed records cannot be ruled out`);
    anchor = opened;
  }
  const result = await verifyLedger(dir, { key, anchor });
  const s = result.sealing;
  const sealing = s ? ` (${s.sealed} sealed with the key, ${s.plain} plain sha256 from before the ledger had a key${s.unverified ? `, ${s.unverified} sealed but not checked` : ''})` : '';
  if (result.ok && key && !anchor && (s?.sealed ?? 0) > 0) {
    console.log("ledger BROKEN: the ledger's anchor (its first and last record, kept in the keychain) is missing although its records are sealed: removed records cannot be ruled out");
    process.exit(1);
  }
  if (result.ok) {
    const ends = anchor
      ? anchor.first
        ? `; it holds record ${anchor.first.seq} and record ${anchor.seq}, the first and last the keychain's anchor names`
        : `; it holds record ${anchor.seq}, the last the keychain's anchor names (the first is anchored at Warden's next start)`
      : '; not anchored: the keychain holds no key for it (Warden never opened it with this keychain)';
    console.log(`ledger OK: ${result.records} records in ${result.segments.length} segment(s) (${result.segments.join(', ') || 'none'})${sealing}${ends}`);
    process.exit(0);
  }
  const b = result.firstBroken!;
  if (b.problem === 'key' && b.detail) notChecked(b.detail);
  if (b.problem === 'anchor' && b.detail) {
    console.log(`ledger BROKEN: ${b.detail}`);
    console.log(`  ${result.records} valid records in ${result.segments.join(', ') || 'no segment'}`);
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
