import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { journalEntry, type DecisionRecord } from '../../../shared/domain/journal-events';
import { activityChannels } from '../../../shared/contract/activity';
import { LedgerService } from '../../../electron/core/ledger/service';
import { LedgerProjections } from '../../../electron/core/ledger/projections';
import { Ledger, segmentName } from '../../../electron/core/ledger/ledger';
import { auditToCsv, auditToJsonl, csvCell } from '../../../electron/core/ledger/export';
import { activityHandlers } from '../../../electron/core/ledger/activity-handlers';
import { Redactor } from '../../../electron/core/redact/redactor';
import type { JournalEntry } from '../../../electron/core/ports';
import { projectionsOf, recordsOf, steppingClock, tempDir } from './helpers';

const cleanups: Array<() => void> = [];
const services: LedgerService[] = [];
afterEach(async () => {
  while (services.length) await services.pop()!.close();
  while (cleanups.length) cleanups.pop()!();
});
async function openService(dir?: string, extra: Partial<Parameters<typeof LedgerService.open>[0]> = {}): Promise<{ service: LedgerService; dir: string }> {
  let d = dir;
  if (!d) {
    const t = tempDir();
    cleanups.push(t.cleanup);
    d = t.dir;
  }
  const service = await LedgerService.open({ dir: d, clock: steppingClock(), ...extra });
  services.push(service);
  return { service, dir: d };
}

const allow: DecisionRecord = { decision: 'allow', reason: 'Always allowed for Work', layer: 'user', ruleId: 'r-allow', configErrors: [] };
const ask: DecisionRecord = { decision: 'ask', reason: 'Asks by default', layer: 'default', ruleId: null, configErrors: [] };
const deny: DecisionRecord = { decision: 'deny', reason: 'Disabled by organization policy', layer: 'organization', ruleId: 'org-1', configErrors: [] };

function proposed(id: string, opts: { server?: string; account?: string; tool?: string; conv?: string | null; args?: Record<string, unknown> } = {}): JournalEntry {
  const args = opts.args ?? { path: `/p/${id}` };
  return journalEntry('op.proposed', {
    operationId: id,
    origin: { source: 'model', conversationId: opts.conv === undefined ? 'c1' : opts.conv, round: 1, batchId: null },
    identity: { serverId: opts.server ?? 'github', accountId: opts.account ?? 'work', toolName: opts.tool ?? 'close_issue', endpointHash: 'e'.repeat(64), contractHash: 'c'.repeat(64) },
    arguments: args,
    canonicalArguments: JSON.stringify(args),
    fingerprint: `fp-${id}`,
    requestedAt: 1,
  });
}
function tr(id: string, from: string, to: string, extra: Record<string, unknown> = {}): JournalEntry {
  return journalEntry('op.transition', { operationId: id, from, to, reason: `${from}→${to}`, ...extra } as never);
}

/** A workload covering every kind of outcome. */
async function workload(service: LedgerService): Promise<void> {
  const l = service.ledger;
  // Always Allow: approved + executing in one durable append, then success.
  await l.append([proposed('a1'), tr('a1', 'proposed', 'approved', { decision: allow, actor: 'policy', fingerprint: 'fp-a1' }), tr('a1', 'approved', 'executing', { fingerprint: 'fp-a1' })], { durable: true });
  await l.append([tr('a1', 'executing', 'succeeded', { result: { isError: false, content: [{ type: 'text', text: 'closed' }] } })]);
  // Asked, approved by the user, executing at the "crash".
  await l.append([proposed('b1', { server: 'jira', tool: 'create_ticket', conv: 'c2' }), tr('b1', 'proposed', 'awaiting_approval', { decision: ask, actor: 'policy', expiresAt: 999 })]);
  await l.append([tr('b1', 'awaiting_approval', 'approved', { decision: ask, actor: 'user', fingerprint: 'fp-b1' }), tr('b1', 'approved', 'executing', { fingerprint: 'fp-b1' })], { durable: true });
  // Denied.
  await l.append([proposed('d1', { account: 'personal' }), tr('d1', 'proposed', 'denied', { decision: deny, actor: 'policy' })]);
  // Pending approval.
  await l.append([proposed('p1', { tool: 'delete_repo', args: { repo: '=HYPERLINK("http://evil")' } }), tr('p1', 'proposed', 'awaiting_approval', { decision: ask, actor: 'policy', expiresAt: 5_000 })]);
  // Approved but not yet executing.
  await l.append([proposed('q1'), tr('q1', 'proposed', 'approved', { decision: allow, actor: 'policy' })]);
  // A policy change, for the audit view.
  await l.append([
    journalEntry('policy.changed', {
      ruleId: 'r-allow',
      scope: { kind: 'tool', serverId: 'github', accountId: 'work', toolName: 'close_issue', conversationId: null },
      old: null,
      new: { mode: 'allow' },
      source: 'user',
      at: 5,
    }),
  ]);
}

describe('ledger projections', () => {
  it('the operations table answers by id, by state and by conversation, and the approval queue holds what awaits approval', async () => {
    const { service } = await openService();
    await workload(service);
    const p = projectionsOf(service);
    expect(await p.operation('a1')).toMatchObject({ state: 'succeeded', reachedExecuting: true, resultIsError: false, serverId: 'github', decision: { decision: 'allow', ruleId: 'r-allow' } });
    expect((await p.operations({ state: 'executing' })).map((o) => o.operationId)).toEqual(['b1']);
    expect((await p.operations({ conversationId: 'c2' })).map((o) => o.operationId)).toEqual(['b1']);
    expect((await p.pendingApprovals()).map((o) => o.operationId)).toEqual(['p1']);
    expect((await p.pendingApprovals())[0]!.expiresAt).toBe(5_000);
    expect((await p.operation('d1'))!.state).toBe('denied');
  });

  it('the audit view filters by server, account, tool, decision and time', async () => {
    const { service } = await openService();
    await workload(service);
    const p = projectionsOf(service);
    const all = await p.audit();
    expect(all.length).toBeGreaterThan(10);
    // The index answers exactly what the in-memory fold of every record answers.
    expect(all).toEqual(LedgerProjections.fromRecords(await recordsOf(service.ledger)).audit());
    expect(new Set((await p.audit({ serverId: 'jira' })).map((r) => r.operationId))).toEqual(new Set(['b1']));
    expect(new Set((await p.audit({ accountId: 'personal' })).map((r) => r.operationId))).toEqual(new Set(['d1']));
    expect(new Set((await p.audit({ toolName: 'delete_repo' })).map((r) => r.operationId))).toEqual(new Set(['p1']));
    expect((await p.audit({ decision: 'deny' })).map((r) => [r.operationId, r.to])).toEqual([['d1', 'denied']]);
    const policyRows = await p.audit({ types: ['policy.changed'] });
    expect(policyRows).toHaveLength(1);
    expect(policyRows[0]).toMatchObject({ serverId: 'github', toolName: 'close_issue', actor: 'user' });
    // In words, not the rule's id: the row already names the server, account and tool.
    expect(policyRows[0]!.reason).toBe('Rule for this tool set to Always Allow');
    const middle = all[Math.floor(all.length / 2)]!.time;
    const later = await p.audit({ from: middle });
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((r) => r.time >= middle)).toBe(true);
    expect((await p.audit({ to: middle })).every((r) => r.time <= middle)).toBe(true);
    expect((await p.audit({ from: middle })).length + (await p.audit({ to: middle - 1 })).length).toBe(all.length);
    expect((await p.audit({ toolName: 'close_issue', from: middle })).every((r) => r.toolName === 'close_issue' && r.time >= middle)).toBe(true);
  });

  it('history answers "why did this run?": decision at request time, approval, fingerprint, outcome', async () => {
    const { service } = await openService();
    await workload(service);
    const h = (await projectionsOf(service).history('a1'))!;
    expect(h.decisionAtRequest).toMatchObject({ decision: 'allow', ruleId: 'r-allow', layer: 'user' });
    expect(h.approval).toMatchObject({ by: 'policy (Always Allow)', fingerprint: 'fp-a1' });
    expect(h.executing).toMatchObject({ fingerprint: 'fp-a1' });
    expect(h.outcome).toMatchObject({ state: 'succeeded', resultIsError: false });
    expect(h.events.map((e) => e.to)).toEqual(['proposed', 'approved', 'executing', 'succeeded']);
    const b = (await projectionsOf(service).history('b1'))!;
    expect(b.decisionAtRequest?.decision).toBe('ask');
    expect(b.approval?.by).toBe('you');
    expect(activityChannels['activity:history'].response.safeParse(h).success).toBe(true);
  });

  it('recovery after a crash: executing becomes outcome_unknown (durably journaled), approved-not-sent is cancelled, nothing is re-sent', async () => {
    const { service, dir } = await openService();
    await workload(service);
    await service.close();
    services.pop();
    const { service: again } = await openService(dir);
    const restored: string[][] = [];
    const report = await again.recoverOperations({ restore: async (ops) => void restored.push(ops.map((o) => `${o.proposed.operationId}:${o.state}`)) });
    expect(report.outcomeUnknown).toEqual(['b1']);
    expect(report.cancelled).toEqual(['q1']);
    expect(report.requeued).toEqual(['p1']);
    expect((await projectionsOf(again).operation('b1'))).toMatchObject({ state: 'outcome_unknown', error: { code: 'OUTCOME_UNKNOWN' } });
    // The gate is handed only the approvals still pending; every other id is answered by the history.
    expect(restored[0]).toEqual(['p1:awaiting_approval']);
    expect((await again.history.find('a1'))?.state).toBe('succeeded');
    expect((await again.history.find('q1'))?.state).toBe('cancelled');
    await again.close();
    services.pop();
    // It is on disk: a third start sees it without doing anything.
    const { service: third } = await openService(dir);
    expect((await projectionsOf(third).operation('b1'))!.state).toBe('outcome_unknown');
    expect((await projectionsOf(third).operations({ state: 'executing' }))).toEqual([]);
  });

  it('the cancel-pending-on-restart setting cancels approvals that were waiting at the crash', async () => {
    const { service, dir } = await openService();
    await workload(service);
    await service.close();
    services.pop();
    const { service: again } = await openService(dir, { cancelPendingOnRestart: true });
    const report = await again.recoverOperations();
    expect(report.cancelled).toContain('p1');
    expect(report.requeued).toEqual([]);
    expect((await projectionsOf(again).pendingApprovals())).toEqual([]);
    expect((await projectionsOf(again).operation('p1'))!.reason).toMatch(/setting/);
  });

  it('reconciliation records who and why, happens once, and a retry is a new operation with its own decision', async () => {
    const { service } = await openService();
    await workload(service);
    await service.recoverOperations();
    await expect(service.reconcile({ operationId: 'a1', outcome: 'failed', reason: 'x', by: 'user' })).rejects.toThrow(/not an unreconciled outcome_unknown/);
    const done = await service.reconcile({ operationId: 'b1', outcome: 'succeeded', reason: 'ticket JIRA-7 exists', by: 'user' });
    expect(done.operation).toMatchObject({ state: 'succeeded', reconciled: { by: 'user', reason: 'ticket JIRA-7 exists', outcome: 'succeeded' } });
    await expect(service.reconcile({ operationId: 'b1', outcome: 'failed', reason: 'again', by: 'user' })).rejects.toThrow(/already reconciled|not an unreconciled/);
    expect((await projectionsOf(service).unreconciled())).toEqual([]);
    expect((await projectionsOf(service).audit({ operationId: 'b1' })).at(-1)!.reason).toMatch(/Reconciled as succeeded by user: ticket JIRA-7 exists/);

    // A second crash victim, retried: the gate gets a NEW submit with the stored arguments.
    await service.ledger.append([proposed('r1', { args: { n: 1 } }), tr('r1', 'proposed', 'approved', { decision: allow, actor: 'policy' }), tr('r1', 'approved', 'executing')], { durable: true });
    await service.recoverOperations();
    const submitted: unknown[] = [];
    const gate = {
      submit: async (req: unknown) => {
        submitted.push(req);
        await service.ledger.append([proposed('r2', { args: { n: 1 } }), tr('r2', 'proposed', 'awaiting_approval', { decision: ask, actor: 'policy' })]);
        return { operationId: 'r2' };
      },
    };
    const retried = await service.reconcile({ operationId: 'r1', outcome: 'retry', reason: 'server was down', by: 'user' }, gate);
    expect(retried.retryOperationId).toBe('r2');
    expect(submitted).toEqual([{ source: 'user', conversationId: 'c1', serverId: 'github', accountId: 'work', toolName: 'close_issue', arguments: { n: 1 } }]);
    expect((await projectionsOf(service).operation('r1'))).toMatchObject({ state: 'outcome_unknown', reconciled: { outcome: 'retried', retryOperationId: 'r2' } });
    expect((await projectionsOf(service).operation('r2'))).toMatchObject({ state: 'awaiting_approval', retryOf: 'r1' });
  });

  it('recovering the same bytes twice yields the same projections', async () => {
    const { service, dir } = await openService();
    await workload(service);
    await service.close();
    services.pop();
    const t = tempDir();
    cleanups.push(t.cleanup);
    for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(t.dir, name));
    const { service: a } = await openService(dir);
    const { service: b } = await openService(t.dir);
    expect((await projectionsOf(b).audit())).toEqual((await projectionsOf(a).audit()));
    expect((await projectionsOf(b).operations())).toEqual((await projectionsOf(a).operations()));
    expect(LedgerProjections.fromRecords(await recordsOf(a.ledger)).audit()).toEqual((await projectionsOf(a).audit()));
  });

  it('property: projections kept current while appending equal projections rebuilt from the reopened log', async () => {
    const step = fc.record({ op: fc.integer({ min: 0, max: 5 }), action: fc.constantFrom('propose', 'ask', 'approve', 'execute', 'succeed', 'fail', 'deny', 'policy') });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const { service, dir } = await openService();
        const state = new Map<string, string>();
        for (const { op, action } of steps) {
          const id = `o${op}`;
          const cur = state.get(id);
          const next: Record<string, [string, string, Record<string, unknown>] | null> = {
            ask: cur === 'proposed' ? ['proposed', 'awaiting_approval', { decision: ask, actor: 'policy' }] : null,
            approve: cur === 'awaiting_approval' ? ['awaiting_approval', 'approved', { decision: ask, actor: 'user' }] : null,
            execute: cur === 'approved' ? ['approved', 'executing', {}] : null,
            succeed: cur === 'executing' ? ['executing', 'succeeded', { result: { isError: false, content: [] } }] : null,
            fail: cur === 'executing' ? ['executing', 'failed', { error: { code: 'x', message: 'y' } }] : null,
            deny: cur === 'proposed' ? ['proposed', 'denied', { decision: deny, actor: 'policy' }] : null,
          };
          if (action === 'propose' && cur === undefined) {
            await service.ledger.append([proposed(id, { conv: op % 2 ? 'c1' : null })]);
            state.set(id, 'proposed');
          } else if (action === 'policy') {
            await service.ledger.append([journalEntry('policy.changed', { ruleId: `r${op}`, scope: { kind: 'global' }, old: null, new: { mode: 'ask' }, source: 'user', at: op })]);
          } else if (next[action]) {
            const [from, to, extra] = next[action]!;
            await service.ledger.append([tr(id, from, to, extra)], { durable: op % 3 === 0 });
            state.set(id, to);
          }
        }
        const p = projectionsOf(service);
        const byId = <T extends { operationId: string }>(xs: T[]): T[] => [...xs].sort((x, y) => (x.operationId < y.operationId ? -1 : 1));
        const live = { ops: byId(await p.operations()), audit: await p.audit(), pending: byId(await p.pendingApprovals()) };
        // The index answers what the in-memory fold of every record answers.
        const oracle = LedgerProjections.fromRecords(await recordsOf(service.ledger));
        expect(live).toEqual({ ops: byId(oracle.operations()), audit: oracle.audit(), pending: byId(oracle.pendingApprovals()) });
        await service.close();
        services.pop();
        // Reopened with its index, and with the index deleted (a rebuild from the segments).
        for (const rebuild of [false, true]) {
          if (rebuild) for (const f of readdirSync(dir).filter((n) => n.startsWith('index.sqlite'))) rmSync(join(dir, f));
          const { service: again } = await openService(dir);
          const q = projectionsOf(again);
          expect({ ops: byId(await q.operations()), audit: await q.audit(), pending: byId(await q.pendingApprovals()) }).toEqual(live);
          expect(byId(await q.operations()).map((o) => [o.operationId, o.state])).toEqual([...state.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
          await again.close();
          services.pop();
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('after many rotations every operation stays in history, and a reopen reads only what the index does not have', async () => {
    const { service, dir } = await openService(undefined, { rotateBytes: 3_000 });
    for (let i = 0; i < 40; i++) {
      await service.ledger.append([proposed(`op${i}`), tr(`op${i}`, 'proposed', 'denied', { decision: deny, actor: 'policy' })], { durable: true });
    }
    expect(service.ledger.stats.rotations).toBeGreaterThan(2);
    await service.close();
    services.pop();
    const { service: again } = await openService(dir);
    expect(again.ledger.recovery.records).toBe(again.ledger.size());
    expect(await projectionsOf(again).operationCount()).toBe(40);
    expect((await projectionsOf(again).operation('op0'))!.state).toBe('denied');
    // Nothing was read at open: the index had everything.
    expect(again.index.position?.seq).toBe(again.ledger.size());
  });

  it('a checkpoint carries no state: its size does not grow with the number of finished operations', async () => {
    const { service, dir } = await openService(undefined, { rotateBytes: 2_000 });
    for (let i = 0; i < 60; i++) await service.ledger.append([proposed(`c${i}`), tr(`c${i}`, 'proposed', 'denied', { decision: deny, actor: 'policy' })]);
    await service.ledger.flush();
    const firsts = service.ledger.segments().slice(1).map((name) => readFileSync(join(dir, name), 'utf8').split('\n')[0]!.length);
    expect(firsts.length).toBeGreaterThan(3);
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeLessThanOrEqual(2);
  });

  it('start-up checks what the index does not have; a change to indexed records is found by the full verification, and without an index by start-up itself', async () => {
    const { service, dir } = await openService(undefined, { verifyInBackground: false });
    for (let i = 0; i < 6; i++) await service.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    await service.close();
    services.pop();
    // Records the index never saw (written by a ledger opened without it), one of them changed.
    const bare = await Ledger.open({ dir });
    for (let i = 6; i < 9; i++) await bare.append([{ type: 'note', payload: { i } }], { durable: true });
    await bare.close();
    const seg = join(dir, segmentName(1));
    const flip = (needle: string, to: string): void => {
      const bytes = readFileSync(seg);
      bytes[bytes.indexOf(needle) + needle.length - 1] = to.charCodeAt(0);
      writeFileSync(seg, bytes);
    };
    flip('"i":7', '4');
    const a = (await openService(dir, { verifyInBackground: false })).service;
    expect(a.ledger.safeMode).toBe(true); // found at start: it was after the index's position
    await a.close();
    services.pop();
    // The next start is in safe mode at once too, though it does not read those records again.
    const a2 = (await openService(dir, { verifyInBackground: false })).service;
    expect(a2.ledger.safeMode).toBe(true);
    await a2.close();
    services.pop();
    // Acknowledge it, then change a record the index already holds.
    const b = (await openService(dir, { verifyInBackground: false })).service;
    await b.acknowledgeSafeMode('user', 'seen');
    await b.close();
    services.pop();
    flip('"i":2', '5');
    const c = (await openService(dir, { verifyInBackground: false })).service;
    expect(c.ledger.safeMode).toBe(false); // start-up did not read those records again
    expect(await c.verify()).toMatchObject({ safeMode: true });
    expect(c.ledger.safeMode).toBe(true);
    expect(c.ledger.recovery.breaks.filter((x) => !x.acknowledged).map((x) => x.problem)).toEqual(['checksum']);
    await c.close();
    services.pop();
    // Without an index, start-up reads every segment and finds it itself.
    for (const f of readdirSync(dir).filter((n) => n.startsWith('index.sqlite'))) rmSync(join(dir, f));
    const d = (await openService(dir, { verifyInBackground: false })).service;
    expect(d.ledger.safeMode).toBe(true);
    expect(d.ledger.recovery.breaks.map((x) => x.acknowledged).sort()).toEqual([false, true]);
  });

  it('more distinct names than the index keeps in memory (conversations) never lose a row', async () => {
    const { service } = await openService(undefined, { verifyInBackground: false });
    for (let i = 0; i < 12_000; i++) void service.ledger.append([proposed(`n${i}`, { conv: `conversation-${i}` }), tr(`n${i}`, 'proposed', 'denied', { decision: deny, actor: 'policy' })]);
    await service.ledger.flush();
    expect(await service.history.operationCount()).toBe(12_000);
    expect((await service.history.audit({ conversationId: 'conversation-7' }, { limit: 10, offset: 0 })).rows).toHaveLength(2);
    expect((await service.history.audit({}, { limit: 1, offset: 0 })).total).toBeGreaterThan(1000);
  }, 60_000);

  it('the contract handlers serve audit pages, export, operations and status within the contract', async () => {
    const redactor = new Redactor();
    const { service } = await openService(undefined, { redactor });
    await workload(service);
    const saved = join(tempDir().dir, 'audit.csv');
    const h = activityHandlers({ service, history: service.history, fileDialogs: { openFile: async () => null, saveFile: async () => saved } });
    const page = await h['activity:audit'](activityChannels['activity:audit'].request.parse({ filter: { serverId: 'github' }, limit: 3 }));
    expect(page.rows).toHaveLength(3);
    expect(page.rows[0]!.seq).toBeGreaterThan(page.rows[2]!.seq);
    expect(activityChannels['activity:audit'].response.safeParse(page).success).toBe(true);
    const csv = await h['activity:export']({ format: 'csv', filter: {} });
    expect(activityChannels['activity:export'].response.safeParse(csv).success).toBe(true);
    expect(csv).toMatchObject({ path: saved, rows: (await projectionsOf(service).audit()).length });
    expect(readFileSync(saved, 'utf8').split('\r\n').filter(Boolean)).toHaveLength(csv.rows + 1);
    const status = await h['ledger:status']({});
    expect(activityChannels['ledger:status'].response.safeParse(status).success).toBe(true);
    const ops = await h['activity:operations']({ state: 'awaiting_approval', limit: 200, offset: 0 });
    expect(ops.operations.map((o) => o.operationId)).toEqual(['p1']);
    await expect(h['activity:history']({ operationId: 'nope' })).rejects.toThrow(/no operation/);
  });
});

describe('audit export', () => {
  it('CSV quotes commas, quotes and line breaks and neutralizes formula cells', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    for (const f of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(csvCell(f).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(42)).toBe('42');
  });

  it('exports round-trip: JSONL parses back to the rows, CSV has one record per row with no live formula', async () => {
    const { service } = await openService();
    await workload(service);
    const rows = (await projectionsOf(service).audit());
    const jsonl = auditToJsonl(rows).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(jsonl.map((r) => r.seq)).toEqual(rows.map((r) => r.seq));
    expect(jsonl[0]).toMatchObject({ operationId: rows[0]!.operationId, arguments: rows[0]!.arguments });
    // Hostile text from a model/server in a reason and a conversation id.
    const hostile = [...rows, { ...rows[0]!, seq: 999, reason: '=cmd|"/c calc"!A1', conversationId: '@SUM(1+1)*cmd', toolName: '-2+3' }];
    const csv = auditToCsv(hostile);
    const records = parseCsv(csv);
    const last = records.at(-1)!;
    const header = records[0]!;
    expect(last[header.indexOf('reason')]).toBe(`'=cmd|"/c calc"!A1`);
    expect(last[header.indexOf('conversationId')]).toBe(`'@SUM(1+1)*cmd`);
    expect(last[header.indexOf('toolName')]).toBe(`'-2+3`);
    expect(records).toHaveLength(hostile.length + 1);
    for (const rec of records) for (const cell of rec) expect(/^[=+\-@\t\r]/.test(cell)).toBe(false);
    const argsCol = records[0]!.indexOf('arguments');
    const p1 = records.find((r) => r.includes('p1'))!;
    expect(p1[argsCol]).toBe(rows.find((r) => r.operationId === 'p1')!.arguments);
  });
});

/** A strict RFC 4180 parser, so the test reads the CSV the way a spreadsheet would. */
function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      out.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return out;
}
