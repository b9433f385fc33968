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
 * - the next start, with the index current again;
 * - a decision during the catch-up: calls through the real gate, on the ledger being caught up,
 *   with an operation id the gate made (as the chat asks) and without one (as the Run form asks),
 *   alternating, each timed from submit to its outcome (target: < 100 ms, the same as the Run
 *   form). The executor is an in-process stand-in that answers at once: this measures what the
 *   gate waits for, not a server;
 * - the catch-up's own share of the event-loop delay (`own-delay.ts`: only time its thread ran);
 * - a start without an index on a history of one segment (7,000 calls), which used to rebuild
 *   the index inside open.
 */
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { contractHash, endpointHash } from '../../electron/core/canonical';
import { Gate } from '../../electron/core/gate/gate';
import type { ToolDescriptor } from '../../electron/core/gate/ports';
import { LedgerService } from '../../electron/core/ledger/service';
import { PolicyState } from '../../shared/domain/policy';
import { percentiles } from './harness';
import { sampleOwnDelay } from './own-delay';
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

const TOOL: ToolDescriptor = {
  serverId: 'bench',
  accountId: 'work',
  name: 'perform',
  description: 'answers at once',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  contractHash: contractHash({ name: 'perform', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } }),
  endpointHash: endpointHash({ kind: 'stdio', command: 'node', args: ['bench'] }),
};

/** The real gate on `service`, allowing TOOL, with an executor that answers at once. */
function benchGate(service: LedgerService): Gate {
  const policy = PolicyState.parse({ user: [{ id: 'allow', scope: { kind: 'global' }, mode: 'allow' }] });
  return new Gate({
    journal: service.ledger,
    history: service.history,
    executor: { call: async () => ({ content: [{ type: 'text', text: 'done' }] }) },
    registry: { getTool: (s, a, n) => (s === TOOL.serverId && a === TOOL.accountId && n === TOOL.name ? TOOL : undefined), listTools: () => [TOOL] },
    policy: { current: () => policy },
    scheduleExpiry: false,
  });
}

/** Decisions made while the catch-up runs: ms from submit to outcome, with a made id and without. */
async function decideDuringCatchUp(service: LedgerService, gate: Gate): Promise<{ minted: number[]; plain: number[] }> {
  const minted: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < 40 && service.indexing !== null; i++) {
    const t = performance.now();
    const op = await gate.request({ source: 'model', serverId: TOOL.serverId, accountId: TOOL.accountId, toolName: TOOL.name, arguments: { n: i }, ...(i % 2 === 0 ? { operationId: gate.newOperationId() } : {}) });
    if (op.state !== 'succeeded') throw new Error(`bench call ${i} ended ${op.state}: ${op.reason}`);
    (i % 2 === 0 ? minted : plain).push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { minted, plain };
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
      const own = sampleOwnDelay();
      const t1 = performance.now();
      const gate = benchGate(service);
      const decisions = decideDuringCatchUp(service, gate);
      await service.whenIndexed();
      await service.history.operationCount();
      const catchUpMs = performance.now() - t1;
      const ownDelay = own.stop();
      lag.disable();
      const { minted, plain } = await decisions;
      gate.close();
      const [mintedP50, mintedMax] = [percentiles(minted, [50])[0] ?? NaN, Math.max(...minted)];
      const [plainP50] = percentiles(plain, [50]);
      report({ name: `catch-up.decision during the catch-up, chat-style (id made by the gate), median of ${minted.length}, ${label}`, value: mintedP50, unit: 'ms', baseline: 'catch-up.decision during the catch-up, Run-form-style (no id), median', ratio: mintedP50 / (plainP50 ?? NaN), target: '< 100 ms', met: mintedMax < 100 });
      report({ name: `catch-up.decision during the catch-up, chat-style (id made by the gate), max of ${minted.length}, ${label}`, value: mintedMax, unit: 'ms', target: '< 100 ms', met: mintedMax < 100 });
      report({ name: 'catch-up.decision during the catch-up, Run-form-style (no id), median', value: plainP50 ?? NaN, unit: 'ms' });
      if (ownDelay) {
        report({ name: `catch-up.event-loop delay p99 the catch-up itself caused (time its thread ran), ${label}`, value: ownDelay.p99, unit: 'ms', target: '< 5 ms', met: ownDelay.p99 < 5 });
        report({ name: `catch-up.share of the catch-up the main thread waited for a core, ${label}`, value: 100 * ownDelay.waitShare, unit: '%' });
      }
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
      await oneSegmentStart(report, join(tmpdir(), `warden-bench-catchup-one-${process.pid}`), floor.max);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};
/**
 * A start without an index on a history of one segment: open + recovery, the longest event-loop
 * delay during it, and how long the background catch-up takes after it.
 */
async function oneSegmentStart(report: Parameters<BenchModule['run']>[0], dir: string, floorMax: number): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  try {
    mkdirSync(dir, { recursive: true });
    await ensureHistory(dir, 7_000);
    for (const name of readdirSync(dir)) if (name.startsWith('index.sqlite')) rmSync(join(dir, name));
    if (segmentNumbers(readdirSync(dir)).length !== 1) throw new Error('the one-segment history has more than one segment');
    const lag = monitorEventLoopDelay({ resolution: 1 });
    lag.enable();
    const t0 = performance.now();
    const service = await LedgerService.open({ dir, verifyInBackground: false });
    await service.recoverOperations();
    const startMs = performance.now() - t0;
    lag.disable();
    report({ name: 'catch-up.start without an index, one segment of 7k calls (open + recovery)', value: startMs, unit: 'ms', target: '< 500 ms', met: startMs < 500 });
    const longest = lag.max / 1e6;
    report({ name: 'catch-up.longest event-loop delay during that start', value: longest, unit: 'ms', baseline: "catch-up.event-loop delay max of a process doing only 0.5 ms slices (the machine's floor)", ratio: longest / floorMax, target: '< 50 ms, or at the floor\'s max on a loaded machine (ratio ≤ 1.2)', met: longest < 50 || longest / floorMax <= 1.2 });
    const t1 = performance.now();
    await service.whenIndexed();
    report({ name: 'catch-up.index caught up in the background after it, one segment of 7k calls', value: performance.now() - t1, unit: 'ms' });
    await service.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export default bench;
