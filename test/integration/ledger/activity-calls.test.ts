/**
 * The Activity list through the real core on a durable ledger: one row per operation, keyset
 * pages that cover every operation exactly once, each filter, the SQL plans that keep pages fast
 * at any history length, what a compromised window can send, and the streamed export.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { pageQuery } from '../../../electron/core/ledger/activity-query';
import { MemoryHistory } from '../../../electron/core/ledger/history';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { ActivityCall, CallCursor, CallFilter } from '../../../shared/domain/activity';
import { ensureHistory, identityOf, START, STEP_MS } from '../../bench/activity-history';
import { recordsIn, tempDir } from '../../unit/ledger/helpers';

const CALLS = 600;
const t = tempDir('warden-activity-');
let core: WardenCore;
let service: LedgerService;
let memory: MemoryHistory;
const savedAs = join(t.dir, 'export');
let saveTo = `${savedAs}.jsonl`;

beforeAll(async () => {
  await ensureHistory(join(t.dir, 'ledger'), CALLS, () => undefined);
  const records = await recordsIn(join(t.dir, 'ledger'));
  memory = new MemoryHistory(() => records);
  service = await LedgerService.open({ dir: join(t.dir, 'ledger'), verifyInBackground: false });
  core = createCore({ version: 'test', ledger: service, connections: { reconnect: { maxAttempts: 0 } }, fileDialogs: { openFile: async () => null, saveFile: async () => saveTo } });
  await core.recovered;
}, 120_000);

afterAll(async () => {
  await core?.close();
  await service?.close();
  t.cleanup();
});

async function page(filter: CallFilter, after: CallCursor | null = null, limit = 50): Promise<{ calls: ActivityCall[]; next: CallCursor | null }> {
  const r = await dispatch(core.handlers, 'activity:calls', { filter, limit, after });
  if (!r.ok) throw new Error(r.error.message);
  return r.value as { calls: ActivityCall[]; next: CallCursor | null };
}

async function all(filter: CallFilter, limit = 50): Promise<ActivityCall[]> {
  const out: ActivityCall[] = [];
  let after: CallCursor | null = null;
  for (;;) {
    const p = await page(filter, after, limit);
    out.push(...p.calls);
    if (!p.next) return out;
    after = p.next;
  }
}

/** Ids of the generated calls `0..CALLS-1` that `keep` accepts, newest first. */
function expected(keep: (i: number) => boolean): string[] {
  const ids: string[] = [];
  for (let i = CALLS - 1; i >= 0; i--) if (keep(i)) ids.push(`call-${i.toString(36)}`);
  return ids;
}

describe('the Activity list (activity:calls)', () => {
  it('shows one row per operation, in words, newest first: the trusted preview, who asked, decision, outcome, when and how long', async () => {
    const first = await page({});
    expect(first.calls).toHaveLength(50);
    expect(first.next).not.toBeNull();
    const row = first.calls[0]!;
    expect(row.operationId).toBe(`call-${(CALLS - 1).toString(36)}`);
    // The preview is Warden's own line from the arguments (the server is no longer configured here).
    expect(row.summary).toMatch(/^Run /);
    expect(row.summary).toContain('/home/person/projects/warden/src/module-');
    expect(row.serverName).toBe('a removed server');
    expect(row.askedBy).toMatchObject({ source: 'model', conversationId: `conv-${Math.floor((CALLS - 1) / 40)}`, conversationTitle: null });
    expect(row.requestedAt).toBe(START + (CALLS - 1) * STEP_MS);
    const denied = first.calls.find((c) => c.state === 'denied')!;
    expect(denied).toMatchObject({ decision: 'deny', decisionReason: 'Disabled by you' });
    const ran = first.calls.find((c) => c.state === 'succeeded')!;
    expect(ran.finishedAt).not.toBeNull();
    expect(ran.durationMs).toBe(ran.finishedAt! - ran.requestedAt);
  });

  it('keyset pages cover every operation exactly once, in order, and agree with the in-memory history', async () => {
    const rows = await all({}, 37);
    expect(rows.map((r) => r.operationId)).toEqual(expected(() => true));
    const mem = await memory.calls({}, { limit: CALLS + 1 });
    expect(mem.calls.map((c) => c.view.operationId)).toEqual(rows.map((r) => r.operationId));
    // Oldest first (what exports read) is the same set reversed.
    const oldest = await service.history.calls({}, { limit: CALLS + 1, oldestFirst: true });
    expect(oldest.calls.map((c) => c.view.operationId)).toEqual([...rows.map((r) => r.operationId)].reverse());
  });

  const filters: Array<[string, CallFilter, (i: number) => boolean]> = [
    ['server', { serverId: 'github-3c4d' }, (i) => identityOf(i).serverId === 'github-3c4d'],
    ['account', { accountId: 'family-06' }, (i) => identityOf(i).accountId === 'family-06'],
    ['tool', { serverId: 'files-1a2b', toolName: 'move_file' }, (i) => identityOf(i).serverId === 'files-1a2b' && identityOf(i).toolName === 'move_file'],
    ['decision', { decision: 'deny' }, (i) => i % 20 === 19],
    ['outcome', { outcome: 'rejected' }, (i) => i % 20 === 17],
    ['outcome failed', { outcome: 'failed' }, (i) => i % 20 !== 19 && i % 20 !== 17 && i % 7 === 5],
    ['time range', { from: START + 100 * STEP_MS, to: START + 199 * STEP_MS }, (i) => i >= 100 && i <= 199],
    ['conversation', { conversationId: 'conv-3' }, (i) => i % 5 !== 0 && Math.floor(i / 40) === 3],
    ['several at once', { serverId: 'calendar-5e6f', decision: 'allow', from: START + 300 * STEP_MS }, (i) => identityOf(i).serverId === 'calendar-5e6f' && i >= 300 && i % 20 !== 19 && i % 10 !== 7],
    ['account and tool', { accountId: 'work-01', toolName: 'read_file' }, (i) => identityOf(i).accountId === 'work-01' && identityOf(i).toolName === 'read_file'],
    ['tool and outcome', { toolName: 'close_issue', outcome: 'failed' }, (i) => identityOf(i).toolName === 'close_issue' && i % 20 !== 19 && i % 20 !== 17 && i % 7 === 5],
    ['server, account and decision', { serverId: 'github-3c4d', accountId: 'work-03', decision: 'ask' }, (i) => identityOf(i).accountId === 'work-03' && i % 10 === 7],
    ['conversation, tool and outcome', { conversationId: 'conv-7', toolName: 'list_events', outcome: 'succeeded' }, (i) => i % 5 !== 0 && Math.floor(i / 40) === 7 && identityOf(i).toolName === 'list_events' && i % 20 !== 19 && i % 20 !== 17 && i % 7 !== 5],
  ];
  for (const [name, filter, keep] of filters) {
    it(`filters by ${name}: exactly the matching operations, through every page, as the in-memory history finds them`, async () => {
      const ids = (await all(filter, 23)).map((r) => r.operationId);
      expect(ids).toEqual(expected(keep));
      expect(ids.length).toBeGreaterThan(0);
      const mem = await memory.calls(filter, { limit: CALLS + 1 });
      expect(mem.calls.map((c) => c.view.operationId)).toEqual(ids);
    });
  }

  it("the Tool filter's choices are every tool a recorded call names, of the chosen server too, with none of its servers connected", async () => {
    const calls = await all({});
    const tools = async (request: object) => {
      const r = await dispatch(core.handlers, 'activity:tools', request);
      if (!r.ok) throw new Error(r.error.message);
      return (r.value as { tools: string[] }).tools;
    };
    expect(await tools({})).toEqual([...new Set(calls.map((c) => c.toolName))].sort());
    const server = calls[0]!.serverId;
    expect(await tools({ serverId: server })).toEqual([...new Set(calls.filter((c) => c.serverId === server).map((c) => c.toolName))].sort());
    expect(await tools({ serverId: server })).toEqual(await memory.toolNames({ serverId: server }, 1000));
    expect(await tools({ serverId: 'no-such-server' })).toEqual([]);
  });

  it('a filter nothing matches gives an empty page, not an error', async () => {
    expect(await page({ serverId: 'never-configured' })).toEqual({ calls: [], next: null });
    expect(await page({ from: START + 10 * CALLS * STEP_MS })).toEqual({ calls: [], next: null });
    // Columns that each match many calls but never together.
    expect(await page({ accountId: 'work-01', toolName: 'list_issues' })).toEqual({ calls: [], next: null });
    expect(await page({ decision: 'deny', outcome: 'succeeded' })).toEqual({ calls: [], next: null });
    expect(await page({ serverId: 'files-1a2b', accountId: 'work-03', decision: 'allow' })).toEqual({ calls: [], next: null });
  });

  it('every filter combination the view allows is served by an index holding all its columns: no walk checks a filter column row by row', async () => {
    const { db, nameId } = await service.index.reader();
    // The Activity view's equality filters (its dropdowns, and the conversation a chat opens it
    // on) and the column each is indexed under; time ranges and the page cursor come on top.
    const columns: Array<[keyof CallFilter, string, CallFilter]> = [
      ['serverId', 'server', { serverId: 'files-1a2b' }],
      ['accountId', 'account', { accountId: 'work-01' }],
      ['toolName', 'tool', { toolName: 'read_file' }],
      ['decision', 'decision', { decision: 'deny' }],
      ['outcome', 'state', { outcome: 'succeeded' }],
      ['conversationId', 'conv', { conversationId: 'conv-3' }],
    ];
    const times: CallFilter[] = [{}, { from: START + 100 * STEP_MS }, { to: START + 400 * STEP_MS }, { from: START + 100 * STEP_MS, to: START + 400 * STEP_MS }];
    const after = { time: START + 500 * STEP_MS, n: 1_000_000 };
    let checked = 0;
    for (let mask = 0; mask < 1 << columns.length; mask++) {
      const used = columns.filter((_, i) => mask & (1 << i));
      const base = Object.assign({}, ...used.map(([, , f]) => f)) as CallFilter;
      for (const time of times) {
        for (const a of [null, after]) {
          for (const oldestFirst of [false, true]) {
            const filter = { ...base, ...time };
            const q = (await pageQuery(nameId, filter, { limit: 50, after: a, oldestFirst }))!;
            const plan = (await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${q.sql}`, q.params)).map((r) => r.detail);
            const label = `${JSON.stringify(filter)}${a ? ' after a cursor' : ''}${oldestFirst ? ' oldest first' : ''}: ${plan.join(' | ')}`;
            const onOps = plan.filter((d) => /^(SEARCH|SCAN) (ops|o)\b/.test(d));
            expect(onOps.length, label).toBeGreaterThan(0);
            for (const step of onOps) {
              if (used.length === 0 && time.from === undefined && time.to === undefined && !a) {
                // Nothing to filter: the newest (or oldest) rows, straight off the time index.
                expect(step, label).toMatch(/^SCAN (ops|o) USING (COVERING )?INDEX ops_time\b/);
                continue;
              }
              expect(step, label).toMatch(/^SEARCH (ops|o) USING (COVERING )?INDEX \w+ \(/);
              const served = /\((.*)\)$/.exec(step)![1]!;
              for (const [, column] of used) expect(served, `${label}\n${column} is not in the index walked`).toMatch(new RegExp(`\\b${column}=\\?`));
              if (used.length === 0) expect(served, label).toMatch(/\btime[<>]/);
            }
            expect(plan.join(' | '), label).not.toMatch(/SCAN (ops|o)\b(?! USING)/);
            checked++;
          }
        }
      }
    }
    expect(checked).toBe(64 * 4 * 2 * 2);
  });
});

describe('what a compromised window can send to activity:calls', () => {
  const refused: Array<[string, unknown, RegExp]> = [
    ['a time range that ends before it starts', { filter: { from: 2000, to: 1000 } }, /time range ends before it starts/],
    ['a page of a billion rows', { limit: 1e9 }, /at most 200 rows a page/],
    ['a name longer than anything stored', { filter: { serverId: 'x'.repeat(100_000) } }, /longer than any name Warden stores/],
    ['an empty name', { filter: { toolName: '' } }, /is empty/],
    ['a decision that is not one', { filter: { decision: "allow' OR 1=1 --" } }, /decision/],
    ['an outcome that is not a state', { filter: { outcome: 'succeeded; DROP TABLE ops' } }, /outcome/],
    ['a fractional time', { filter: { from: 1.5 } }, /whole number of milliseconds/],
    ['a time before 1970', { filter: { to: -1 } }, /before 1970/],
    ['a time as text', { filter: { from: '0 OR 1=1' } }, /from/],
    ['a field the filter does not have', { filter: { where: '1=1' } }, /where/],
    ['a cursor with SQL in it', { after: { time: '1) OR (1=1', n: 0 } }, /after/],
    ['a cursor with an extra field', { after: { time: 0, n: 0, sql: 'x' } }, /sql/],
  ];
  for (const [what, request, message] of refused) {
    it(`${what} is refused with a plain error naming the field`, async () => {
      const r = await dispatch(core.handlers, 'activity:calls', request);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error.code).toBe('INVALID_REQUEST');
      expect(r.error.message).toMatch(message);
    });
  }

  it('SQL in a name is only ever a name: it matches nothing and changes nothing', async () => {
    for (const serverId of ["' OR '1'='1", 'x"; DROP TABLE ops; --', 'files-1a2b OR 1=1']) {
      expect(await page({ serverId })).toEqual({ calls: [], next: null });
    }
    expect((await all({}, 200)).length).toBe(CALLS);
  });
});

describe('exporting the filtered Activity rows (activity:export-calls)', () => {
  it('writes exactly the filtered operations, one line each, oldest first, to the file chosen in the save dialog', async () => {
    saveTo = `${savedAs}.jsonl`;
    const r = await dispatch(core.handlers, 'activity:export-calls', { format: 'jsonl', filter: { decision: 'deny' } });
    expect(r).toMatchObject({ ok: true, value: { path: saveTo, rows: CALLS / 20 } });
    const lines = readFileSync(saveTo, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.operationId)).toEqual(expected((i) => i % 20 === 19).reverse());
    expect(lines[0]).toMatchObject({ decision: 'deny', outcome: 'denied', server: 'a removed server', askedBy: expect.stringMatching(/model|Run/) });
    expect(statSync(saveTo).mode & 0o777).toBe(0o600);

    saveTo = `${savedAs}.csv`;
    const csv = await dispatch(core.handlers, 'activity:export-calls', { format: 'csv', filter: { serverId: 'github-3c4d', outcome: 'failed' } });
    expect(csv.ok).toBe(true);
    const rows = readFileSync(saveTo, 'utf8').trim().split('\r\n');
    expect(rows[0]).toMatch(/^requestedAt,what,tool,server,account,askedBy,decision/);
    expect(rows.length - 1).toBe(expected((i) => identityOf(i).serverId === 'github-3c4d' && i % 20 !== 19 && i % 20 !== 17 && i % 7 === 5).length);
  });

  it('a hostile filter is refused before any dialog opens', async () => {
    const r = await dispatch(core.handlers, 'activity:export-calls', { format: 'jsonl', filter: { from: 10, to: 1 } });
    expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
  });
});

describe('exporting a large history', () => {
  it('keeps memory bounded: the live heap grows by a small fraction of the file written', async () => {
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    const big = tempDir('warden-activity-big-');
    try {
      await ensureHistory(big.dir, 30_000, () => undefined);
      const s = await LedgerService.open({ dir: big.dir, verifyInBackground: false });
      const c = createCore({ version: 'test', ledger: s, connections: { reconnect: { maxAttempts: 0 } }, fileDialogs: { openFile: async () => null, saveFile: async () => join(big.dir, 'all.jsonl') } });
      try {
        await c.recovered;
        gc();
        const before = process.memoryUsage().heapUsed;
        let peak = before;
        // What is live, not garbage not yet collected: collect, then read, while the export runs.
        const sampler = setInterval(() => {
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        }, 300);
        const r = await dispatch(c.handlers, 'activity:export-calls', { format: 'jsonl', filter: {} });
        clearInterval(sampler);
        expect(r).toMatchObject({ ok: true, value: { rows: 30_000 } });
        const fileMb = statSync(join(big.dir, 'all.jsonl')).size / 1e6;
        const grownMb = (peak - before) / 1e6;
        expect(fileMb).toBeGreaterThan(25);
        // One page of 100 calls is about 0.1 MB of text and its folded records a few times that;
        // holding the export would hold all of it (and more as parsed objects).
        expect(grownMb, `live heap grew ${grownMb.toFixed(1)} MB writing ${fileMb.toFixed(1)} MB`).toBeLessThan(fileMb / 4);
      } finally {
        await c.close();
        await s.close();
      }
    } finally {
      big.cleanup();
    }
  }, 300_000);
});
