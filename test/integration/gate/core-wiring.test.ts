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
