/**
 * Where the time of a durable call goes: the same gated call (an in-process tool that answers at
 * once, so only Warden's own work is measured) on the in-memory journal and on the durable
 * ledger, the ledger's counters per call (writes, syncs), and the raw I/O those counters amount
 * to, done by hand on the same disk. The `mcp` bench compares a durable call with a direct call
 * plus one raw write+fsync; this one says what the rest of the difference is made of.
 *
 * - syncs and writes per call, counted by the ledger (`Ledger.stats`) over sequential calls;
 * - the gate on the in-memory journal, on the ledger, and on the sealed ledger (median µs);
 * - raw I/O per call as the counters say: one write + fdatasync of the decision records and one
 *   write of the outcome record (which shares the next call's sync), on a preallocated file as
 *   the ledger's; and a plain write + fsync (the `mcp` bench's baseline);
 * - what is left: durable call − in-memory call − its raw I/O (µs), the ledger's own CPU and
 *   event-loop turns per call.
 */
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gate } from '../../electron/core/gate/gate';
import type { ToolDescriptor } from '../../electron/core/gate/ports';
import { MemoryHistory } from '../../electron/core/ledger/history';
import { LedgerService } from '../../electron/core/ledger/service';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock, type Journal, type OperationHistory, type SecretStore } from '../../electron/core/ports';
import { PolicyState } from '../../shared/domain/policy';
import { percentiles, type BenchModule } from './harness';

const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 15);
const PER_ROUND = Number(process.env.WARDEN_BENCH_CALLS ?? 60);
const median = (xs: number[]) => percentiles(xs, [50])[0]!;

const tool: ToolDescriptor = {
  serverId: 'local',
  accountId: 'default',
  name: 'echo',
  description: 'answers at once',
  inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
  contractHash: 'c'.repeat(64),
  endpointHash: 'e'.repeat(64),
};

function gateOn(journal: Journal, history: OperationHistory): Gate {
  const policy = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });
  return new Gate({
    journal,
    history,
    executor: { call: async (_t, args) => ({ content: [{ type: 'text', text: String(args.message) }] }) },
    registry: { getTool: (s, a, n) => (s === tool.serverId && a === tool.accountId && n === tool.name ? tool : undefined), listTools: () => [tool] },
    policy: { current: () => policy },
    scheduleExpiry: false,
  });
}

function cb<T>(run: (done: (err: NodeJS.ErrnoException | null, v?: T) => void) => void): Promise<T> {
  return new Promise((res, rej) => run((e, v) => (e ? rej(e) : res(v as T))));
}

function memoryStore(): SecretStore {
  const m = new Map<string, string>();
  return { get: async (k) => m.get(k) ?? null, set: async (k, v) => void m.set(k, v), delete: async (k) => m.delete(k) };
}

const bench: BenchModule = {
  title: 'Where the time of a durable call goes (counters and raw I/O per call)',
  async run(report) {
    const dir = mkdtempSync(join(tmpdir(), 'warden-durable-call-'));
    const service = await LedgerService.open({ dir: join(dir, 'ledger'), verifyInBackground: false });
    const sealed = await LedgerService.open({ dir: join(dir, 'sealed'), verifyInBackground: false, keychain: { secrets: memoryStore() } });
    const memory = new MemoryJournal(systemClock);
    const gates = {
      memory: gateOn(memory, new MemoryHistory(() => memory.read())),
      ledger: gateOn(service.ledger, service.history),
      sealed: gateOn(sealed.ledger, sealed.history),
    };
    const request = { source: 'user' as const, serverId: 'local', accountId: 'default', toolName: 'echo', arguments: { message: 'x'.repeat(300) } };
    const fd = fs.openSync(join(dir, 'raw.bin'), 'w+');
    const pre = fs.openSync(join(dir, 'raw-preallocated.bin'), 'w+');
    fs.writeSync(pre, Buffer.alloc(64 * 1024 * 1024));
    fs.fsyncSync(pre);
    try {
      // Counters over sequential calls (after a warm-up).
      for (let i = 0; i < 200; i++) await gates.ledger.request(request);
      await service.ledger.flush();
      const before = service.ledger.stats;
      const N = 500;
      for (let i = 0; i < N; i++) await gates.ledger.request(request);
      const after = service.ledger.stats;
      const syncs = (after.fsyncs - before.fsyncs) / N;
      const writes = (after.writes - before.writes) / N;
      const bytes = (after.recordBytes - before.recordBytes) / N;
      const appends = (after.appendCalls - before.appendCalls) / N;
      report({ name: 'durable-call.syncs per sequential call (fdatasync)', value: syncs, unit: 'syncs', target: '1 (executing synced before the request leaves)', met: Math.abs(syncs - 1) < 0.05 });
      report({ name: 'durable-call.writes per sequential call', value: writes, unit: 'writes' });
      report({ name: 'durable-call.appends per sequential call', value: appends, unit: 'appends' });
      report({ name: 'durable-call.record bytes per call', value: bytes, unit: 'B' });
      const decision = Buffer.alloc(Math.round(bytes * 0.75), 0x61);
      const outcome = Buffer.alloc(Math.round(bytes) - decision.length, 0x62);
      const oneRecord = Buffer.alloc(Math.round(bytes / 4), 0x63);
      let pos = 0;
      let prePos = 0;
      const variants: Record<string, () => Promise<unknown>> = {
        'gate, in-memory journal': () => gates.memory.request(request),
        'gate, durable ledger': () => gates.ledger.request(request),
        'gate, sealed ledger': () => gates.sealed.request(request),
        'raw: the call\'s writes + one fdatasync, preallocated': async () => {
          await cb<number>((d) => fs.write(pre, decision, 0, decision.length, prePos, d));
          await cb<void>((d) => fs.fdatasync(pre, d));
          await cb<number>((d) => fs.write(pre, outcome, 0, outcome.length, prePos + decision.length, d));
          prePos = (prePos + decision.length + outcome.length) % (60 * 1024 * 1024);
        },
        'raw: one record write + fsync, growing file': async () => {
          await cb<number>((d) => fs.write(fd, oneRecord, 0, oneRecord.length, pos, d));
          await cb<void>((d) => fs.fsync(fd, d));
          pos += oneRecord.length;
        },
      };
      const names = Object.keys(variants);
      const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (const n of names) for (let i = 0; i < 50; i++) await variants[n]!();
      for (let round = 0; round < ROUNDS; round++) {
        const order = names.map((_, i) => names[(i + round) % names.length]!);
        for (const n of order) {
          for (let i = 0; i < PER_ROUND; i++) {
            const t0 = performance.now();
            await variants[n]!();
            samples[n]!.push((performance.now() - t0) * 1000);
          }
        }
      }
      const m = Object.fromEntries(names.map((n) => [n, median(samples[n]!)])) as Record<string, number>;
      for (const n of names) report({ name: `durable-call.${n} (median)`, value: m[n]!, unit: 'µs' });
      const io = m["raw: the call's writes + one fdatasync, preallocated"]!;
      const mem = m['gate, in-memory journal']!;
      const left = m['gate, durable ledger']! - mem - io;
      report({ name: 'durable-call.left after the gate and the raw I/O: durable − in-memory − raw I/O (median)', value: left, unit: 'µs' });
      report({ name: 'durable-call.same for the sealed ledger (median)', value: m['gate, sealed ledger']! - mem - io, unit: 'µs' });
      report({
        name: 'durable-call.durable ledger vs in-memory gate + its raw I/O',
        value: m['gate, durable ledger']!,
        unit: 'µs',
        baseline: 'in-memory gate + the call\'s raw writes and one fdatasync',
        ratio: m['gate, durable ledger']! / (mem + io),
      });
    } finally {
      fs.closeSync(fd);
      fs.closeSync(pre);
      for (const g of Object.values(gates)) g.close();
      await sealed.close();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
