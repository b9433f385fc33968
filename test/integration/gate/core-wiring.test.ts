/**
 * The gate as the core assembles it: contract handlers present, approvals counted in the status,
 * and an account switch announced by the servers module invalidating pending approvals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { ClientRegistry, InMemoryMcp } from './harness';

let core: WardenCore | undefined;
let mcp: InMemoryMcp | undefined;
afterEach(async () => {
  await core?.close();
  await mcp?.close();
  core = mcp = undefined;
});

describe('gate wired into the core', () => {
  it('serves the approvals, operations and permissions contract and follows account switches', async () => {
    mcp = new InMemoryMcp('gh');
    mcp.addTool('close_issue');
    await mcp.connect();
    const registry = new ClientRegistry().add('gh', mcp, ['work', 'personal']);
    await registry.refresh();
    core = createCore({ version: 'test', gate: { registry, executor: registry } });
    const op = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId: 'gh', accountId: 'work', toolName: 'close_issue', arguments: { text: 'x' } });
    expect(core.status().pendingApprovals).toBe(1);
    const listed = await dispatch(core.handlers, 'approvals:list', {});
    expect(listed.ok && (listed.value as { approvals: unknown[] }).approvals.length).toBe(1);
    // The default prompter (no dialog wired) denies: fail closed.
    expect(await dispatch(core.handlers, 'approvals:review', { operationId: op.operationId })).toMatchObject({ ok: true, value: { pressed: 'deny', outcome: 'rejected' } });
    const again = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId: 'gh', accountId: 'work', toolName: 'close_issue', arguments: { text: 'y' } });
    // What the accounts:switch channel does once it has checked the account (servers here live only in the registry).
    await core.gate.switchAccount({ conversationId: 'c1', serverId: 'gh', accountId: 'personal', accountLabel: 'personal' });
    const start = Date.now();
    while ((await core.gate.gate.get(again.operationId))?.state === 'awaiting_approval' && Date.now() - start < 10_000) await new Promise((r) => setTimeout(r, 5));
    expect((await core.gate.gate.get(again.operationId))?.state).toBe('invalidated');
    expect(mcp.count()).toBe(0);
  });
});

describe('approval queue announcements', () => {
  it('approvals:changed is pushed when the queue changes, not on every step of a call', async () => {
    mcp = new InMemoryMcp('gh');
    mcp.addTool('close_issue');
    await mcp.connect();
    const registry = new ClientRegistry().add('gh', mcp, ['work']);
    await registry.refresh();
    core = createCore({ version: 'test', gate: { registry, executor: registry, prompter: { prompt: async () => 'approve' } } });
    const queues: Array<{ pending: number; operationIds: string[] }> = [];
    const updates: string[] = [];
    core.events.subscribe((event, payload) => {
      if (event === 'approvals:changed') queues.push(payload as { pending: number; operationIds: string[] });
      if (event === 'operations:updated') updates.push((payload as { state: string }).state);
    });
    const op = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId: 'gh', accountId: 'work', toolName: 'close_issue', arguments: { text: 'x' } });
    expect(await dispatch(core.handlers, 'approvals:review', { operationId: op.operationId })).toMatchObject({ ok: true, value: { outcome: 'approved' } });
    expect((await core.gate.gate.settled(op.operationId)).state).toBe('succeeded');
    await new Promise((r) => setTimeout(r, 10));
    // Every transition is still pushed as an operation update…
    expect(updates).toEqual(['awaiting_approval', 'approved', 'executing', 'succeeded']);
    // …but the queue only when the call enters it and when it leaves (the window refetches both lists on each).
    expect(queues).toEqual([
      { pending: 1, operationIds: [op.operationId] },
      { pending: 0, operationIds: [] },
    ]);
  });
});
