/**
 * Event-loop lag while tool calls are made durably (the core runs in Electron's main process,
 * which also runs every window's input and IPC).
 *
 * 64 concurrent calls through the gate and the durable ledger to server-everything's `echo` over
 * stdio, for `WARDEN_BENCH_LAG_MS` each: the event loop's delay p99 and max
 * (`monitorEventLoopDelay`), and the calls per second. Once on the real disk, once with every
 * sync taking 20 ms longer (injected through the ledger's file-system port, `slowSyncFs`): the
 * calls then wait for their sync, the loop must not. Target: p99 < 5 ms in both.
 *
 * Each run also reports the lateness the process's own work caused (own-delay.ts): the wall-clock
 * figure counts the time the kernel kept the main thread waiting for a core, which on the shared
 * bench machine is most of the run.
 *
 * The same workload through the gate onto the in-memory journal runs first, in the same run: it is
 * the lag of everything but the ledger (the connection, the SDK, the gate, and the bursts in which
 * 64 answers arriving in one read are handled), the floor the ledger's figures stand on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gate } from '../../electron/core/gate/gate';
import { MemoryHistory } from '../../electron/core/ledger/history';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock } from '../../electron/core/ports';
import { nodeLedgerFs, slowSyncFs, type LedgerFs } from '../../electron/core/ledger/ledger-fs';
import { LedgerService } from '../../electron/core/ledger/service';
import { ConnectionManager } from '../../electron/core/mcp/connection-manager';
import { endpointHash } from '../../electron/core/settings/identity';
import type { ServerDefinition } from '../../shared/domain/servers';
import { PolicyState } from '../../shared/domain/policy';
import type { BenchModule } from './harness';
import { sampleOwnDelay, type OwnDelay } from './own-delay';

const ROOT = resolve(import.meta.dirname, '../..');
const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const RUN_MS = Number(process.env.WARDEN_BENCH_LAG_MS ?? 5000);
const CONCURRENCY = 64;

export async function lagWith(dir: string, fs: LedgerFs | 'memory journal'): Promise<{ p99: number; max: number; callsPerSecond: number; fsyncs: number; own: OwnDelay | null }> {
  const def: ServerDefinition = { id: 'everything', name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
  const manager = new ConnectionManager({
    directory: { server: (id) => (id === def.id ? def : undefined), accountLabel: () => 'Default', endpointHash },
    secrets: { get: async () => null, set: async () => {}, delete: async () => false },
  });
  const service = fs === 'memory journal' ? null : await LedgerService.open({ dir, fs, verifyInBackground: false });
  const memory = new MemoryJournal(systemClock);
  const policy = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });
  const gate = new Gate({
    journal: service?.ledger ?? memory,
    history: service?.history ?? new MemoryHistory(() => memory.read()),
    executor: manager,
    registry: manager,
    policy: { current: () => policy },
    scheduleExpiry: false,
  });
  try {
    if ((await manager.connect('everything', 'default')).state !== 'connected') throw new Error('server-everything did not connect');
    const request = { source: 'user' as const, serverId: 'everything', accountId: 'default', toolName: 'echo', arguments: { message: 'lag' } };
    for (let i = 0; i < 50; i++) await gate.request(request); // warm-up
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    const fsyncsBefore = service?.ledger.stats.fsyncs ?? 0;
    let calls = 0;
    const until = performance.now() + RUN_MS;
    histogram.enable();
    const own = sampleOwnDelay();
    const worker = async (): Promise<void> => {
      while (performance.now() < until) {
        const op = await gate.request(request);
        if (op.state !== 'succeeded') throw new Error(`call ended ${op.state}: ${op.reason}`);
        calls++;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const elapsed = performance.now() - started;
    histogram.disable();
    return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, callsPerSecond: calls / (elapsed / 1000), fsyncs: (service?.ledger.stats.fsyncs ?? 0) - fsyncsBefore, own: own.stop() };
  } finally {
    gate.close();
    await manager.close();
    await service?.close();
  }
}

const bench: BenchModule = {
  title: `Event-loop lag with ${CONCURRENCY} concurrent durable stdio calls (${RUN_MS} ms per disk)`,
  async run(report) {
    const dir = mkdtempSync(join(tmpdir(), 'warden-bench-lag-'));
    try {
      for (const [label, fs] of [
        ['memory journal (no ledger; the floor)', 'memory journal'],
        ['real disk', nodeLedgerFs],
        ['every sync 20 ms slower', slowSyncFs(20)],
      ] as const) {
        const r = await lagWith(join(dir, label.replace(/\W+/g, '-')), fs);
        if (r.own) {
          // The same run's lateness without the time the kernel kept the main thread off the cores
          // (own-delay.ts): on a loaded machine the wall-clock figure above measures the machine.
          report({ name: `lag.event-loop delay p99 of the process's own work, ${label}`, value: r.own.p99, unit: 'ms', ...(fs === 'memory journal' ? {} : { target: '< 5 ms', met: r.own.p99 < 5 }) });
          report({ name: `lag.event-loop delay max of the process's own work, ${label}`, value: r.own.max, unit: 'ms' });
          report({ name: `lag.share of the run the main thread waited for a core, ${label}`, value: r.own.waitShare * 100, unit: '%' });
        }
        if (fs === 'memory journal') {
          report({ name: `lag.event-loop delay p99, ${label}`, value: r.p99, unit: 'ms' });
          report({ name: `lag.event-loop delay max, ${label}`, value: r.max, unit: 'ms' });
          report({ name: `lag.calls per second, ${label}`, value: r.callsPerSecond, unit: 'calls/s' });
          continue;
        }
        report({ name: `lag.event-loop delay p99, ${label}`, value: r.p99, unit: 'ms', target: '< 5 ms', met: r.p99 < 5 });
        report({ name: `lag.event-loop delay max, ${label}`, value: r.max, unit: 'ms' });
        report({ name: `lag.durable calls per second, ${label}`, value: r.callsPerSecond, unit: 'calls/s' });
        report({ name: `lag.syncs, ${label}`, value: r.fsyncs, unit: 'syncs' });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
