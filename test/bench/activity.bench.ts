/**
 * The Activity view's queries at a million operations (target < 50 ms each, median of 7): the
 * first page, each filter, a page deep in history, an operation by id and the "Why?" of one call,
 * and every combination of the view's equality filters (server, account, tool, decision, outcome,
 * conversation: 63 of them), once with values that match and once with values that each match
 * but never together, each through the handler the window calls (`activity:calls`,
 * `activity:history` on the real core), on a history written by the ledger's own writer
 * (activity-history.ts).
 *
 * `WARDEN_BENCH_ACTIVITY` sets the number of calls (default 1,000,000); writing them takes many
 * minutes here, so `WARDEN_BENCH_ACTIVITY_DIR` names a folder that is kept and reused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import { LedgerService } from '../../electron/core/ledger/service';
import type { CallCursor, CallFilter } from '../../shared/domain/activity';
import { ensureHistory, filterCombinations, START, STEP_MS } from './activity-history';
import { percentiles, type BenchModule } from './harness';

const COUNT = Number(process.env.WARDEN_BENCH_ACTIVITY ?? 1_000_000);
const ROUNDS = 7;
const median = (xs: number[]): number => percentiles(xs, [50])[0]!;

const bench: BenchModule = {
  title: `Activity queries at ${COUNT.toLocaleString('en')} operations (through activity:calls and activity:history)`,
  async run(report) {
    const kept = process.env.WARDEN_BENCH_ACTIVITY_DIR;
    const dir = kept ?? mkdtempSync(join(tmpdir(), 'warden-bench-activity-'));
    try {
      const wrote = await ensureHistory(dir, COUNT);
      if (wrote > 0) console.log(`  (wrote the history in ${(wrote / 1000).toFixed(0)} s)`);
      const service = await LedgerService.open({ dir, verifyInBackground: false });
      const core = createCore({ version: 'bench', ledger: service, connections: { reconnect: { maxAttempts: 0 } } });
      try {
        await core.recovered;
        const label = COUNT >= 1_000_000 ? `${COUNT / 1_000_000}M` : `${COUNT / 1000}k`;
        const calls = async (filter: CallFilter, after: CallCursor | null = null) => {
          const r = await dispatch(core.handlers, 'activity:calls', { filter, limit: 50, after });
          if (!r.ok) throw new Error(r.error.message);
          return r.value as { calls: unknown[]; next: CallCursor | null };
        };
        const middle = Math.floor(COUNT / 2);
        const someId = `call-${middle.toString(36)}`;
        // A cursor half-way down: the page a person reaches after paging far back.
        const deep: CallCursor = { time: START + middle * STEP_MS, n: Number.MAX_SAFE_INTEGER };
        const day = 24 * 3600 * 1000;
        const queries: Array<[string, () => Promise<unknown>]> = [
          ['first page (50 calls)', () => calls({})],
          ['a page half-way down history (keyset)', () => calls({}, deep)],
          ['filter by server', () => calls({ serverId: 'github-3c4d' })],
          ['filter by account', () => calls({ accountId: 'family-06' })],
          ['filter by tool', () => calls({ serverId: 'files-1a2b', toolName: 'move_file' })],
          ['filter by decision (deny, 5%)', () => calls({ decision: 'deny' })],
          ['filter by outcome (rejected, 5%)', () => calls({ outcome: 'rejected' })],
          ['filter by outcome (failed)', () => calls({ outcome: 'failed' })],
          ['filter by time (one day, months back)', () => calls({ from: START + middle * STEP_MS, to: START + middle * STEP_MS + day })],
          ['filter by tool and time together', () => calls({ toolName: 'delete_event', from: START + middle * STEP_MS, to: START + middle * STEP_MS + 7 * day })],
          ['operation by id', () => calls({ operationId: someId })],
          ['"Why?" of one call (activity:history)', () => dispatch(core.handlers, 'activity:history', { operationId: someId })],
        ];
        for (const c of filterCombinations(COUNT)) {
          queries.push([`${c.name}${c.matches ? '' : ' (no match)'}`, async () => {
            const page = await calls(c.filter);
            if (page.calls.length === 0 === c.matches) throw new Error(`${c.name}: expected ${c.matches ? 'matches' : 'no match'}, got ${page.calls.length}`);
            return page;
          }]);
        }
        for (const [name, fn] of queries) {
          await fn();
          const xs: number[] = [];
          for (let k = 0; k < ROUNDS; k++) {
            const t0 = performance.now();
            await fn();
            xs.push(performance.now() - t0);
          }
          const ms = median(xs);
          report({ name: `activity.query ${label}: ${name} (median of ${ROUNDS})`, value: ms, unit: 'ms', target: '< 50 ms', met: ms < 50 });
        }
      } finally {
        await core.close();
        await service.close().catch(() => undefined);
      }
    } finally {
      if (!kept) rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
