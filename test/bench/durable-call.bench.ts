/**
 * Where the time of a durable call goes: the same gated call on the in-memory journal, on the
 * durable ledger and on the app's ledger (`openLedgerForApp`: sealed, anchored in the keychain),
 * the ledger's and the index's counters per call, and the raw I/O those counters amount to, done
 * by hand on the same disk. Stubbed: the server is an in-process tool that answers at once, so
 * only Warden's own work is measured (the `mcp` and `lag` benches call a spawned stdio server).
 *
 * - index commits, records per commit and ledger syncs per call, and µs per call, for calls from
 *   8 and 32 concurrent callers with an operation id the gate made (`gate.newOperationId()`, as
 *   chat's calls carry), without one, and with a caller-chosen id (information only: the
 *   idempotency lookup a caller bringing its own id pays), in alternating runs: with ids the
 *   index batches as it does without (target: < 0.05 commits per call) and as many calls share
 *   a sync;
 * - syncs and writes per call, counted by the ledger (`Ledger.stats`) over sequential calls;
 * - the gate on the in-memory journal, on the ledger, and on the sealed ledger (median µs), each
 *   call with an id the gate made, as chat's; and the sealed ledger with a caller-chosen id beside
 *   it, labelled;
 * - raw I/O per call as the counters say: one write + fdatasync of the decision records and one
 *   write of the outcome record (which shares the next call's sync), on a preallocated file as
 *   the ledger's; and a plain write + fsync (the `mcp` bench's baseline);
 * - what is left: durable call − in-memory call − its raw I/O (µs), the ledger's own CPU and
 *   event-loop turns per call.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gate } from '../../electron/core/gate/gate';
import type { ToolDescriptor } from '../../electron/core/gate/ports';
import { MemoryHistory } from '../../electron/core/ledger/history';
import { LedgerService } from '../../electron/core/ledger/service';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock, type Journal, type OperationHistory } from '../../electron/core/ports';
import { PolicyState } from '../../shared/domain/policy';
import { appLedger, benchKeychain } from './app-ledger';
import { percentiles, type BenchModule, type Report } from './harness';

const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 15);
const PER_ROUND = Number(process.env.WARDEN_BENCH_CALLS ?? 60);
/** Calls per concurrent run (each variant runs `CONCURRENT_RUNS` times, alternating). */
const CONCURRENT_CALLS = Number(process.env.WARDEN_BENCH_CONCURRENT_CALLS ?? 2000);
const CONCURRENT_RUNS = 3;
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

/** How a call names its operation: not at all, with an id the gate made (as chat), or with one the caller chose. */
type IdKind = 'without' | 'minted' | 'caller-chosen';
const ID_LABEL: Record<IdKind, string> = {
  without: 'without operation ids',
  minted: "with operation ids the gate made (as chat's)",
  'caller-chosen': 'with caller-chosen operation ids (information: the idempotency lookup)',
};

interface ConcurrentRun {
  usPerCall: number;
  commitsPerCall: number;
  recordsPerCommit: number;
  syncsPerCall: number;
}

/** `calls` calls from `callers` concurrent callers, each naming its operation as `ids` says. */
async function concurrentCalls(service: LedgerService, gate: Gate, request: Parameters<Gate['request']>[0], ids: IdKind, calls: number, callers: number): Promise<ConcurrentRun> {
  await service.index.flush();
  const ledger0 = service.ledger.stats;
  const index0 = service.index.stats;
  let next = 0;
  const t0 = performance.now();
  const caller = async (): Promise<void> => {
    while (next++ < calls) {
      const operationId = ids === 'minted' ? gate.newOperationId() : ids === 'caller-chosen' ? randomUUID() : undefined;
      const op = await gate.request(operationId ? { ...request, source: 'model', operationId } : request);
      if (op.state !== 'succeeded') throw new Error(`call ended ${op.state}: ${op.reason}`);
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  const usPerCall = ((performance.now() - t0) * 1000) / calls;
  await service.index.flush();
  const commits = service.index.stats.commits - index0.commits;
  return {
    usPerCall,
    commitsPerCall: commits / calls,
    recordsPerCommit: (service.index.stats.records - index0.records) / Math.max(1, commits),
    syncsPerCall: (service.ledger.stats.fsyncs - ledger0.fsyncs) / calls,
  };
}

/** Each way of naming operations, in rotating order, at 8 and 32 callers: medians of each figure. */
async function idsKeepBatching(service: LedgerService, gate: Gate, request: Parameters<Gate['request']>[0], report: Report, label: string): Promise<void> {
  for (const callers of [8, 32]) {
    const kinds: IdKind[] = ['minted', 'without', 'caller-chosen'];
    const runs: Record<IdKind, ConcurrentRun[]> = { minted: [], without: [], 'caller-chosen': [] };
    for (let k = 0; k < CONCURRENT_RUNS; k++) {
      for (let i = 0; i < kinds.length; i++) {
        const v = kinds[(i + k) % kinds.length]!;
        runs[v].push(await concurrentCalls(service, gate, request, v, CONCURRENT_CALLS, callers));
      }
    }
    const med = (v: IdKind, f: keyof ConcurrentRun) => median(runs[v].map((r) => r[f]));
    for (const v of ['without', 'minted', 'caller-chosen'] as const) {
      const what = `${CONCURRENT_CALLS} calls from ${callers} callers, ${ID_LABEL[v]}, ${label}`;
      const commits = med(v, 'commitsPerCall');
      const target = v === 'minted' ? { target: '< 0.05 (an operation id forces no index commit)', met: commits < 0.05 } : {};
      report({ name: `durable-call.index commits per call, ${what} (median of ${CONCURRENT_RUNS})`, value: commits, unit: 'commits', ...target });
      report({ name: `durable-call.records per index commit, ${what}`, value: med(v, 'recordsPerCommit'), unit: 'records' });
      report({ name: `durable-call.ledger syncs per call, ${what}`, value: med(v, 'syncsPerCall'), unit: 'syncs' });
      report({ name: `durable-call.µs per call, ${what}`, value: med(v, 'usPerCall'), unit: 'µs/call' });
    }
    const ratio = med('minted', 'usPerCall') / med('without', 'usPerCall');
    report({ name: `durable-call.µs per call with ids the gate made over without, ${callers} callers, ${label}`, value: ratio, unit: '×', target: '< 1.2', met: ratio < 1.2 });
    const chosen = med('caller-chosen', 'usPerCall') / med('without', 'usPerCall');
    report({ name: `durable-call.µs per call with caller-chosen ids over without, ${callers} callers, ${label} (information)`, value: chosen, unit: '×' });
  }
}

const bench: BenchModule = {
  title: "Where the time of a durable call goes: the real gate on the in-memory journal, the ledger and the app's sealed ledger, with operation ids the gate made as chat's calls carry, index commits with and without them and with caller-chosen ids, raw I/O (an in-process tool stands in for the server, so only Warden's work is timed)",
  async run(report) {
    const dir = mkdtempSync(join(tmpdir(), 'warden-durable-call-'));
    const service = await LedgerService.open({ dir: join(dir, 'ledger'), verifyInBackground: false });
    const keychain = benchKeychain();
    const sealed = await appLedger(join(dir, 'app'), keychain);
    const memory = new MemoryJournal(systemClock);
    const gates = {
      memory: gateOn(memory, new MemoryHistory(() => memory.read())),
      ledger: gateOn(service.ledger, service.history),
      sealed: gateOn(sealed.ledger, sealed.history),
    };
    const request = { source: 'user' as const, serverId: 'local', accountId: 'default', toolName: 'echo', arguments: { message: 'x'.repeat(300) } };
    // A chat call: a model's request carrying an id its gate made (so no idempotency lookup).
    const chatCall = (gate: Gate, operationId = gate.newOperationId()) => ({ ...request, source: 'model' as const, conversationId: 'bench', operationId });
    const fd = fs.openSync(join(dir, 'raw.bin'), 'w+');
    const pre = fs.openSync(join(dir, 'raw-preallocated.bin'), 'w+');
    fs.writeSync(pre, Buffer.alloc(64 * 1024 * 1024));
    fs.fsyncSync(pre);
    try {
      // Counters over sequential calls (after a warm-up).
      for (let i = 0; i < 200; i++) await gates.ledger.request(chatCall(gates.ledger));
      await service.ledger.flush();
      const before = service.ledger.stats;
      const N = 500;
      for (let i = 0; i < N; i++) await gates.ledger.request(chatCall(gates.ledger));
      const after = service.ledger.stats;
      const syncs = (after.fsyncs - before.fsyncs) / N;
      const writes = (after.writes - before.writes) / N;
      const bytes = (after.recordBytes - before.recordBytes) / N;
      const appends = (after.appendCalls - before.appendCalls) / N;
      report({ name: 'durable-call.syncs per sequential call (fdatasync)', value: syncs, unit: 'syncs', target: '1 (executing synced before the request leaves)', met: Math.abs(syncs - 1) < 0.05 });
      report({ name: 'durable-call.writes per sequential call', value: writes, unit: 'writes' });
      report({ name: 'durable-call.appends per sequential call', value: appends, unit: 'appends' });
      report({ name: 'durable-call.record bytes per call', value: bytes, unit: 'B' });
      await idsKeepBatching(sealed, gates.sealed, request, report, `app's ledger, sealed, ${keychain.label}`);
      const decision = Buffer.alloc(Math.round(bytes * 0.75), 0x61);
      const outcome = Buffer.alloc(Math.round(bytes) - decision.length, 0x62);
      const oneRecord = Buffer.alloc(Math.round(bytes / 4), 0x63);
      let pos = 0;
      let prePos = 0;
      const variants: Record<string, () => Promise<unknown>> = {
        'gate, in-memory journal': () => gates.memory.request(chatCall(gates.memory)),
        'gate, durable ledger': () => gates.ledger.request(chatCall(gates.ledger)),
        [`gate, app's ledger (sealed, ${keychain.label})`]: () => gates.sealed.request(chatCall(gates.sealed)),
        [`gate, app's ledger (sealed, ${keychain.label}), caller-chosen id (information: the idempotency lookup)`]: () => gates.sealed.request(chatCall(gates.sealed, randomUUID())),
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
      report({ name: "durable-call.same for the app's ledger (median)", value: m[`gate, app's ledger (sealed, ${keychain.label})`]! - mem - io, unit: 'µs' });
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
      await keychain.cleanup();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
