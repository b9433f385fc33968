/**
 * Accounts in the assembled core: switching the active account of a conversation through the
 * `accounts:switch` channel reaches the gate, and a call pending approval for the other account
 * is invalidated — nothing is sent. Real core, real stdio fixture server, real keychain (run with
 * scripts/with-keyring.sh).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import type { ServerView } from '../../../shared/domain/servers';
import type { ChannelName } from '../../../shared/ipc';
import { stdioFixture, waitUntil } from '../mcp/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
const store = new KeytarSecretStore({ service: `Warden-switch-test-${process.pid}-${randomBytes(3).toString('hex')}` });
afterEach(async () => {
  await core?.close();
  core = undefined;
  for (const k of await store.keys('')) await store.delete(k);
});

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

/**
 * A core with the Echo fixture server and two accounts, Work (connected) and Personal. Its
 * prompter denies and is never reached in these tests, so nothing could be approved by accident.
 */
async function echoWithTwoAccounts(): Promise<{ core: WardenCore; journal: MemoryJournal; serverId: string; work: string; personal: string }> {
  const journal = new MemoryJournal(systemClock);
  const made = (core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', journal, servers: { secrets: store }, gate: { prompter: { prompt: async () => 'deny' } }, connections: { reconnect: { maxAttempts: 0 } } }));
  const def = stdioFixture('ignored', 'paginated');
  const added = await call<ServerView>('servers:add', { definition: { name: 'Echo', transport: 'stdio', command: def.command, args: def.args }, accountLabel: 'Work' });
  const serverId = added.definition.id;
  const work = added.accounts[0]!.id;
  const personal = (await call<{ id: string }>('accounts:add', { serverId, label: 'Personal' })).id;
  await call('connections:connect', { serverId, accountId: work });
  return { core: made, journal, serverId, work, personal };
}

describe('account switch in the assembled core', () => {
  it('switching the active account invalidates a call pending approval for the other account, and nothing is sent', async () => {
    const { core, journal, serverId, work, personal } = await echoWithTwoAccounts();
    await call('connections:connect', { serverId, accountId: personal });

    const op = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId, accountId: work, toolName: 'echo', arguments: { message: 'hi' } });
    expect(op.state).toBe('awaiting_approval');

    const switched = await call<{ previousAccountId: string | null }>('accounts:switch', { conversationId: 'c1', serverId, accountId: personal });
    // No account had been chosen in c1: every account of the server could be used until now.
    expect(switched.previousAccountId).toBeNull();
    const after = await waitUntil(async () => {
      const s = (await core!.gate.gate.get(op.operationId))!;
      return s.state === 'awaiting_approval' ? undefined : s;
    }, 20_000, 'the pending call to leave awaiting_approval');
    expect(after.state).toBe('invalidated');
    expect(after.history.some((h) => h.to === 'executing')).toBe(false);
    const switches = journal.read().filter((r) => r.type === 'account.switched');
    expect(switches).toHaveLength(1);
    expect(switches[0]!.payload).toMatchObject({ serverId, conversationId: 'c1', to: personal });
  });

  it('removing the active account lets the server\'s other account be used again, in the gate and in the offered tools', async () => {
    const { core, serverId, work, personal } = await echoWithTwoAccounts();
    await call('accounts:switch', { conversationId: 'c1', serverId, accountId: personal });
    const refused = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId, accountId: work, toolName: 'echo', arguments: { message: 'hi' } });
    expect(refused).toMatchObject({ state: 'denied' });
    expect(refused.decision?.reason).toMatch(/^Not the active account: Echo is using Personal here, not Work/);

    await call('accounts:remove', { accountId: personal });
    const asked = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId, accountId: work, toolName: 'echo', arguments: { message: 'hi' } });
    expect(asked.state).toBe('awaiting_approval');
    const offered = await call<{ tools: Array<{ accountId: string; toolName: string }> }>('tools:offered', { conversationId: 'c1' });
    expect(offered.tools.some((t) => t.accountId === work && t.toolName === 'echo')).toBe(true);
  });

  it('an accounts:switched event is news for the window, not a command: emitting one changes nothing', async () => {
    const { core, journal, serverId, work, personal } = await echoWithTwoAccounts();
    const op = await core.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId, accountId: work, toolName: 'echo', arguments: { message: 'hi' } });
    expect(op.state).toBe('awaiting_approval');
    core.events.emit('accounts:switched', { conversationId: 'c1', serverId, accountId: personal, previousAccountId: work });
    await new Promise((r) => setTimeout(r, 50));
    expect(core.gate.gate.getLive(op.operationId)?.state).toBe('awaiting_approval');
    expect(core.gate.gate.activeAccount(serverId, 'c1')).toBeUndefined();
    expect(journal.read().filter((r) => r.type === 'account.switched')).toEqual([]);
  });
});
