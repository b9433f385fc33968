/**
 * Guarantees the gate's fast path must keep: a journal failure after
 * the call never turns into a second transition or a crash, and nothing a caller receives aliases
 * the gate's or the journal's stored state.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryHistory } from '../../../electron/core/ledger/history';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import type { JournalEntry, JournalRecord } from '../../../electron/core/ports';
import { gateFixture, gateOver, type GateFixture, gateCall, until } from './harness';

const recordedOf = (journal: { read(): readonly JournalRecord[] }) => new MemoryHistory(() => journal.read()).recordedOperations({ limit: 1000 });

let fx: GateFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const call = gateCall;

describe('gate hot path', () => {
  it('a journal that fails on the outcome record leaves one final state, no second transition and no crash', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const journal = fx.journal;
    const failing = Object.assign(Object.create(Object.getPrototypeOf(journal)) as typeof journal, journal, {
      append: async (entries: JournalEntry[], options?: { durable?: boolean }) => {
        if (entries.some((e) => e.type === 'op.transition' && e.payload.from === 'executing')) throw new Error('ledger closed');
        return journal.append(entries, options);
      },
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const errors: unknown[][] = [];
    const originalError = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    const gate = gateOver(fx, { journal: failing });
    try {
      const op = await gate.request(call());
      expect(op.state).toBe('succeeded');
      expect(op.history.map((h) => h.to)).toEqual(['approved', 'executing', 'succeeded']);
      expect(fx.mcp.count()).toBe(1);
      // The durable record still says executing: recovery makes it outcome_unknown, never a resend.
      expect(fx.journal.transitions(op.operationId)).toEqual(['proposed→approved', 'approved→executing']);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      expect(String(errors[0]?.[0])).toMatch(/could not be journaled/);
    } finally {
      console.error = originalError;
      process.off('unhandledRejection', onUnhandled);
      gate.close();
    }
  });

  it('snapshots and journal records share nothing with the gate: editing them changes nothing', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const op = await fx.gate.request(call({ arguments: { text: 'close #42', n: 1 } }));
    op.arguments.text = 'close #43';
    (op.result!.content[0] as { text: string }).text = 'forged';
    op.history.push({ from: 'succeeded', to: 'failed', reason: 'x', at: 0 });
    op.decision!.configErrors.push('x');
    const again = (await fx.gate.get(op.operationId))!;
    expect(again.arguments).toEqual({ n: 1, text: 'close #42' });
    expect(again.result!.content[0]).toMatchObject({ text: 'close_issue ok' });
    expect(again.history).toHaveLength(3);
    expect(again.decision!.configErrors).toEqual([]);
    for (const record of fx.journal.read()) expect(Object.isFrozen(record.payload)).toBe(true);
    const proposed = fx.journal.read().find((r) => r.type === 'op.proposed')!;
    expect(() => ((proposed.payload.arguments as { text: string }).text = 'x')).toThrow(TypeError);
  });

  it('a finished operation leaves the gate and is still never sent twice: its id returns the journaled outcome', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const first = await fx.gate.request(call({ operationId: 'op-1', arguments: { text: 'close #1' } }));
    for (let i = 2; i <= 5; i++) await fx.gate.request(call({ operationId: `op-${i}`, arguments: { text: `close #${i}` } }));
    expect(fx.mcp.count()).toBe(5);
    // The gate holds live operations only.
    expect(fx.gate.list()).toEqual([]);
    const again = await fx.gate.request(call({ operationId: 'op-1', arguments: { text: 'close #999' } }));
    expect(fx.mcp.count()).toBe(5);
    expect(again.state).toBe('succeeded');
    expect(again.arguments).toEqual({ text: 'close #1' });
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(again.history.map((h) => h.to)).toEqual(['approved', 'executing', 'succeeded']);
    // Reads come from the history; moves are refused.
    expect((await fx.gate.get('op-1'))?.state).toBe('succeeded');
    await expect(fx.gate.approve('op-1')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(fx.gate.reject('op-1')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(fx.gate.cancel('op-1')).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('pending approvals are never dropped from memory, however many calls finish meanwhile', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const pending = await fx.gate.submit(call({ operationId: 'ask-1', toolName: 'delete_file' }));
    expect(pending.state).toBe('awaiting_approval');
    for (let i = 0; i < 5; i++) await fx.gate.request(call({ operationId: `ok-${i}` }));
    expect(fx.gate.pending().map((o) => o.operationId)).toEqual(['ask-1']);
    const approved = await fx.gate.approve('ask-1');
    expect(approved.state).toBe('executing');
    expect((await fx.gate.settled('ask-1')).state).toBe('succeeded');
  });

  it('a reused decision never outlives the rules, safe mode or active account it was made under', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    expect((await fx.gate.request(call())).state).toBe('succeeded');
    expect((await fx.gate.request(call())).state).toBe('succeeded');
    // Disabled: a new rule array, same identity and arguments as the calls above.
    const allowRules = fx.policy.state.user;
    fx.policy.set({ user: [{ id: 'off', scope: { kind: 'tool', serverId: 'gh', accountId: 'work', toolName: 'close_issue' }, mode: 'disabled', pin: null }] });
    expect((await fx.gate.request(call())).state).toBe('denied');
    fx.policy.set({ user: allowRules });
    expect((await fx.gate.request(call())).state).toBe('succeeded');
    // Safe mode caps every allow at ask.
    fx.policy.set({ safeMode: true });
    const held = await fx.gate.submit(call());
    expect(held.state).toBe('awaiting_approval');
    await fx.gate.reject(held.operationId);
    fx.policy.set({ safeMode: false });
    expect((await fx.gate.request(call())).state).toBe('succeeded');
    // Another account became active: the work account's calls are no longer allowed.
    fx.policy.set({ activeAccounts: [{ serverId: 'gh', conversationId: null, accountId: 'personal' }] });
    expect((await fx.gate.request(call())).state).toBe('denied');
    expect(fx.mcp.count()).toBe(4);
  });

  it('over a journal that orders records on call, concurrent operations replay from it to exactly their final states', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const journal = new MemoryJournal(fx.clock);
    expect(journal.ordersOnCall).toBe(true);
    const gate = gateOver(fx, { journal });
    try {
      const allowed = Array.from({ length: 30 }, (_, i) => gate.request(call({ operationId: `ok-${i}`, arguments: { text: `close #${i}` } })));
      const asked = await Promise.all(Array.from({ length: 10 }, (_, i) => gate.submit(call({ operationId: `ask-${i}`, toolName: 'delete_file' }))));
      const decided = asked.map((op, i) => (i % 2 === 0 ? gate.approve(op.operationId) : gate.reject(op.operationId)));
      await Promise.all([...allowed, ...decided]);
      for (let i = 0; i < 10; i += 2) await gate.settled(`ask-${i}`);
      const replayed = new Map((await recordedOf(journal)).map((r) => [r.proposed.operationId, r]));
      expect(replayed.size).toBe(40);
      for (const op of (await Promise.all([...replayed.keys()].map((id) => gate.get(id)))).map((o) => o!)) {
        const r = replayed.get(op.operationId)!;
        expect(r.state).toBe(op.state);
        expect(r.history.map((h) => `${h.from}→${h.to}`)).toEqual(op.history.map((h) => `${h.from}→${h.to}`));
      }
      expect(fx.mcp.count()).toBe(35);
    } finally {
      gate.close();
    }
  });

  it('a restarted gate answers an id that finished before the restart with its outcome from the history, never a second call', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    await fx.gate.request(call({ operationId: 'old-1' }));
    expect(fx.mcp.count()).toBe(1);
    const gate2 = gateOver(fx);
    try {
      await gate2.restore([]);
      const again = await gate2.request(call({ operationId: 'old-1' }));
      expect(again.state).toBe('succeeded');
      expect(fx.mcp.count()).toBe(1);
    } finally {
      gate2.close();
    }
  });

  it('a registry that edits its descriptor objects in place never gets a stale decision (pins and labels are compared, not just the object)', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const real = fx.registry.getTool('gh', 'work', 'close_issue')!;
    const mutable = { ...real };
    const registry = { getTool: (s2: string, a: string, t: string) => (t === 'close_issue' ? mutable : fx!.registry.getTool(s2, a, t)), listTools: () => fx!.registry.listTools() };
    const gate = gateOver(fx, { registry });
    try {
      expect((await gate.request(call())).state).toBe('succeeded');
      mutable.endpointHash = 'e'.repeat(64);
      const afterEndpoint = await gate.submit(call());
      expect(afterEndpoint.state).toBe('awaiting_approval');
      expect(afterEndpoint.reason).toMatch(/endpoint changed/);
      mutable.endpointHash = real.endpointHash;
      expect((await gate.request(call())).state).toBe('succeeded');
      mutable.contractHash = 'c'.repeat(64);
      const afterContract = await gate.submit(call());
      expect(afterContract.state).toBe('awaiting_approval');
      expect(afterContract.reason).toMatch(/tool changed/);
      expect(fx.mcp.count()).toBe(2);
    } finally {
      gate.close();
    }
  });

  it('a rejected approval dropped from memory before its record reached a slow journal is never approved or sent', async () => {
    // Found by review: with a journal that does not order on call, the rejection's record can
    // still be queued when the operation is dropped; approving must not bring it back.
    fx = await gateFixture();
    const p = await fx.gate.submit(call({ operationId: 'P', toolName: 'delete_file' }));
    expect(p.state).toBe('awaiting_approval');
    fx.allow('close_issue');
    let release!: () => void;
    fx.journal.gate = new Promise<void>((r) => (release = r)); // a slow fsync
    const running = fx.gate.submit(call({ operationId: 'R' }));
    const rejected = fx.gate.reject('P');
    const denied = fx.gate.request(call({ operationId: 'D', toolName: 'not_listed' }));
    const approvals = [fx.gate.approve('P'), fx.gate.approve('P')].map((a) => a.then(() => 'approved', (e: { code?: string }) => e.code));
    release();
    await Promise.all([running, rejected, denied]);
    expect(await Promise.all(approvals)).toEqual(['CONFLICT', 'CONFLICT']);
    await until(() => fx!.gate.list({ state: 'executing' }).length === 0, 'calls to settle');
    expect(fx.mcp.count('delete_file')).toBe(0);
    expect(fx.journal.transitions('P')).toEqual(['proposed→awaiting_approval', 'awaiting_approval→rejected']);
  });
});
