/**
 * Servers that start themselves, and progress of long calls, through the real core (createCore)
 * with a real settings file and real spawned stdio servers (test/fixtures/servers/slow.ts), driven
 * through the contract with dispatch exactly as the IPC binder and the browser test host do.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { ServersOverview } from '../../../shared/contract/servers';
import type { OperationSummary } from '../../../shared/contract/operations';
import type { ChannelName } from '../../../shared/ipc';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { MapKeychain } from '../chat/helpers';
import { isAlive, stdioFixture, waitUntil } from '../mcp/helpers';

const cores: WardenCore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(cores.splice(0).map((c) => c.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const MISSING_COMMAND = 'warden-fixture-no-such-command';

/**
 * A settings file as an earlier Warden wrote it: no enabled switch anywhere. With `flaky`, also a
 * server whose program starts and exits at once (a failure a retry may fix, unlike a missing program).
 */
function writeOldSettings(dir: string, options: { flaky?: boolean } = {}): void {
  const slowA = stdioFixture('slow-a', 'slow', [{ name: 'FIXTURE_SLOW_START_MS', value: '1200' }]);
  const slowB = stdioFixture('slow-b', 'slow', [{ name: 'FIXTURE_SLOW_START_MS', value: '1200' }]);
  const doc = {
    schemaVersion: 1,
    servers: [
      { ...slowA, name: 'Slow A' },
      { ...slowB, name: 'Slow B' },
      { id: 'files', name: 'Files', transport: 'stdio', command: MISSING_COMMAND, args: [], env: [] },
      ...(options.flaky ? [{ id: 'flaky', name: 'Flaky', transport: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'], env: [] }] : []),
    ],
    accounts: [
      { id: 'slow-a-default', serverId: 'slow-a', label: 'Default' },
      { id: 'slow-b-default', serverId: 'slow-b', label: 'Default' },
      { id: 'files-default', serverId: 'files', label: 'Default' },
      ...(options.flaky ? [{ id: 'flaky-default', serverId: 'flaky', label: 'Default' }] : []),
    ],
    preferences: {},
  };
  writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(doc, null, 2));
}

function startCore(dir: string, options: { autoConnect?: boolean } = {}) {
  const core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    servers: { settingsStore: openConfSettingsStore(dir), secrets: new MapKeychain() },
    gate: { prompter: { prompt: async () => 'approve' } },
    autoConnect: options.autoConnect ?? true,
    autostartPolicy: { baseDelayMs: 300, maxDelayMs: 300, maxAttempts: 2 },
  });
  cores.push(core);
  const overviews: ServersOverview[] = [];
  const events: Array<{ event: string; payload: unknown }> = [];
  core.events.subscribe((event, payload) => {
    events.push({ event, payload });
    if (event === 'servers:overview-changed') overviews.push(payload as ServersOverview);
  });
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await dispatch(core.handlers, channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  const overview = () => call<ServersOverview>('servers:overview', {});
  return { core, overviews, events, call, overview };
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-autostart-'));
  dirs.push(dir);
  return dir;
}

describe('servers that start themselves', () => {
  it('a settings file without the switch keeps every server on; they connect at launch at the same time, and a failure is retried with its next attempt time, then named in the summary', async () => {
    const dir = tempDir();
    writeOldSettings(dir, { flaky: true });
    const { core, overviews, overview } = startCore(dir);
    const launchedAt = Date.now();
    await core.launched;

    // Both slow servers were connecting at the same moment: launch does not go one by one.
    const together = overviews.find((o) => o.servers.filter((s) => s.serverId.startsWith('slow-') && s.state === 'connecting').length === 2);
    expect(together, 'an overview with both slow servers connecting at once').toBeDefined();
    expect(together!.servers.every((s) => s.enabled)).toBe(true);
    // A connect under way carries when it started, for the elapsed time the list shows.
    const connecting = together!.servers.find((s) => s.state === 'connecting')!;
    expect(connecting.connectingSince).toBeGreaterThanOrEqual(launchedAt - 50);

    // The failed one retries with backoff: its next attempt is a time, and its attempt number.
    const retrying = overviews.find((o) => o.servers.find((s) => s.serverId === 'flaky')?.state === 'retrying');
    expect(retrying, 'an overview with Flaky retrying').toBeDefined();
    const flaky = retrying!.servers.find((s) => s.serverId === 'flaky')!;
    expect(flaky.attempt).toBe(1);
    expect(flaky.failure?.kind).toBe('process-exited');
    expect(flaky.nextAttemptAt).toBeGreaterThan(launchedAt);

    const now = await overview();
    expect(now.servers.filter((s) => s.state === 'connected').map((s) => s.name).sort()).toEqual(['Slow A', 'Slow B']);
    expect(now.servers.find((s) => s.name === 'Slow A')!.toolCount).toBe(2);

    // After its retries it gives up (until Restart), and the summary says which one and that it stopped.
    const gaveUp = await waitUntil(async () => {
      const o = await overview();
      return o.servers.find((s) => s.serverId === 'flaky')?.state === 'failed' ? o : undefined;
    }, 10_000, 'Flaky to give up');
    expect(gaveUp.summary).toMatchObject({ total: 4, enabled: 4, connected: 2 });
    expect(gaveUp.summary.text).toBe('2 of 4 connected — Files failed, not retrying; Flaky failed');
    expect(gaveUp.servers.find((s) => s.serverId === 'flaky')).toMatchObject({ attempt: 3, notRetrying: false });
  });

  it('a program that does not exist is tried once, not every few seconds: it is failed and not retrying until the person connects it, and each Connect tries once more', async () => {
    const dir = tempDir();
    writeOldSettings(dir);
    const { core, overviews, call, overview } = startCore(dir);
    await core.launched;
    const attempts = async () =>
      (await call<{ lines: Array<{ text: string }> }>('connections:logs', { serverId: 'files', accountId: 'files-default' })).lines.filter((l) => l.text.startsWith('connect failed')).length;

    // Never "retrying", not even for a moment: the person is told at once that nothing follows.
    expect(overviews.some((o) => o.servers.find((s) => s.serverId === 'files')?.state === 'retrying')).toBe(false);
    const files = (await overview()).servers.find((s) => s.serverId === 'files')!;
    expect(files).toMatchObject({ state: 'failed', notRetrying: true, attempt: null, nextAttemptAt: null, failure: { kind: 'command-not-found', command: MISSING_COMMAND } });
    // Well past the retry schedule (300 ms, 2 attempts): still one attempt, still the same state.
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await attempts()).toBe(1);
    expect((await overview()).servers.find((s) => s.serverId === 'files')).toMatchObject({ state: 'failed', notRetrying: true });
    expect((await overview()).summary.text).toBe('2 of 3 connected — Files failed, not retrying');

    // Connect (the row's button, which restarts it) tries exactly once more, and again waits for the person.
    await call('servers:restart', { serverId: 'files' });
    await waitUntil(async () => (await attempts()) === 2, 5_000, 'the second attempt');
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await attempts()).toBe(2);
    expect((await overview()).servers.find((s) => s.serverId === 'files')).toMatchObject({ state: 'failed', notRetrying: true });
    // A connect by hand on the server's page says the same.
    await call('connections:connect', { serverId: 'files', accountId: 'files-default' });
    expect(await attempts()).toBe(3);
    expect((await overview()).servers.find((s) => s.serverId === 'files')).toMatchObject({ state: 'failed', notRetrying: true });
  });

  it('turning a server off is saved and disconnects it at once; the next launch leaves it alone; turning it on connects it', async () => {
    const dir = tempDir();
    writeOldSettings(dir);
    const first = startCore(dir);
    await first.core.launched;
    const pid = first.core.connections.connection('slow-a', 'slow-a-default')!.pid!;
    expect(isAlive(pid)).toBe(true);

    const row = await first.call<{ enabled: boolean; state: string }>('servers:set-enabled', { serverId: 'slow-a', enabled: false });
    expect(row).toMatchObject({ enabled: false, state: 'turned_off' });
    await waitUntil(() => !isAlive(pid), 5_000, 'the process of the turned-off server to end');
    const saved = JSON.parse(readFileSync(path.join(dir, 'settings.json'), 'utf8')) as { preferences: { disabledServers?: string[] } };
    expect(saved.preferences.disabledServers).toEqual(['slow-a']);
    await first.call('servers:set-enabled', { serverId: 'files', enabled: false });
    await first.core.close();

    const second = startCore(dir);
    await second.core.launched;
    const o = await second.overview();
    expect(o.servers.map((s) => [s.name, s.state])).toEqual([
      ['Slow A', 'turned_off'],
      ['Slow B', 'connected'],
      ['Files', 'turned_off'],
    ]);
    expect(second.core.connections.connection('slow-a', 'slow-a-default')).toBeUndefined();
    expect(o.summary.text).toBe('1 of 1 connected (2 turned off)');

    await second.call('servers:set-enabled', { serverId: 'slow-a', enabled: true });
    await waitUntil(async () => (await second.overview()).servers[0]!.state === 'connected', 15_000, 'Slow A to connect after being turned on');
    const reread = JSON.parse(readFileSync(path.join(dir, 'settings.json'), 'utf8')) as { preferences: { disabledServers?: string[] } };
    expect(reread.preferences.disabledServers).toEqual(['files']);
  });

  it('Restart starts a new process and forgets the retry count; a disconnect by the person stops automatic attempts', async () => {
    const dir = tempDir();
    writeOldSettings(dir, { flaky: true });
    const { core, call, overview } = startCore(dir);
    await core.launched;
    const before = core.connections.connection('slow-b', 'slow-b-default')!.pid!;
    await call('servers:restart', { serverId: 'slow-b' });
    await waitUntil(async () => (await overview()).servers[1]!.state === 'connected', 15_000, 'Slow B to be back');
    const after = core.connections.connection('slow-b', 'slow-b-default')!.pid!;
    expect(after).not.toBe(before);
    expect(isAlive(before)).toBe(false);

    // Flaky (given up by now, or close to it) is restarted and retries; the person disconnects it: no attempt follows.
    await call('servers:restart', { serverId: 'flaky' });
    await waitUntil(async () => (await overview()).servers[3]!.state === 'retrying', 5_000, 'Flaky to retry');
    await call('connections:disconnect', { serverId: 'flaky' });
    const stopped = await overview();
    expect(stopped.servers[3]).toMatchObject({ state: 'not_connected', nextAttemptAt: null });
    await new Promise((r) => setTimeout(r, 700));
    expect((await overview()).servers[3]!.state).toBe('not_connected');

    // Restart of a failing server starts counting from the first attempt again.
    await call('servers:restart', { serverId: 'flaky' });
    const again = await waitUntil(async () => {
      const s = (await overview()).servers[3]!;
      return s.state === 'retrying' ? s : undefined;
    }, 5_000, 'Flaky to retry after Restart');
    expect(again.attempt).toBe(1);
  });

  it('a core without autoConnect connects nothing by itself', async () => {
    const dir = tempDir();
    writeOldSettings(dir);
    const { core, overview } = startCore(dir, { autoConnect: false });
    await core.launched;
    await new Promise((r) => setTimeout(r, 200));
    expect((await overview()).servers.map((s) => s.state)).toEqual(['not_connected', 'not_connected', 'not_connected']);
  });

  it('a server saved while Warden runs connects at once, without a click; in a core without autoConnect it does not', async () => {
    const dir = tempDir();
    writeOldSettings(dir);
    const { core, call, overview } = startCore(dir);
    await core.launched;
    const def = stdioFixture('ignored', 'slow');
    const added = await call<{ definition: { id: string } }>('servers:add', { definition: { name: 'Added later', transport: 'stdio', command: def.command, args: def.args, env: [] } });
    await waitUntil(async () => (await overview()).servers.find((s) => s.serverId === added.definition.id)?.state === 'connected', 20_000, 'the added server to connect');

    const quiet = startCore(tempDir(), { autoConnect: false });
    await quiet.core.launched;
    const other = await quiet.call<{ definition: { id: string } }>('servers:add', { definition: { name: 'Added later', transport: 'stdio', command: def.command, args: def.args, env: [] } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await quiet.overview()).servers.find((s) => s.serverId === other.definition.id)?.state).toBe('not_connected');
  });
});

describe('the accounts that start', () => {
  /** One server with two accounts (Personal first, then Work), and nothing else. */
  function writeTwoAccounts(dir: string): void {
    const doc = {
      schemaVersion: 1,
      servers: [{ ...stdioFixture('notes', 'slow'), name: 'Notes' }],
      accounts: [
        { id: 'notes-personal', serverId: 'notes', label: 'Personal' },
        { id: 'notes-work', serverId: 'notes', label: 'Work' },
      ],
      preferences: {},
    };
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(doc, null, 2));
  }
  const states = (o: ServersOverview) => o.servers[0]!.accounts.map((a) => [a.label, a.status.state]);

  it('every account connected when Warden closed connects at the next start, not only the first; one the person disconnected stays disconnected', async () => {
    const dir = tempDir();
    writeTwoAccounts(dir);
    const first = startCore(dir);
    await first.core.launched;
    // Never connected before: the first account starts, as always.
    expect(states(await first.overview())).toEqual([
      ['Personal', 'connected'],
      ['Work', 'disconnected'],
    ]);
    await first.call('connections:connect', { serverId: 'notes', accountId: 'notes-work' });
    await first.core.close();

    const second = startCore(dir);
    await second.core.launched;
    expect(states(await second.overview())).toEqual([
      ['Personal', 'connected'],
      ['Work', 'connected'],
    ]);

    // The person disconnects the first account and keeps Work: the next start connects Work alone.
    await second.call('connections:disconnect', { serverId: 'notes', accountId: 'notes-personal' });
    // Turning the server off and on (or Restart) is not a choice of accounts: both come back.
    await second.call('servers:set-enabled', { serverId: 'notes', enabled: false });
    await second.call('servers:set-enabled', { serverId: 'notes', enabled: true });
    await waitUntil(async () => (await second.overview()).servers[0]!.state === 'connected', 15_000, 'Notes to be back');
    expect(states(await second.overview())).toEqual([
      ['Personal', 'disconnected'],
      ['Work', 'connected'],
    ]);
    await second.core.close();

    const third = startCore(dir);
    await third.core.launched;
    expect(states(await third.overview())).toEqual([
      ['Personal', 'disconnected'],
      ['Work', 'connected'],
    ]);
    expect(third.core.connections.connection('notes', 'notes-personal')).toBeUndefined();
  });

  it('removing an account forgets it, so the list of accounts that start holds only ones that exist', async () => {
    const dir = tempDir();
    writeTwoAccounts(dir);
    const { core, call } = startCore(dir);
    await core.launched;
    await call('connections:connect', { serverId: 'notes', accountId: 'notes-work' });
    const saved = () => (JSON.parse(readFileSync(path.join(dir, 'settings.json'), 'utf8')) as { preferences: { connectedAccounts?: string[] } }).preferences.connectedAccounts;
    expect(saved()).toEqual(['notes-personal', 'notes-work']);
    await call('accounts:remove', { accountId: 'notes-work' });
    await waitUntil(() => saved()?.length === 1, 5_000, 'the removed account to be forgotten');
    expect(saved()).toEqual(['notes-personal']);
  });
});

describe('progress of long calls', () => {
  it("a call's progress reaches the renderer with progress, total and message; Stop of the sent call ends it outcome unknown and the server is told", async () => {
    const dir = tempDir();
    writeOldSettings(dir);
    const { core, call, events } = startCore(dir);
    await core.launched;
    const proposed = await call<OperationSummary>('tools:run', { serverId: 'slow-a', accountId: 'slow-a-default', toolName: 'steps', arguments: { steps: 50, stepMs: 100 } });
    await call('approvals:review', { operationId: proposed.operationId });
    const progress = () =>
      events.filter((e) => e.event === 'connections:progress' && (e.payload as { operationId: string }).operationId === proposed.operationId).map((e) => e.payload as { progress: number; total?: number; message?: string });
    await waitUntil(() => progress().length >= 3, 15_000, 'three progress notifications');
    expect(progress()[0]).toMatchObject({ progress: 1, total: 50, message: 'Step 1 of 50' });

    const stopped = await call<OperationSummary>('approvals:cancel', { operationId: proposed.operationId });
    const final = await waitUntil(async () => {
      const op = await call<OperationSummary>('operations:get', { operationId: proposed.operationId });
      return op.state !== 'executing' ? op : undefined;
    }, 10_000, 'the stopped call to end');
    expect([stopped.state, final.state]).toContain('outcome_unknown');
    expect(final.state).toBe('outcome_unknown');
    const logs = await call<{ lines: Array<{ text: string }> }>('connections:logs', { serverId: 'slow-a', accountId: 'slow-a-default' });
    await waitUntil(async () => {
      const l = await call<{ lines: Array<{ text: string }> }>('connections:logs', { serverId: 'slow-a', accountId: 'slow-a-default' });
      return l.lines.some((x) => x.text.includes('cancelled steps'));
    }, 5_000, 'the server to record the cancellation');
    expect(logs.lines.some((x) => x.text.includes('finished steps'))).toBe(false);
  });
});
