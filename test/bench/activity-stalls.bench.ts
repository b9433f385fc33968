/**
 * How long the main thread is held while the ledger is verified in full and while Activity is
 * exported, at `WARDEN_BENCH_ACTIVITY` calls (default 100,000): the event-loop lateness the
 * process's own work caused (own-delay.ts), p99 and max, target p99 < 5 ms; the same sampler on
 * the idle process first, in the same run, is the machine's floor.
 *
 * Verification is the background one a start runs (`LedgerService.verify`, every record's seal
 * and the whole chain); the export is `activity:export-calls` on the real core (every call, CSV),
 * to a file a stub save dialog names (the one stubbed part: a native dialog cannot open here).
 * The history is written by the ledger's own writer (activity-history.ts); `WARDEN_BENCH_ACTIVITY_DIR`
 * keeps it between runs.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import { LedgerService } from '../../electron/core/ledger/service';
import { ensureHistory } from './activity-history';
import type { BenchModule } from './harness';
import { sampleOwnDelay } from './own-delay';

const COUNT = Number(process.env.WARDEN_BENCH_ACTIVITY ?? 100_000);
const FLOOR_MS = 3000;

const bench: BenchModule = {
  title: `Main-thread stalls while verifying and exporting ${COUNT.toLocaleString('en')} calls (LedgerService.verify, activity:export-calls on the real core)`,
  async run(report) {
    const kept = process.env.WARDEN_BENCH_ACTIVITY_DIR;
    const dir = kept ?? mkdtempSync(join(tmpdir(), 'warden-bench-stalls-'));
    const out = mkdtempSync(join(tmpdir(), 'warden-bench-stalls-out-'));
    const label = COUNT >= 1_000_000 ? `${COUNT / 1_000_000}M` : `${COUNT / 1000}k`;
    try {
      await ensureHistory(dir, COUNT);
      const service = await LedgerService.open({ dir, verifyInBackground: false });
      const file = join(out, 'activity.csv');
      const core = createCore({ version: 'bench', ledger: service, connections: { reconnect: { maxAttempts: 0 } }, fileDialogs: { openFile: async () => null, saveFile: async () => file } });
      try {
        await core.recovered;
        // Whatever the index had to catch up on is done before anything is measured.
        await service.history.operationCount();
        const idle = sampleOwnDelay();
        await new Promise((resolve) => setTimeout(resolve, FLOOR_MS));
        const floor = idle.stop();
        if (floor) {
          report({ name: `stalls.own delay p99, idle process (the floor)`, value: floor.p99, unit: 'ms' });
          report({ name: `stalls.own delay max, idle process (the floor)`, value: floor.max, unit: 'ms' });
        }

        const verifying = sampleOwnDelay();
        const v0 = performance.now();
        const verified = await service.verify();
        const verifyMs = performance.now() - v0;
        const v = verifying.stop();
        if (verified.breaks !== 0) throw new Error(`the bench history has ${verified.breaks} breaks`);
        report({ name: `stalls.full verification ${label}: time`, value: verifyMs / 1000, unit: 's' });
        if (v) {
          report({ name: `stalls.full verification ${label}: own delay p99`, value: v.p99, unit: 'ms', target: '< 5 ms', met: v.p99 < 5 });
          report({ name: `stalls.full verification ${label}: own delay max`, value: v.max, unit: 'ms' });
        }

        const exporting = sampleOwnDelay();
        const e0 = performance.now();
        const r = await dispatch(core.handlers, 'activity:export-calls', { format: 'csv', filter: {} });
        const exportMs = performance.now() - e0;
        const e = exporting.stop();
        if (!r.ok) throw new Error(r.error.message);
        const rows = (r.value as { rows: number }).rows;
        if (rows !== COUNT) throw new Error(`exported ${rows} of ${COUNT} calls`);
        report({ name: `stalls.export of every call ${label} (CSV, ${(statSync(file).size / 1e6).toFixed(0)} MB): time`, value: exportMs / 1000, unit: 's' });
        report({ name: `stalls.export of every call ${label}: calls per second`, value: rows / (exportMs / 1000), unit: 'calls/s' });
        if (e) {
          report({ name: `stalls.export of every call ${label}: own delay p99`, value: e.p99, unit: 'ms', target: '< 5 ms', met: e.p99 < 5 });
          report({ name: `stalls.export of every call ${label}: own delay max`, value: e.max, unit: 'ms' });
        }
      } finally {
        await core.close();
        await service.close().catch(() => undefined);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
      if (!kept) rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
