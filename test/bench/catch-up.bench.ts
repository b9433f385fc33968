/**
 * Start without a current index (deleted, damaged, or of an older schema version, which every
 * index is once after an upgrade that changes it): how long start takes, and what the index's
 * background catch-up costs the event loop while it runs.
 *
 * The history is the Activity bench's (activity-history.ts): `WARDEN_BENCH_CATCHUP` calls
 * (default 100000), written once to a kept folder under the temp folder, or the folder
 * `WARDEN_BENCH_ACTIVITY_DIR` names (a million calls, 3.7 GB, kept between runs). Each run works
 * on a copy without the index: earlier segments hard-linked (only read), the last one copied (it
 * is appended to), so the kept folder is never changed.
 *
 * - start: open + crash recovery, what the app awaits before it serves the window (target < 1 s);
 * - the catch-up: how long until the index is current, and the event loop's delay meanwhile
 *   (`monitorEventLoopDelay`, p99 and max; target: p99 < 5 ms), beside the delay a process doing
 *   nothing but 0.5 ms slices sees on the machine in the same run (its floor when loaded);
 * - the next start, with the index current again.
 */
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LedgerService } from '../../electron/core/ledger/service';
import { segmentNumbers, segmentName } from '../../electron/core/ledger/segments';
import { ensureHistory } from './activity-history';
import type { BenchModule } from './harness';

const COUNT = Number(process.env.WARDEN_BENCH_CATCHUP ?? 100_000);

/**
 * The event-loop delay of a process that does nothing but 0.5 ms of work between turns, for
 * `ms`: on a machine shared by many busy processes the scheduler preempts any busy process for
 * tens of ms, so this floor is what a catch-up's delay is compared with (an idle process is woken
 * promptly and sees far less).
 */
async function busyFloor(ms: number): Promise<{ p99: number; max: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t = performance.now();
    while (performance.now() - t < 0.5) {
      // work
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  h.disable();
  return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
}

/** A copy of the ledger in `from` without its index (earlier segments linked, the last copied). */
function copyWithoutIndex(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  const numbers = segmentNumbers(readdirSync(from));
  for (const n of numbers) {
    const name = segmentName(n);
    if (n === numbers.at(-1)) copyFileSync(join(from, name), join(to, name));
    else linkSync(join(from, name), join(to, name));
  }
}

const bench: BenchModule = {
  title: 'Start without a current index, and the index catching up in the background',
  async run(report) {
    const kept = process.env.WARDEN_BENCH_ACTIVITY_DIR;
    const source = kept ?? join(tmpdir(), `warden-bench-catchup-${COUNT}`);
    if (!existsSync(source)) mkdirSync(source, { recursive: true });
    if (!kept) await ensureHistory(source, COUNT);
    const label = kept ? 'the kept history' : `${COUNT / 1000}k calls`;
    const work = join(tmpdir(), `warden-bench-catchup-work-${process.pid}`);
    try {
      copyWithoutIndex(source, work);
      const lag = monitorEventLoopDelay({ resolution: 1 });
      const t0 = performance.now();
      const service = await LedgerService.open({ dir: work, verifyInBackground: false });
      await service.recoverOperations();
      const startMs = performance.now() - t0;
      report({ name: `catch-up.start without an index, ${label} (open + recovery)`, value: startMs, unit: 'ms', target: '< 1000 ms', met: startMs < 1000 });
      lag.enable();
      const t1 = performance.now();
      // (A core without the catch-up has nothing left to wait for here.)
      await (service as Partial<Pick<LedgerService, 'whenIndexed'>>).whenIndexed?.();
      await service.history.operationCount();
      const catchUpMs = performance.now() - t1;
      lag.disable();
      const p99 = lag.percentile(99) / 1e6;
      const max = lag.max / 1e6;
      report({ name: `catch-up.index caught up in the background, ${label}`, value: catchUpMs / 1000, unit: 's' });
      const floor = await busyFloor(10_000);
      report({ name: 'catch-up.event-loop delay p99 of a process doing only 0.5 ms slices (the machine\'s floor)', value: floor.p99, unit: 'ms' });
      report({ name: 'catch-up.event-loop delay max of a process doing only 0.5 ms slices (the machine\'s floor)', value: floor.max, unit: 'ms' });
      report({
        name: `catch-up.event-loop delay p99 while catching up, ${label}`,
        value: p99,
        unit: 'ms',
        baseline: "catch-up.event-loop delay p99 of a process doing only 0.5 ms slices (the machine's floor)",
        ratio: p99 / floor.p99,
        target: '< 5 ms, or at the floor on a loaded machine (ratio ≤ 1.2)',
        met: p99 < 5 || p99 / floor.p99 <= 1.2,
      });
      report({ name: `catch-up.event-loop delay max while catching up, ${label}`, value: max, unit: 'ms', baseline: "catch-up.event-loop delay max of a process doing only 0.5 ms slices (the machine's floor)", ratio: max / floor.max });
      await service.close();
      const t2 = performance.now();
      const again = await LedgerService.open({ dir: work, verifyInBackground: false });
      await again.recoverOperations();
      await again.history.recordedOperations({ limit: 200 });
      report({ name: `catch-up.next start with the index current, ${label} (open + recovery + first page)`, value: performance.now() - t2, unit: 'ms', target: '< 1000 ms', met: performance.now() - t2 < 1000 });
      await again.close();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};
export default bench;
