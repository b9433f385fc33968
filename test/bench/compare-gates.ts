/**
 * Compares the gate of two checkouts on real stdio calls, the way decision 0011 was measured:
 * both gates (each with its own in-memory journal) send through ONE connection to one
 * server-everything process, so no difference between two server processes enters the ratio;
 * they alternate in blocks, in rotating order, with the connection layer alone as a third column.
 *
 *   git worktree add ../before <commit> && (cd ../before && npm ci)
 *   npx tsx test/bench/compare-gates.ts ../before
 *
 * Prints the median over rounds of (this checkout's block time / the other's): above 1 means this
 * checkout's gate is slower. Not part of `npm run bench`: it needs a second checkout.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConnectionManager } from '../../electron/core/mcp/connection-manager';
import { endpointHash } from '../../electron/core/settings/identity';
import type { ServerDefinition } from '../../shared/domain/servers';
import { percentiles } from './harness';

const other = process.argv[2];
if (!other) {
  console.error('Usage: npx tsx test/bench/compare-gates.ts <path to the other checkout>');
  process.exit(2);
}
const ROOT = resolve(import.meta.dirname, '../..');
const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 40);
const PER_ROUND = Number(process.env.WARDEN_BENCH_CALLS ?? 150);

const def: ServerDefinition = { id: 'everything', name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
const manager = new ConnectionManager({
  directory: { server: (id) => (id === def.id ? def : undefined), accountLabel: () => 'Default', endpointHash },
  secrets: { get: async () => null, set: async () => {}, delete: async () => false },
});
if ((await manager.connect('everything', 'default')).state !== 'connected') throw new Error('server-everything did not connect');
const request = { source: 'user' as const, serverId: 'everything', accountId: 'default', toolName: 'echo', arguments: { message: 'bench' } };

/** A gate from the checkout at `root`, on the shared connection, Always Allow, in-memory journal. */
async function gateOf(root: string): Promise<() => Promise<void>> {
  const load = (file: string) => import(pathToFileURL(resolve(root, file)).href);
  const { Gate } = await load('electron/core/gate/gate.ts');
  const { MemoryHistory } = await load('electron/core/ledger/history.ts');
  const { MemoryJournal } = await load('electron/core/memory-journal.ts');
  const { systemClock } = await load('electron/core/ports.ts');
  const { PolicyState } = await load('shared/domain/policy.ts');
  const journal = new MemoryJournal(systemClock);
  const policy = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });
  const gate = new Gate({ journal, history: new MemoryHistory(() => journal.read()), executor: manager, registry: manager, policy: { current: () => policy }, scheduleExpiry: false });
  return async () => {
    const op = await gate.request(request);
    if (op.state !== 'succeeded') throw new Error(`a gated call ended ${op.state}: ${op.reason}`);
  };
}

const variants: Record<string, () => Promise<unknown>> = {
  other: await gateOf(resolve(other)),
  this: await gateOf(ROOT),
  'connection layer alone': () => manager.call({ serverId: 'everything', accountId: 'default', toolName: 'echo' }, { message: 'bench' }, { signal: new AbortController().signal, operationId: 'bench' }),
};
const names = Object.keys(variants);
for (const n of names) for (let i = 0; i < 300; i++) await variants[n]!(); // warm-up (JIT, caches)
const perCall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const took: Record<string, number> = {};
  for (const n of names.map((_, i) => names[(i + round) % names.length]!)) {
    const t0 = performance.now();
    for (let i = 0; i < PER_ROUND; i++) await variants[n]!();
    took[n] = performance.now() - t0;
    perCall[n]!.push((took[n]! / PER_ROUND) * 1000);
  }
  ratios.push(took.this! / took.other!);
}
const median = (xs: number[]) => percentiles(xs, [50])[0]!;
console.log(`this checkout's gate / the other's: ${median(ratios).toFixed(3)} (median of ${ROUNDS} rounds of ${PER_ROUND} calls)`);
for (const n of names) console.log(`  ${n}: ${median(perCall[n]!).toFixed(1)} µs a call`);
await manager.close();
