/**
 * Roots through the real core: server-everything over stdio and Streamable HTTP learns the
 * folders a person chose in the native folder chooser (a scripted stand-in for main's dialog),
 * is told when they change, and they survive a restart. A window can ask for the chooser but
 * never name a folder to add.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ChannelName } from '../../../shared/ipc';
import type { ServerView } from '../../../shared/domain/servers';
import { scriptedFileDialogs } from '../../host/standin-file-dialogs';
import { RootsService } from '../../../electron/core/mcp/roots';
import { EVERYTHING, MapSecretStore, startEverythingHttp, waitUntil, type StartedHttpServer } from './helpers';


class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

let dir: string;
let cores: WardenCore[] = [];
let servers: StartedHttpServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-roots-'));
});
afterEach(async () => {
  await Promise.all(cores.map((c) => c.close()));
  cores = [];
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
  rmSync(dir, { recursive: true, force: true });
});

function startCore() {
  const dialogs = scriptedFileDialogs();
  const core = createCore({ confirmServerChange: confirmEveryServerChange,
    version: 'test',
    journal: new MemoryJournal(systemClock),
    servers: { secrets: new ListableMapSecretStore() },
    fileDialogs: dialogs,
    rootsDir: join(dir, 'roots'),
    gate: { prompter: { prompt: async () => 'approve' } },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  cores.push(core);
  const raw = (channel: ChannelName, request: unknown) => dispatch(core.handlers, channel, request);
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await raw(channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  return { core, dialogs, call, raw };
}

async function everythingDraft(transport: 'stdio' | 'http') {
  if (transport === 'stdio') return { name: 'Everything', transport: 'stdio' as const, command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] };
  const started = await startEverythingHttp();
  servers.push(started);
  return { name: 'Everything', transport: 'http' as const, url: started.url };
}

/** What server-everything says its roots are, asked through the gate. */
async function serverSees(core: WardenCore, key: { serverId: string; accountId: string }): Promise<string> {
  const op = await core.gate.gate.request({ source: 'user', ...key, toolName: 'get-roots-list', arguments: {} });
  expect(op.state).toBe('succeeded');
  return JSON.stringify(op.result);
}

describe.each(['stdio', 'http'] as const)('roots over %s', (transport) => {
  it('the folder a person chose in the native chooser reaches the server, a removal too, each announced with roots/list_changed', async () => {
    const { core, dialogs, call } = startCore();
    const added = await call<ServerView>('servers:add', { definition: await everythingDraft(transport), accountLabel: 'Work' });
    const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await call('connections:connect', key);
    await call('permissions:set', { scope: 'tool', ...key, toolName: 'get-roots-list', mode: 'allow' });
    expect(await serverSees(core, key)).toContain('no roots are currently configured');

    const folder = mkdtempSync(join(dir, 'project-'));
    dialogs.choose(folder);
    const chosen = await call<{ added: { path: string; name: string } | null; roots: unknown[] }>('roots:choose', key);
    expect(chosen.added).toEqual({ path: folder, name: folder.split('/').at(-1) });
    expect(dialogs.requests.at(-1)).toEqual({ title: 'Choose a folder Everything may work in' });
    const uri = pathToFileURL(folder).href;
    // The server re-reads its roots when told they changed (asynchronously, on its side).
    await waitUntil(async () => (await serverSees(core, key)).includes(`URI: ${uri}`), 15_000, 'the server to see the new root');

    expect(await call('roots:remove', { ...key, path: folder })).toEqual({ removed: true, roots: [] });
    await waitUntil(async () => (await serverSees(core, key)).includes('no roots are currently configured'), 15_000, 'the server to see the root gone');
  });
});

describe('roots from the window’s side', () => {
  it('a window can only ask for the chooser: a cancelled choice adds nothing, and a path it names is refused', async () => {
    const { call, raw } = startCore();
    const added = await call<ServerView>('servers:add', { definition: await everythingDraft('stdio') });
    const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    // Nothing queued: the person cancels the chooser.
    expect(await call('roots:choose', key)).toEqual({ added: null, roots: [] });
    const forged = await raw('roots:choose', { ...key, path: '/etc' });
    expect(forged).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    // The refusal names what was wrong, in words.
    expect(forged.ok ? '' : forged.error.message).toContain('Unrecognized key: "path"');
    // Removing names a path, but only narrows: a folder that was never given changes nothing.
    expect(await raw('roots:remove', { ...key, path: '/etc' })).toEqual({ ok: true, value: { removed: false, roots: [] } });
    expect(await raw('roots:list', { serverId: key.serverId, accountId: 'someone-else' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await call('roots:list', key)).toEqual({ roots: [], enforced: false });
  });

  it('removing an account forgets its folders (on disk too), and the server’s other accounts keep theirs', async () => {
    const { core, dialogs, call } = startCore();
    const added = await call<ServerView>('servers:add', { definition: await everythingDraft('stdio'), accountLabel: 'Work' });
    const serverId = added.definition.id;
    const work = { serverId, accountId: added.accounts[0]!.id };
    const home = { serverId, accountId: (await call<{ id: string }>('accounts:add', { serverId, label: 'Home' })).id };
    const workFolder = mkdtempSync(join(dir, 'work-'));
    const homeFolder = mkdtempSync(join(dir, 'home-'));
    dialogs.choose(workFolder);
    await call('roots:choose', work);
    dialogs.choose(homeFolder);
    await call('roots:choose', home);

    await call('accounts:remove', { accountId: home.accountId });
    expect(await call('roots:list', work)).toEqual({ roots: [{ path: workFolder, name: workFolder.split('/').at(-1) }], enforced: false });
    await core.close();
    cores = cores.filter((c) => c !== core);

    // What was written is what a restart reads: the removed account's folder is gone from the file.
    const reread = new RootsService({ dir: join(dir, 'roots'), onChanged: () => {}, serverName: () => undefined });
    await reread.loaded;
    expect(reread.list(serverId, home.accountId)).toEqual([]);
    expect(reread.list(serverId, work.accountId)).toEqual([{ path: workFolder, name: workFolder.split('/').at(-1) }]);
  });

  it('chosen roots are kept across a restart, and a server that connected before they were read is told about them', async () => {
    const folder = mkdtempSync(join(dir, 'kept-'));
    const first = new RootsService({ dir: join(dir, 'kept'), chooseFolder: async () => folder, onChanged: () => {}, serverName: () => 'Notes' });
    await first.choose('notes', 'work');
    await first.flush();
    const told: string[] = [];
    const second = new RootsService({ dir: join(dir, 'kept'), onChanged: (s, a) => told.push(`${s}/${a}`), serverName: () => 'Notes' });
    await second.loaded;
    expect(second.list('notes', 'work')).toEqual([{ path: folder, name: folder.split('/').at(-1) }]);
    expect(second.forServer('notes', 'work')).toEqual([{ uri: pathToFileURL(folder).href, name: folder.split('/').at(-1) }]);
    expect(told).toEqual(['notes/work']);
  });
});

