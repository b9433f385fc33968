/**
 * The ledger at 10k, 100k and 1M calls: start-up, memory, stalls, per-call cost and the Activity
 * queries, on one growing history.
 *
 * The history is written through the ledger's own writer (`LedgerService` → `Ledger.append`, the
 * path every gate record takes), not through the gate: a realistic call is four records —
 * proposed (six tools, 200–500-byte arguments), approved + executing in one append, and the
 * outcome with a small result — with every tenth call asked and approved by a person and every
 * seventh failing. Writing a million calls through the full gate and a real server would take
 * hours on this machine; what is measured after each size (start, heap, queries, the next 10k
 * calls) goes through the same ledger, index and history the app runs.
 *
 * Figures, each at 10k / 100k / 1M calls (`WARDEN_BENCH_HISTORY=10000,100000` for fewer):
 * - start: open (index + recovery) + crash recovery + the first page of Activity and of
 *   operations, median of 3 (target < 1 s at 1M);
 * - heap after start, minus the heap after starting an empty ledger (target < 50 MB);
 * - the longest event-loop pause while appending calls across a rotation (target < 5 ms);
 * - µs per call of 10k more durable calls, and its ratio to the same on an empty ledger (flat);
 * - Activity queries, median of 5 (target < 50 ms each).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { journalEntry, type DecisionRecord } from '../../shared/domain/journal-events';
import { LedgerService } from '../../electron/core/ledger/service';
import type { JournalEntry } from '../../electron/core/ports';
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

/** µs per call of `count` calls appended the way the gate appends them (decision durable), 16 at a time. */
async function durableCalls(service: LedgerService, from: number, count: number): Promise<number> {
  let next = from;
  const end = from + count;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < end) {
      const c = call(next++, Date.now());
      await service.ledger.append(c.decided, { durable: true });
      await service.ledger.append([c.outcome]);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await service.index.flush();
  return ((performance.now() - started) * 1000) / count;
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
async function start(dir: string): Promise<{ service: LedgerService; ms: number }> {
  const t0 = performance.now();
  const service = await LedgerService.open({ dir, verifyInBackground: false });
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

async function measureAt(n: number, dir: string, report: Report, emptyHeap: number, emptyPerCall: number): Promise<void> {
  const label = n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`;
  const starts: number[] = [];
  let heap = 0;
  for (let k = 0; k < 3; k++) {
    const { service, ms } = await start(dir);
    starts.push(ms);
    heap = heapMb();
    await service.close();
  }
  const startMs = median(starts);
  report({ name: `history.start ${label} calls (open + recovery + first pages, median of 3)`, value: startMs, unit: 'ms', target: '< 1000 ms at 1M', met: startMs < 1000 });
  report({ name: `history.heap after start ${label} calls, above an empty ledger`, value: heap - emptyHeap, unit: 'MB', target: '< 50 MB', met: heap - emptyHeap < 50 });

  const { service } = await start(dir);
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
    const perCall = await durableCalls(service, n, 10_000);
    report({ name: `history.10k more durable calls on top of ${label}`, value: perCall, unit: 'µs/call', baseline: 'history.10k durable calls on an empty ledger', ratio: perCall / emptyPerCall, target: 'ratio ≈ 1 (flat)' });
    const steady = await longestPause(() => durableCalls(service, n + 10_000, 2_000).then(() => undefined));
    report({ name: `history.longest event-loop pause appending without a rotation at ${label} (the machine's noise floor)`, value: steady, unit: 'ms' });
    const pause = await longestPause(async () => {
      const done = durableCalls(service, n + 12_000, 2_000);
      await service.ledger.rotate();
      await done;
    });
    report({ name: `history.longest event-loop pause appending across a rotation at ${label}`, value: pause, unit: 'ms', target: '< 5 ms', met: pause < 5 });
  } finally {
    await service.close();
  }
  const disk = diskMb(dir);
  report({ name: `history.disk at ${label} calls: segments`, value: disk.ledger, unit: 'MB' });
  report({ name: `history.disk at ${label} calls: index`, value: disk.index, unit: 'MB' });
}

const bench: BenchModule = {
  title: `The ledger at ${SIZES.join(', ')} calls (history written through the ledger's writer)`,
  async run(report) {
    const root = mkdtempSync(join(tmpdir(), 'warden-bench-history-'));
    try {
      const emptyDir = join(root, 'empty');
      const { service: empty } = await start(emptyDir);
      const emptyHeap = heapMb();
      const emptyPerCall = await durableCalls(empty, 0, 10_000);
      await empty.close();
      report({ name: 'history.10k durable calls on an empty ledger', value: emptyPerCall, unit: 'µs/call' });
      const dir = join(root, 'history');
      let have = 0;
      for (const n of SIZES) {
        const service = await LedgerService.open({ dir, verifyInBackground: false });
        const t0 = performance.now();
        await grow(service, have, n);
        await service.close();
        console.log(`  (wrote calls ${have}–${n} in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
        have = n;
        await measureAt(n, dir, report, emptyHeap, emptyPerCall);
        have += 14_000; // the calls measureAt appended
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};
export default bench;
