/**
 * Child of index-crash.test.ts: opens the ledger service on `LEDGER_DIR` (which brings the index
 * up to date with the segments), says so, and closes. The parent kills it while the index is
 * being written.
 */
import { LedgerService } from '../../../electron/core/ledger/service';

const service = await LedgerService.open({ dir: process.env.LEDGER_DIR!, verifyInBackground: false });
process.stdout.write('open\n');
await service.close();
