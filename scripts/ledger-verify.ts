/**
 * `npm run ledger:verify -- <dir>`: checks a ledger folder's hash chain and prints the first
 * broken record, if any. Exit code 0 = chain intact, 1 = broken, 2 = usage error.
 */
import { verifyLedger } from '../electron/core/ledger/verify';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: npm run ledger:verify -- <ledger dir>');
  process.exit(2);
}
try {
  const result = await verifyLedger(dir);
  if (result.ok) {
    console.log(`ledger OK: ${result.records} records in ${result.segments.length} segment(s) (${result.segments.join(', ') || 'none'})`);
    process.exit(0);
  }
  const b = result.firstBroken!;
  console.log(`ledger BROKEN: first broken record in ${b.segment} at byte ${b.offset}${b.seq !== undefined ? ` (seq ${b.seq})` : ''}: ${b.problem}`);
  console.log(`  ${result.records} valid records before it`);
  console.log(`  record: ${JSON.stringify(b.excerpt)}`);
  process.exit(1);
} catch (error) {
  console.error(`ledger:verify: cannot read ${dir}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
