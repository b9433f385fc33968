/**
 * The ledger at 10k, 100k and 1M calls: start-up, memory, stalls, per-call cost and the Activity
 * queries, on one growing history.
 *
 * The ledger is the app's (`openLedgerForApp`: sealed with its key, anchored in the keychain —
 * the real one inside scripts/with-keyring.sh). The history is grown through the ledger's own
 * writer (`Ledger.append`, the path every gate record takes), not through the gate: a realistic
 * call is four records — proposed (six tools, 200–500-byte arguments), approved + executing in
 * one append, and the outcome with a small result — with every tenth call asked and approved by
 * a person and every seventh failing. Writing a million calls through the full gate and a real
 * server would take hours on this machine. What is measured at each size (start, heap, queries,
 * the next 10k calls) is the app's path: the calls go through the real gate, each with its own
 * operation id as chat makes them, to server-everything's `echo`, spawned, over stdio.
 *
 * Figures, each at 10k / 100k / 1M calls (`WARDEN_BENCH_HISTORY=10000,100000` for fewer):
 * - start: open (index + recovery) + crash recovery + the first page of Activity and of
 *   operations, median of 3 (target < 1 s at 1M);
 * - heap after start, minus the heap after starting an empty ledger (target < 50 MB);
 * - the longest event-loop pause while calls are made across a rotation (target < 5 ms);
 * - µs per call of 10k more calls on top of the history against 10k on a fresh, empty ledger,
 *   in alternating runs of 2,000 (target: ratio of medians < 1.1, flat), and for each what the
 *   index does: commits per call and ms per commit (BEGIN to COMMIT; a commit writing more pages
 *   as history grows shows here);
 * - Activity queries, median of 5 (target < 50 ms each).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { resolve } from 'node:path';
import { journalEntry, type DecisionRecord } from '../../shared/domain/journal-events';
import { PolicyState } from '../../shared/domain/policy';
import { Gate } from '../../electron/core/gate/gate';
import type { LedgerService } from '../../electron/core/ledger/service';
import { ConnectionManager } from '../../electron/core/mcp/connection-manager';
import type { JournalEntry } from '../../electron/core/ports';
import { endpointHash } from '../../electron/core/settings/identity';
import { appLedger, benchKeychain, type BenchKeychain } from './app-ledger';
import { percentiles, type BenchModule, type Report } from './harness';

const SIZES = (process.env.WARDEN_BENCH_HISTORY ?? '10000,100000,1000000').split(',').map(Number);
const TOOLS = ['read_file', 'write_file', 'search_code', 'list_issues', 'create_issue', 'run_query'];
const ALLOW: DecisionRecord = { decision: 'allow', reason: 'Always allowed for Work', layer: 'user', ruleId: 'allow-work', configErrors: [] };
const ASK: DecisionRecord = { decision: 'ask', reason: 'Asks by default', layer: 'default', ruleId: null, configErrors: [] };
const median = (xs: number[]): number => percentiles(xs, [50])[0]!;

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** The records of call `i` (two appends: the decision, then the outcome). */
function call(i: number, now: number): { decided: JournalEntry[]; outcome: JournalEntry } {
  const id = `call-${i.toString(36)}`;
  const tool = TOOLS[i % TOOLS.length]!;
  const account = i % 10 === 3 ? 'personal' : 'work';
  const args = { path: `/home/person/projects/warden/src/module-${i % 997}/file-${i}.ts`, query: 'x'.repeat(120 + (i % 300)), options: { recursive: i % 2 === 0, limit: i % 50 } };
  const canonical = JSON.stringify(args);
  const proposed = journalEntry('op.proposed', {
    operationId: id,
    origin: { source: 'model', conversationId: `conv-${Math.floor(i / 40)}`, round: i % 40, batchId: null },
    identity: { serverId: 'workspace', accountId: account, toolName: tool, endpointHash: 'e'.repeat(64), contractHash: 'c'.repeat(64) },
    arguments: args,
    canonicalArguments: canonical,
    fingerprint: `${(i * 2654435761).toString(16).padStart(16, '0')}${'f'.repeat(48)}`,
    requestedAt: now,
    expiresAt: null,
  });
  const asked = i % 10 === 7;
  const decided = asked
    ? [
        proposed,
        journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'awaiting_approval', reason: ASK.reason, decision: ASK, actor: 'policy', expiresAt: now + 600_000 }),
        journalEntry('op.transition', { operationId: id, from: 'awaiting_approval', to: 'approved', reason: 'Approved by you', decision: ASK, actor: 'user' }),
        journalEntry('op.transition', { operationId: id, from: 'approved', to: 'executing', reason: 'Sending the request to the server', fingerprint: 'f'.repeat(64) }),
      ]
    : [
        proposed,
        journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'approved', reason: ALLOW.reason, decision: ALLOW, actor: 'policy', fingerprint: 'f'.repeat(64) }),
        journalEntry('op.transition', { operationId: id, from: 'approved', to: 'executing', reason: 'Sending the request to the server', fingerprint: 'f'.repeat(64) }),
      ];
  const failed = i % 7 === 5;
  const outcome = journalEntry('op.transition', {
    operationId: id,
    from: 'executing',
    to: failed ? 'failed' : 'succeeded',
    reason: failed ? 'The tool reported an error' : 'The tool call succeeded',
    result: { isError: failed, content: [{ type: 'text', text: `result of ${tool} #${i}: ${'r'.repeat(80 + (i % 120))}` }] },
  });
  return { decided, outcome };
}

/** Writes calls [from, to) through the ledger's writer as fast as it takes them (not durable). */
async function grow(service: LedgerService, from: number, to: number): Promise<void> {
  const now = Date.now();
  for (let i = from; i < to; i++) {
    const c = call(i, now);
    void service.ledger.append(c.decided);
    void service.ledger.append([c.outcome]);
    if (i % 2000 === 1999) {
      await service.ledger.flush();
      await service.index.flush();
    }
  }
  await service.ledger.flush();
  await service.index.flush();
}

const EVERYTHING = resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const ALLOW_ALL = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });

/** One connection to server-everything over stdio, shared by every gate of the run. */
async function everything(): Promise<ConnectionManager> {
  const def = { id: 'everything', name: 'Everything', transport: 'stdio' as const, command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
  const manager = new ConnectionManager({
    directory: { server: (id) => (id === def.id ? def : undefined), accountLabel: () => 'Default', endpointHash },
    secrets: { get: async () => null, set: async () => {}, delete: async () => false },
  });
  if ((await manager.connect('everything', 'default')).state !== 'connected') throw new Error('server-everything did not connect');
  return manager;
}

function gateOn(service: LedgerService, manager: ConnectionManager): Gate {
  return new Gate({ journal: service.ledger, history: service.history, executor: manager, registry: manager, policy: { current: () => ALLOW_ALL }, scheduleExpiry: false });
}

interface CallRun {
  usPerCall: number;
  commitsPerCall: number;
  msPerCommit: number;
}

/** `count` calls through the gate, 16 callers, each call with its own operation id as chat makes them. */
async function gateCalls(service: LedgerService, gate: Gate, count: number): Promise<CallRun> {
  await service.index.flush();
  const index0 = service.index.stats;
  let left = count;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (left-- > 0) {
      const op = await gate.request({ source: 'model', operationId: randomUUID(), conversationId: 'history-bench', serverId: 'everything', accountId: 'default', toolName: 'echo', arguments: { message: 'x'.repeat(200) } });
      if (op.state !== 'succeeded') throw new Error(`call ended ${op.state}: ${op.reason}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await service.index.flush();
  const usPerCall = ((performance.now() - started) * 1000) / count;
  const commits = service.index.stats.commits - index0.commits;
  return { usPerCall, commitsPerCall: commits / count, msPerCommit: (service.index.stats.commitMs - index0.commitMs) / Math.max(1, commits) };
}

/** The longest gap between ticks of a 1 ms timer while `work` runs. */
async function longestPause(work: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(0, longest - 1);
}

/** What the app does before its first page: open, recover, first Activity and operations pages. */
async function start(dir: string, keychain: BenchKeychain): Promise<{ service: LedgerService; ms: number }> {
  const t0 = performance.now();
  const service = await appLedger(dir, keychain);
  await service.recoverOperations();
  await service.history.audit({}, { limit: 500, offset: 0 });
  await service.history.recordedOperations({ limit: 200 });
  return { service, ms: performance.now() - t0 };
}

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

async function timed(fn: () => Promise<unknown>, rounds = 5): Promise<number> {
  await fn();
  const xs: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

function diskMb(dir: string): { ledger: number; index: number } {
  let ledger = 0;
  let index = 0;
  for (const name of readdirSync(dir)) {
    const size = statSync(join(dir, name)).size;
    if (name.startsWith('index.sqlite')) index += size;
    else ledger += size;
  }
  return { ledger: ledger / 1e6, index: index / 1e6 };
}

async function measureAt(n: number, root: string, dir: string, keychain: BenchKeychain, manager: ConnectionManager, report: Report, emptyHeap: number): Promise<void> {
  const label = n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`;
  const starts: number[] = [];
  let heap = 0;
  for (let k = 0; k < 3; k++) {
    const { service, ms } = await start(dir, keychain);
    starts.push(ms);
    heap = heapMb();
    await service.close();
  }
  const startMs = median(starts);
  report({ name: `history.start ${label} calls (open + recovery + first pages, median of 3)`, value: startMs, unit: 'ms', target: '< 1000 ms at 1M', met: startMs < 1000 });
  report({ name: `history.heap after start ${label} calls, above an empty ledger`, value: heap - emptyHeap, unit: 'MB', target: '< 50 MB', met: heap - emptyHeap < 50 });

  const { service } = await start(dir, keychain);
  // A fresh, empty ledger (its own keychain: an anchor names one ledger) for the same calls.
  const emptyKeychain = benchKeychain();
  const { service: empty } = await start(join(root, `empty-${label}`), emptyKeychain);
  const gate = gateOn(service, manager);
  const emptyGate = gateOn(empty, manager);
  try {
    const q = service.history;
    const someId = `call-${Math.floor(n / 2).toString(36)}`;
    const timeFrom = (await q.audit({}, { limit: 1, offset: Math.min(20_000, n) })).rows[0]?.time ?? 0;
    const queries: Array<[string, () => Promise<unknown>]> = [
      ['first page (500 audit rows)', () => q.audit({}, { limit: 500, offset: 0 })],
      ['operations first page (200)', () => q.recordedOperations({ limit: 200 })],
      ['filter by tool', () => q.audit({ toolName: 'search_code' }, { limit: 500, offset: 0 })],
      ['filter by status (failed operations)', () => q.operations({ state: 'failed', limit: 200 })],
      ['filter by account', () => q.audit({ accountId: 'personal' }, { limit: 500, offset: 0 })],
      ['filter by time', () => q.audit({ from: timeFrom }, { limit: 500, offset: 0 })],
      ['operation by id', () => q.find(someId)],
      ['"Why?" of one call', () => q.history(someId)],
    ];
    for (const [name, fn] of queries) {
      const ms = await timed(fn);
      report({ name: `history.query ${label}: ${name} (median of 5)`, value: ms, unit: 'ms', target: '< 50 ms', met: ms < 50 });
    }
    await gateCalls(empty, emptyGate, 500); // warm-up of the fresh ledger
    const runs: Record<'history' | 'empty', CallRun[]> = { history: [], empty: [] };
    for (let k = 0; k < 5; k++) {
      for (const v of k % 2 === 0 ? (['history', 'empty'] as const) : (['empty', 'history'] as const)) {
        runs[v].push(v === 'history' ? await gateCalls(service, gate, 2_000) : await gateCalls(empty, emptyGate, 2_000));
      }
    }
    const med = (v: 'history' | 'empty', f: keyof CallRun) => median(runs[v].map((r) => r[f]));
    const ratio = med('history', 'usPerCall') / med('empty', 'usPerCall');
    report({ name: `history.10k calls on an empty ledger (alternating with ${label}; median of 5 runs of 2,000)`, value: med('empty', 'usPerCall'), unit: 'µs/call' });
    report({ name: `history.10k more calls on top of ${label} (median of 5 runs of 2,000)`, value: med('history', 'usPerCall'), unit: 'µs/call', baseline: `history.10k calls on an empty ledger (alternating with ${label}; median of 5 runs of 2,000)`, ratio, target: 'ratio < 1.1 (flat)', met: ratio < 1.1 });
    for (const v of ['empty', 'history'] as const) {
      const where = v === 'empty' ? `an empty ledger (beside ${label})` : `${label} calls`;
      report({ name: `history.index commits per call on ${where}`, value: med(v, 'commitsPerCall'), unit: 'commits' });
      report({ name: `history.ms per index commit on ${where}`, value: med(v, 'msPerCommit'), unit: 'ms' });
    }
    const steady = await longestPause(() => gateCalls(service, gate, 2_000).then(() => undefined));
    report({ name: `history.longest event-loop pause during calls without a rotation at ${label} (the machine's noise floor)`, value: steady, unit: 'ms' });
    const pause = await longestPause(async () => {
      const done = gateCalls(service, gate, 2_000);
      await service.ledger.rotate();
      await done;
    });
    report({ name: `history.longest event-loop pause during calls across a rotation at ${label}`, value: pause, unit: 'ms', target: '< 5 ms', met: pause < 5 });
  } finally {
    gate.close();
    emptyGate.close();
    await service.close();
    await empty.close();
    await emptyKeychain.cleanup();
  }
  const disk = diskMb(join(dir, 'ledger'));
  report({ name: `history.disk at ${label} calls: segments`, value: disk.ledger, unit: 'MB' });
  report({ name: `history.disk at ${label} calls: index`, value: disk.index, unit: 'MB' });
}

const bench: BenchModule = {
  title: `The ledger at ${SIZES.join(', ')} calls: the app's sealed ledger, history grown through its writer, measured calls through the real gate with operation ids to a spawned stdio server`,
  async run(report) {
    const root = mkdtempSync(join(tmpdir(), 'warden-bench-history-'));
    const keychain = benchKeychain();
    const manager = await everything();
    try {
      const emptyKeychain = benchKeychain();
      const { service: empty } = await start(join(root, 'empty'), emptyKeychain);
      const emptyHeap = heapMb();
      await empty.close();
      await emptyKeychain.cleanup();
      const dir = join(root, 'history');
      let have = 0;
      for (const n of SIZES) {
        const service = await appLedger(dir, keychain);
        const t0 = performance.now();
        await grow(service, have, n);
        await service.close();
        console.log(`  (wrote calls ${have}–${n} in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
        have = n;
        await measureAt(n, root, dir, keychain, manager, report, emptyHeap);
      }
    } finally {
      await manager.close();
      await keychain.cleanup();
      rmSync(root, { recursive: true, force: true });
    }
  },
};
export default bench;
