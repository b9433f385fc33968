/**
 * The connection layer as the renderer reaches it: the real core (createCore) with the real OS
 * keychain (run under scripts/with-keyring.sh), driven through the `connections:*` contract with
 * dispatch, exactly as the IPC binder and the browser test host do.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ChannelName } from '../../../shared/ipc';
import type { ServerView } from '../../../shared/domain/servers';
import { isAlive, stdioFixture, waitUntil } from './helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

/** A core whose "native dialog" approves (stands in for Electron's dialog), recording everything it emits. */
function startCore() {
  const sent: Array<{ event: string; payload: unknown }> = [];
  const journal = new MemoryJournal(systemClock);
  core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', journal, gate: { prompter: { prompt: async () => 'approve' } }, connections: { reconnect: { maxAttempts: 0 } } });
  core.events.subscribe((event, payload) => sent.push({ event, payload }));
  const responses: unknown[] = [];
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await dispatch(core!.handlers, channel, request);
    responses.push(r);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  return { core, sent, responses, call, journal };
}

function draftOf(fixture: string, env: Array<{ name: string; value?: string; secret?: boolean }> = []) {
  const def = stdioFixture('ignored', fixture, env);
  return { name: `Fixture ${fixture}`, transport: 'stdio' as const, command: def.command, args: def.args, env };
}

describe('connections contract over the real core and keychain', () => {
  it('connect, list tools, logs and status events flow through the contract and no secret value is ever sent to the renderer', async () => {
    const { sent, responses, call } = startCore();
    const secret = 'kc-' + Math.random().toString(36).slice(2) + '-value';
    const added = await call<ServerView>('servers:add', {
      definition: draftOf('paginated', [
        { name: 'FIXTURE_SECRET_ENV', value: 'API_TOKEN' },
        { name: 'API_TOKEN', secret: true },
      ]),
      secrets: [{ name: 'env:API_TOKEN', value: secret }],
    });
    const serverId = added.definition.id;
    const accountId = added.accounts[0]!.id;

    const view = await call<{ status: { state: string }; toolCount: number }>('connections:connect', { serverId, accountId });
    expect(view.status.state).toBe('connected');
    expect(view.toolCount).toBe(11);
    const { tools } = await call<{ tools: Array<{ name: string; contractHash: string }> }>('connections:list-tools', { serverId, accountId });
    expect(tools.map((t) => t.name)).toContain('echo');

    // The secret reached the server process (it came from the keychain at connect time)...
    const echoed = await core!.connections.call({ serverId, accountId, toolName: 'whoami_env' }, {}, { signal: new AbortController().signal, operationId: 'check' });
    expect(JSON.stringify(echoed)).toContain(secret);

    const logs = await call<{ lines: Array<{ text: string }> }>('connections:logs', { serverId, accountId });
    expect(logs.lines.some((l) => l.text.startsWith('connected over stdio'))).toBe(true);
    await call('connections:status', {});
    await call('connections:disconnect', { serverId, accountId });
    const after = await call<{ connections: Array<{ status: { state: string } }> }>('connections:status', { serverId });
    expect(after.connections[0]!.status.state).toBe('disconnected');

    const states = sent.filter((e) => e.event === 'connections:status-changed').map((e) => (e.payload as { status: { state: string } }).status.state);
    expect(states).toEqual(['connecting', 'connected', 'disconnected']);
    expect(sent.some((e) => e.event === 'connections:tools-changed')).toBe(true);
    // ...and nowhere in what the renderer could have received.
    expect(JSON.stringify(responses)).not.toContain(secret);
    expect(JSON.stringify(sent)).not.toContain(secret);
  });

  it('removing a server closes its connection, kills its process and forgets it', async () => {
    const { call } = startCore();
    const added = await call<ServerView>('servers:add', { definition: draftOf('paginated') });
    const serverId = added.definition.id;
    const accountId = added.accounts[0]!.id;
    await call('connections:connect', { serverId, accountId });
    const pid = core!.connections.connection(serverId, accountId)!.pid!;
    expect(isAlive(pid)).toBe(true);
    await call('servers:remove', { serverId });
    await waitUntil(() => !isAlive(pid), 15_000, 'the removed server to be killed');
    await waitUntil(async () => (await call<{ connections: unknown[] }>('connections:status', { serverId })).connections.length === 0, 15_000, 'forgotten');
    expect(core!.connections.listTools({ serverId })).toEqual([]);
  });

  it('a rug pull after Always Allow is journaled, reported, and drops the grant back to ask', async () => {
    const { sent, call, journal } = startCore();
    const added = await call<ServerView>('servers:add', { definition: draftOf('rug-pull') });
    const serverId = added.definition.id;
    const accountId = added.accounts[0]!.id;
    await call('connections:connect', { serverId, accountId });
    await call('permissions:set', { scope: 'tool', serverId, accountId, toolName: 'get_weather', mode: 'allow' });

    const gate = core!.gate.gate;
    const before = await gate.request({ source: 'user', serverId, accountId, toolName: 'get_weather', arguments: { city: 'Oslo' } });
    expect(before.state).toBe('succeeded');

    // The server rewrites its tool's description (test control call, straight to the connection).
    await core!.connections.call({ serverId, accountId, toolName: 'next_stage' }, {}, { signal: new AbortController().signal, operationId: 'stage' });
    const change = await waitUntil(
      () => sent.find((e) => e.event === 'connections:tools-changed' && (e.payload as { trigger: string }).trigger === 'list_changed'),
      15_000,
      'tools-changed event',
    );
    expect(change.payload).toMatchObject({ changed: [{ name: 'get_weather', fields: ['description'] }] });
    const contractEvents = journal.read().filter((r) => r.type === 'tool.contract-changed' && r.payload.toolName === 'get_weather');
    expect(contractEvents.map((r) => r.payload.changedFields)).toEqual([[], ['description']]);
    expect(contractEvents[1]!.payload.oldContractHash).toBe(contractEvents[0]!.payload.newContractHash);

    const afterChange = await gate.submit({ source: 'user', serverId, accountId, toolName: 'get_weather', arguments: { city: 'Oslo' } });
    expect(afterChange.state).toBe('awaiting_approval');
    const matrix = await call<{ rows: Array<{ toolName: string; pin: string; effective: string }> }>('permissions:matrix', {});
    expect(matrix.rows.find((r) => r.toolName === 'get_weather')).toMatchObject({ pin: 'contract-changed', effective: 'ask' });
  });
});
