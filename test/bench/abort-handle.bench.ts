/**
 * The gate's abort handle on real stdio calls: the same `tools/call` (server-everything `echo`)
 * through the connection layer, once with a Node AbortController's signal and once with a
 * `CallAbort`, the handle the gate makes for every call. Decision 0011 keeps `CallAbort` only
 * while it is worth more than 2% of a real call; this is the measurement that says whether it is.
 *
 * Both variants use one connection, so one server process: two server processes differ by more
 * than the effect measured here. They alternate in blocks, the order swapped every round, and
 * both the median call and the mean call are reported (the mean carries the garbage collection
 * the extra allocations cause, which a median skips).
 */
import { resolve } from 'node:path';
import { CallAbort } from '../../electron/core/gate/call-abort';
import { ConnectionManager } from '../../electron/core/mcp/connection-manager';
import { endpointHash } from '../../electron/core/settings/identity';
import type { ServerDefinition } from '../../shared/domain/servers';
import { percentiles, type BenchModule } from './harness';

const ROOT = resolve(import.meta.dirname, '../..');
const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 40);
const PER_ROUND = Number(process.env.WARDEN_BENCH_CALLS ?? 150);

const bench: BenchModule = {
  title: "The gate's abort handle on a real stdio call: Node's AbortController vs CallAbort",
  async run(report) {
    const def: ServerDefinition = { id: 'everything', name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
    const manager = new ConnectionManager({
      directory: { server: (id) => (id === def.id ? def : undefined), accountLabel: () => 'Default', endpointHash },
      secrets: { get: async () => null, set: async () => {}, delete: async () => false },
    });
    try {
      if ((await manager.connect('everything', 'default')).state !== 'connected') throw new Error('server-everything did not connect');
      const target = { serverId: 'everything', accountId: 'default', toolName: 'echo' };
      const variants: Record<'node' | 'callAbort', () => Promise<unknown>> = {
        node: () => manager.call(target, { message: 'bench' }, { signal: new AbortController().signal, operationId: 'bench' }),
        callAbort: () => manager.call(target, { message: 'bench' }, { signal: new CallAbort().signal, operationId: 'bench' }),
      };
      const names = ['node', 'callAbort'] as const;
      for (const n of names) for (let i = 0; i < 300; i++) await variants[n](); // warm-up (JIT, caches)
      const samples = { node: [] as number[], callAbort: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const n of round % 2 ? names : [...names].reverse()) {
          for (let i = 0; i < PER_ROUND; i++) {
            const t0 = performance.now();
            await variants[n]();
            samples[n].push((performance.now() - t0) * 1000);
          }
        }
      }
      const median = (xs: number[]) => percentiles(xs, [50])[0]!;
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      report({ name: 'abort-handle.call with CallAbort (median)', value: median(samples.callAbort), unit: 'µs' });
      report({ name: 'abort-handle.call with AbortController (median)', value: median(samples.node), unit: 'µs', baseline: 'abort-handle.call with CallAbort (median)', ratio: median(samples.node) / median(samples.callAbort) });
      report({ name: 'abort-handle.call with CallAbort (mean)', value: mean(samples.callAbort), unit: 'µs' });
      report({ name: 'abort-handle.call with AbortController (mean)', value: mean(samples.node), unit: 'µs', baseline: 'abort-handle.call with CallAbort (mean)', ratio: mean(samples.node) / mean(samples.callAbort) });
    } finally {
      await manager.close();
    }
  },
};
export default bench;
