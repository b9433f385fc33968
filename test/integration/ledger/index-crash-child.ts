/**
 * Child of index-crash.test.ts: opens the ledger service on `LEDGER_DIR`, waits until the index is
 * up to date with the segments (open reads only the end of a log longer than that, and the index
 * catches up after it), says so, and closes. The parent kills it while the index is being written.
 *
 * With `CATCH_UP=1` the ledger has many segments, so the index catches up in the background after
 * open: the child appends calls all the while (as a person using the app would), prints its
 * progress (`indexing N%`), and says `open` once the index is current.
 */
import { LedgerService } from '../../../electron/core/ledger/service';

const service = await LedgerService.open({ dir: process.env.LEDGER_DIR!, verifyInBackground: false });
if (process.env.CATCH_UP === '1') {
  const shapes = JSON.parse(process.env.CALL_SHAPES!) as Array<{ type: string; payload: Record<string, unknown> }>;
  service.onIndexing(() => process.stdout.write(`indexing ${service.indexing ?? 100}%\n`));
  let live = true;
  const appending = (async () => {
    for (let i = 0; live; i++) {
      await service.ledger.append(shapes.map((s) => ({ type: s.type, payload: { ...s.payload, operationId: `live-${process.pid}-${i}` } })), { durable: i % 3 !== 0 });
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  await service.whenIndexed();
  live = false;
  await appending;
}
await service.whenIndexed();
process.stdout.write('open\n');
await service.close();
