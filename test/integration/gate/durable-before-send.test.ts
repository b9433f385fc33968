/**
 * The gate's send path under a journal that holds, fails or throws: a call leaves only after the
 * append holding its `executing` record resolved, never twice for one id, never after that append
 * failed; every request()/settled() waiter wakes with a terminal state; nothing is left as an
 * unhandled rejection. Written as an attacker-side review of the admit/prepareSend/proceed
 * restructure. Real MCP servers over the SDK's InMemoryTransport; journals wrap the fixture's.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Gate } from '../../../electron/core/gate/gate';
import type { ToolExecutor } from '../../../electron/core/gate/ports';
import type { Journal, JournalEntry } from '../../../electron/core/ports';
import { gateFixture, gateOver, type GateFixture, gateCall, until } from './harness';
import { recordedIn } from './harness';

let fx: GateFixture | undefined;
let gates: Gate[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterEach(async () => {
  for (const g of gates) g.close();
  gates = [];
  await fx?.close();
  fx = undefined;
  // Let any stray rejection surface before the next test.
  await new Promise((r) => setTimeout(r, 10));
  const seen = unhandled.splice(0);
  expect(seen).toEqual([]);
});

const call = gateCall;

/** A journal over the fixture's whose append is replaced (prototype kept, so ordersOnCall stays as the fixture's). */
function wrapJournal(f: GateFixture, append: (entries: JournalEntry[], options: { durable?: boolean } | undefined, inner: Journal) => Promise<unknown>, extra: Partial<Journal> = {}): Journal {
  const inner = f.journal;
  return Object.assign(Object.create(Object.getPrototypeOf(inner)) as Journal, inner, extra, {
    append: (entries: JournalEntry[], options?: { durable?: boolean }) => append(entries, options, inner),
  }) as Journal;
}

/** A gate over the fixture with this journal, closed after the test. */
function trackedGate(f: GateFixture, journal: Journal, over: Partial<ConstructorParameters<typeof Gate>[0]> = {}): Gate {
  const g = gateOver(f, { journal, ...over });
  gates.push(g);
  return g;
}

/** A deferred promise. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('Gate send path: executing durable before the call leaves, one call per id, every waiter woken', () => {
  for (const ordersOnCall of [false, true]) {
    it(`request(): a rejected executing append sends nothing, ends failed, journals the whole story (ordersOnCall=${ordersOnCall})`, async () => {
      fx = await gateFixture();
      fx.allow('close_issue');
      const hold = deferred();
      const journal = wrapJournal(
        fx,
        async (entries, options, inner) => {
          if (options?.durable) {
            await hold.promise;
            throw new Error('fsync failed');
          }
          return inner.append(entries, options);
        },
        { ordersOnCall } as Partial<Journal>,
      );
      const gate = trackedGate(fx, journal);
      const p = gate.request(call({ operationId: 'X' }));
      const again = gate.request(call({ operationId: 'X' }));
      const waiter = gate.settled('X');
      await new Promise((r) => setTimeout(r, 20));
      expect(fx.mcp.count()).toBe(0);
      expect((await gate.get('X'))?.state).toBe('executing');
      hold.resolve();
      const [a, b, c] = await Promise.all([p, again, waiter]);
      for (const s of [a, b, c]) expect(s.state).toBe('failed');
      expect(a.error?.code).toBe('JOURNAL_FAILED');
      await new Promise((r) => setTimeout(r, 20));
      expect(fx.mcp.count()).toBe(0);
      expect(fx.registry.sent).toBe(0);
      expect(fx.journal.transitions('X')).toEqual(['proposed→approved', 'approved→executing', 'executing→failed']);
      // A later resubmission is still never a call.
      expect((await gate.request(call({ operationId: 'X' }))).state).toBe('failed');
      expect(fx.mcp.count()).toBe(0);
    });
  }

  it('approve(): a rejected executing append wakes a request() and settled() waiting on the ask id, sends nothing', async () => {
    fx = await gateFixture();
    const journal = wrapJournal(fx, async (entries, options, inner) => {
      if (options?.durable) throw new Error('disk full');
      return inner.append(entries, options);
    });
    const gate = trackedGate(fx, journal);
    const first = gate.request(call({ operationId: 'A' }));
    await until(async () => (await gate.get('A'))?.state === 'awaiting_approval', 'pending');
    const second = gate.request(call({ operationId: 'A' }));
    const waiter = gate.settled('A');
    const approved = await gate.approve('A');
    expect(approved.state).toBe('failed');
    const [a, b, c] = await Promise.all([first, second, waiter]);
    for (const s of [a, b, c]) expect(s.state).toBe('failed');
    expect(fx.mcp.count()).toBe(0);
    expect(fx.journal.transitions('A')).toEqual(['proposed→awaiting_approval', 'awaiting_approval→approved', 'approved→executing', 'executing→failed']);
    await expect(gate.approve('A')).rejects.toThrow(/cannot be approved/);
  });

  it('nothing leaves before the executing append resolves; duplicates while it is held make no second call', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const hold = deferred();
    fx.journal.gate = hold.promise;
    const p1 = fx.gate.request(call({ operationId: 'D' }));
    const s1 = fx.gate.submit(call({ operationId: 'D' }));
    const p2 = fx.gate.request(call({ operationId: 'D' }));
    expect((await s1).state).toBe('executing');
    await new Promise((r) => setTimeout(r, 30));
    expect(fx.mcp.count()).toBe(0);
    hold.resolve();
    const [a, b] = await Promise.all([p1, p2]);
    expect(a.state).toBe('succeeded');
    expect(b.state).toBe('succeeded');
    expect(fx.mcp.count()).toBe(1);
    expect((await fx.gate.request(call({ operationId: 'D' }))).state).toBe('succeeded');
    expect(fx.mcp.count()).toBe(1);
  });

  it('cancel and revocation while the executing append is held: not sent, every waiter woken', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const hold = deferred();
    fx.journal.gate = hold.promise;
    const c = fx.gate.request(call({ operationId: 'C' }));
    const r = fx.gate.request(call({ operationId: 'R', arguments: { text: 'other' } }));
    await until(async () => (await fx!.gate.get('R'))?.state === 'executing', 'executing');
    await fx.gate.cancel('C');
    fx.policy.set({ user: [] });
    await fx.gate.revalidate('revoked');
    hold.resolve();
    const [cs, rs] = await Promise.all([c, r]);
    expect(cs.state).toBe('failed');
    expect(rs.state).toBe('failed');
    expect(rs.reason).toMatch(/Not sent: Permission revoked/);
    expect(fx.mcp.count()).toBe(0);
  });

  it('request() and settled() for ask ids wake on every ending: reject, expiry, revocation, invalidation, cancel, approval', async () => {
    fx = await gateFixture();
    const ids = ['rej', 'deny', 'inv', 'can', 'ok'];
    const reqs = ids.map((id) => fx!.gate.request(call({ operationId: id, arguments: { text: id }, toolName: id === 'inv' ? 'read_file' : 'close_issue' })));
    await until(async () => (await Promise.all(ids.map((id) => fx!.gate.get(id)))).every((op) => op?.state === 'awaiting_approval'), 'all pending');
    const waits = ids.map((id) => fx!.gate.settled(id));
    const dupes = ids.map((id) => fx!.gate.request(call({ operationId: id })));
    await fx.gate.reject('rej');
    await fx.gate.cancel('can');
    await fx.gate.approve('ok');
    expect((await fx.gate.settled('ok')).state).toBe('succeeded');
    fx.policy.set({ user: [{ id: 'off', scope: { kind: 'tool', serverId: 'gh', accountId: null, toolName: 'close_issue' }, mode: 'disabled', pin: null }] });
    await fx.gate.revalidate('policy changed');
    fx.mcp.tools.get('read_file')!.update({ description: 'changed' });
    await fx.registry.refresh();
    await until(async () => (await fx!.gate.get('inv'))?.state === 'invalidated', 'invalidated');
    const all = await Promise.all([...reqs, ...waits, ...dupes]);
    for (const s of all) expect(['rejected', 'denied', 'invalidated', 'cancelled', 'succeeded']).toContain(s.state);
    expect(fx.mcp.count()).toBe(1);

    // Expiry: a fresh pending op.
    fx.policy.set({ user: [] });
    const e = fx.gate.request(call({ operationId: 'exp2', arguments: { text: 'e' } }));
    await until(async () => (await fx!.gate.get('exp2'))?.state === 'awaiting_approval', 'pending');
    const ew = fx.gate.settled('exp2');
    fx.clock.advance(11 * 60 * 1000);
    await fx.gate.sweepExpired();
    expect((await e).state).toBe('expired');
    expect((await ew).state).toBe('expired');
  });

  it('restored approvals: settled() wakes when they expire after restore, and a dropped id is recalled without a call', async () => {
    fx = await gateFixture();
    const p = await fx.gate.submit(call({ operationId: 'W' }));
    expect(p.state).toBe('awaiting_approval');
    const gate2 = trackedGate(fx, fx.journal);
    await gate2.restore(await recordedIn(fx.journal));
    const req = gate2.request(call({ operationId: 'W' }));
    const w = gate2.settled('W');
    fx.clock.advance(11 * 60 * 1000);
    await gate2.sweepExpired();
    expect((await req).state).toBe('expired');
    expect((await w).state).toBe('expired');
    // Finished and dropped from the gate: the history answers with its outcome, never a call.
    expect((await gate2.request(call({ operationId: 'W' }))).state).toBe('expired');
    expect(fx.mcp.count()).toBe(0);
  });

  it('concurrent approve/approve, approve/reject, approve/cancel: one winner, at most one call', async () => {
    fx = await gateFixture();
    for (const id of ['aa', 'ar', 'ac']) await fx.gate.submit(call({ operationId: id, arguments: { text: id } }));
    const aa = await Promise.allSettled([fx.gate.approve('aa'), fx.gate.approve('aa')]);
    expect(aa.filter((r) => r.status === 'rejected')).toHaveLength(1);
    const ar = await Promise.allSettled([fx.gate.approve('ar'), fx.gate.reject('ar')]);
    expect(ar[1].status).toBe('rejected');
    const ac = await Promise.allSettled([fx.gate.approve('ac'), fx.gate.cancel('ac')]);
    expect(ac.every((r) => r.status === 'fulfilled')).toBe(true);
    for (const id of ['aa', 'ar', 'ac']) await fx.gate.settled(id);
    // ac: cancelled while executing (before or after the send): never two calls.
    expect(fx.mcp.count('close_issue')).toBeLessThanOrEqual(3);
    expect(fx.mcp.received.filter((c) => c.args.text === 'aa')).toHaveLength(1);
    expect(fx.mcp.received.filter((c) => c.args.text === 'ar')).toHaveLength(1);
    expect(fx.mcp.received.filter((c) => c.args.text === 'ac').length).toBeLessThanOrEqual(1);
  });

  it('an approval request the journal refused to record is cancelled: the caller gets the error, and it can never be approved and sent', async () => {
    fx = await gateFixture();
    const journal = wrapJournal(fx, async (entries, options, inner) => {
      if (!options?.durable && entries.some((e) => e.type === 'op.proposed')) throw new Error('ledger closed');
      return inner.append(entries, options);
    });
    const gate = trackedGate(fx, journal);
    await expect(gate.submit(call({ operationId: 'S' }))).rejects.toThrow(/ledger closed/);
    await expect(gate.request(call({ operationId: 'Q', arguments: { text: 'q' } }))).rejects.toThrow(/ledger closed/);
    for (const id of ['S', 'Q']) {
      // Nothing of it was recorded, and the gate let go of it: there is nothing to approve.
      expect(await gate.get(id)).toBeUndefined();
      await expect(gate.approve(id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    expect(gate.pending()).toEqual([]);
    expect(fx.mcp.count()).toBe(0);
  });

  it('a journal that throws synchronously on the durable append (ordersOnCall): not sent, failed, no unhandled rejection', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const inner = fx.journal;
    const journal = Object.assign(Object.create(Object.getPrototypeOf(inner)) as Journal, inner, {
      ordersOnCall: true,
      append: (entries: JournalEntry[], options?: { durable?: boolean }) => {
        if (options?.durable) throw new Error('sync boom');
        return inner.append(entries, options);
      },
    }) as Journal;
    const gate = trackedGate(fx, journal);
    const viaRequest = await gate.request(call({ operationId: 'T1' }));
    const viaSubmit = await gate.submit(call({ operationId: 'T2', arguments: { text: 't2' } }));
    expect(viaRequest.state).toBe('failed');
    expect(viaSubmit.state).toBe('failed');
    expect(fx.mcp.count()).toBe(0);
  });
});


type RCmd =
  | { kind: 'request'; dup: number | null; via: 'request' | 'submit' }
  | { kind: 'approve' | 'reject' | 'cancel' | 'settled'; pick: number }
  | { kind: 'flush'; fail: boolean }
  | { kind: 'policy'; mode: 'allow' | 'ask' | 'disabled' }
  | { kind: 'expire' };

const rcmd: fc.Arbitrary<RCmd> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('request' as const), dup: fc.option(fc.nat(20), { nil: null }), via: fc.constantFrom('request' as const, 'submit' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('approve' as const, 'reject' as const, 'cancel' as const, 'settled' as const), pick: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('flush' as const), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('policy' as const), mode: fc.constantFrom('allow' as const, 'ask' as const, 'disabled' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
);

describe('Gate send path under random interleavings with held and failing executing appends', () => {
  it('never sends before the executing append resolved, never twice, never after it failed; every waiter ends terminal', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rcmd, { minLength: 1, maxLength: 30 }), fc.boolean(), async (cmds, ordersOnCall) => {
        const f = await gateFixture({ tools: ['act'] });
        const durableIds = new Set<string>();
        const failedIds = new Set<string>();
        const held: Array<{ ids: string[]; go: (fail: boolean) => void }> = [];
        const journal = wrapJournal(
          f,
          async (entries, options, inner) => {
            if (!options?.durable) return inner.append(entries, options);
            const ids = entries.filter((e) => e.type === 'op.transition' && e.payload.to === 'executing').map((e) => String(e.payload.operationId));
            const fail = await new Promise<boolean>((go) => held.push({ ids, go }));
            if (fail) {
              for (const id of ids) failedIds.add(id);
              throw new Error('fsync failed');
            }
            const out = await inner.append(entries, options);
            for (const id of ids) durableIds.add(id);
            return out;
          },
          { ordersOnCall } as Partial<Journal>,
        );
        const sent: string[] = [];
        const violations: string[] = [];
        const executor: ToolExecutor = {
          call: (target, args, options) => {
            const id = (options as { operationId?: string }).operationId!;
            if (!durableIds.has(id)) violations.push(`${id} sent before its executing append resolved`);
            if (failedIds.has(id)) violations.push(`${id} sent after its executing append failed`);
            sent.push(id);
            return f.registry.call(target, args, options);
          },
        } as ToolExecutor;
        const gate = gateOver(f, { journal, executor });
        const setMode = (m: 'allow' | 'ask' | 'disabled') => {
          const t = f.registry.getTool('gh', 'work', 'act')!;
          f.policy.set({ user: [{ id: 'r', scope: { kind: 'tool', serverId: 'gh', accountId: null, toolName: 'act' }, mode: m, pin: m === 'allow' ? { contractHash: t.contractHash, endpointHash: t.endpointHash } : null }] });
        };
        setMode('allow');
        const waitsRaw: Array<Promise<unknown>> = [];
        const labels: Array<{ what: string; done: boolean }> = [];
        const waits = {
          push(p: Promise<unknown>, what = 'other') {
            const l = { what, done: false };
            labels.push(l);
            waitsRaw.push(p.finally(() => (l.done = true)));
          },
        };
        const ids: string[] = [];
        let n = 0;
        const tick = () => new Promise((r) => setTimeout(r, 0));
        try {
          for (const c of cmds) {
            switch (c.kind) {
              case 'request': {
                const id = c.dup !== null && ids.length ? ids[c.dup % ids.length]! : `op-${n++}`;
                if (!ids.includes(id)) ids.push(id);
                const req = { source: 'model' as const, conversationId: 'c', serverId: 'gh', accountId: 'work', toolName: 'act', arguments: { n: Number(id.slice(3)) }, operationId: id };
                if (c.via === 'request') {
                  waits.push(
                    gate.request(req).then((s) => {
                      if (!['succeeded', 'failed', 'outcome_unknown', 'denied', 'rejected', 'expired', 'invalidated', 'cancelled', 'validation_failed'].includes(s.state)) violations.push(`request(${id}) returned ${s.state}`);
                    }),
                    `request(${id})`,
                  );
                } else {
                  waits.push(gate.submit(req), `submit(${id})`);
                }
                break;
              }
              case 'approve':
              case 'reject':
              case 'cancel':
                if (ids.length) waits.push(gate[c.kind](ids[c.pick % ids.length]!).catch(() => undefined), `${c.kind}(${ids[c.pick % ids.length]})`);
                break;
              case 'settled':
                if (ids.length) waits.push(gate.settled(ids[c.pick % ids.length]!).catch(() => undefined), `settled(${ids[c.pick % ids.length]})`);
                break;
              case 'flush': {
                const h = held.shift();
                h?.go(c.fail);
                break;
              }
              case 'policy':
                setMode(c.mode);
                waits.push(gate.revalidate('policy changed'), 'revalidate');
                break;
              case 'expire':
                f.clock.advance(11 * 60 * 1000);
                waits.push(gate.sweepExpired(), 'sweep');
                break;
            }
            await tick();
          }
          // Drain: release every held append (successfully) and end every pending approval.
          for (let round = 0; round < 50; round++) {
            while (held.length) held.shift()!.go(false);
            for (const p of gate.pending()) waits.push(gate.reject(p.operationId).catch(() => undefined));
            await tick();
          }
          const timeout = new Promise<string>((r) => setTimeout(() => r('hang'), 3000));
          const outcome = await Promise.race([Promise.all(waitsRaw).then(() => 'done'), timeout]);
          if (outcome !== 'done') {
            const open = labels.filter((l) => !l.done).map((l) => l.what);
            throw new Error(`hang: unresolved ${JSON.stringify(open)}; states ${JSON.stringify(ids.map((id) => [id, gate.getLive(id)?.state]))}; held ${held.length}; ordersOnCall ${ordersOnCall}`);
          }
          for (const id of ids) expect(['succeeded', 'failed', 'outcome_unknown', 'denied', 'rejected', 'expired', 'invalidated', 'cancelled']).toContain((await gate.get(id))?.state);
          expect(violations).toEqual([]);
          expect(new Set(sent).size).toBe(sent.length);
          await tick();
          expect(unhandled).toEqual([]);
        } finally {
          gate.close();
          await f.close();
        }
      }),
      { numRuns: Number(process.env.WARDEN_PROPERTY_RUNS ?? 80), seed: process.env.WARDEN_PROPERTY_SEED ? Number(process.env.WARDEN_PROPERTY_SEED) : undefined },
    );
  }, 300_000);
});
