/**
 * The permission matrix and its companions through the real core, with a real spawned stdio
 * server (the rug-pull fixture) and two accounts: every configured account is listed whether
 * connected or not, a disconnected one with the tools of its last listing (kept on disk across a
 * restart), explanations name things, and the sample-call check is answered by the real gate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ApprovalPreview } from '../../../electron/core/ports';
import type { ChannelName, ResponseOf } from '../../../shared/ipc';
import type { AccountView, ServerView } from '../../../shared/domain/servers';
import { memorySettingsStore } from '../../../electron/core/settings/memory-settings-store';
import type { SettingsStore } from '../../../electron/core/settings/settings-store';
import { stdioFixture } from '../mcp/helpers';
import { MapKeychain } from '../chat/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await core?.close();
  core = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const shown: ApprovalPreview[] = [];
const answer = 'approve' as const;

function start(listingsDir?: string, settings?: { secrets: MapKeychain; settingsStore: SettingsStore }) {
  return createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    servers: { secrets: settings?.secrets ?? new MapKeychain(), ...(settings ? { settingsStore: settings.settingsStore } : {}) },
    gate: { prompter: { prompt: async (p) => (shown.push(p), answer) } },
    connections: { reconnect: { maxAttempts: 0 } },
    ...(listingsDir ? { listingsDir } : {}),
  });
}

async function call<C extends ChannelName>(channel: C, request: unknown): Promise<ResponseOf<C>> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as ResponseOf<C>;
}

/** The weather fixture with two accounts, Work (connected) and Personal. */
async function weatherWithTwoAccounts() {
  const def = stdioFixture('ignored', 'rug-pull');
  const added = await call('servers:add', { definition: { name: 'Weather', transport: 'stdio', command: def.command, args: def.args, env: [] }, accountLabel: 'Work' });
  const serverId = (added as ServerView).definition.id;
  const work = (added as ServerView).accounts[0]!.id;
  const personal = ((await call('accounts:add', { serverId, label: 'Personal' })) as AccountView).id;
  return { serverId, work, personal };
}

describe('the permission matrix', () => {
  it('lists every configured account, connected or not; a disconnected one shows the tools of its last listing, marked as such, with names and no ids in any explanation', async () => {
    shown.length = 0;
    core = start();
    const { serverId, work, personal } = await weatherWithTwoAccounts();
    await call('connections:connect', { serverId, accountId: work });
    let m = await call('permissions:matrix', {});
    const server = m.servers!.find((s) => s.serverId === serverId)!;
    expect(server).toMatchObject({ label: 'Weather', location: 'A program on this computer', mode: null });
    expect(server.accounts.map((a) => [a.label, a.connection, a.toolsFrom, a.toolCount, a.active])).toEqual([
      ['Work', 'connected', 'live', 2, true],
      ['Personal', 'disconnected', 'none', 0, false],
    ]);
    // Personal can be set up before it was ever connected: its group rule applies when it connects.
    await call('permissions:set', { scope: 'server', serverId, accountId: personal, mode: 'disabled' });
    await call('connections:connect', { serverId, accountId: personal });
    await call('connections:disconnect', { serverId, accountId: personal });
    m = await call('permissions:matrix', {});
    const personalView = m.servers!.find((s) => s.serverId === serverId)!.accounts[1]!;
    expect(personalView).toMatchObject({ label: 'Personal', connection: 'disconnected', toolsFrom: 'last-listing', toolCount: 2, mode: 'disabled' });
    expect(personalView.explanation).toMatch(/^Disabled: you set Disabled for all tools of Weather \(Personal\)/);
    const rows = m.rows.filter((r) => r.serverId === serverId);
    expect(rows.map((r) => [r.accountLabel, r.toolName, r.source, r.effective])).toEqual([
      ['Work', 'get_weather', 'live', 'ask'],
      ['Work', 'next_stage', 'live', 'ask'],
      ['Personal', 'get_weather', 'last-listing', 'deny'],
      ['Personal', 'next_stage', 'last-listing', 'deny'],
    ]);
    expect(rows[2]!.explanation).toBe('Disabled: you set Disabled for all tools of Weather (Personal)');
    expect(rows[0]!.explanation).toBe('Asks: you have not chosen a mode for get_weather on Weather (Work), and a tool Warden discovers always asks until you do');
    expect(rows[0]!.claims).toEqual(['read-only']);
    for (const text of [...rows.map((r) => r.explanation), ...m.servers!.flatMap((s) => [s.explanation, ...s.accounts.map((a) => a.explanation)])]) {
      expect(text).not.toContain(serverId);
      expect(text).not.toContain(work);
      expect(text).not.toContain(personal);
    }
  });

  it('with the Disabled default from Settings, a tool with no mode is shown Disabled and says why, as the gate decides it', async () => {
    shown.length = 0;
    core = start();
    const { serverId, work } = await weatherWithTwoAccounts();
    await call('connections:connect', { serverId, accountId: work });
    await call('settings:set', { defaultToolMode: 'disabled' });
    const m = await call('permissions:matrix', {});
    const row = m.rows.find((r) => r.serverId === serverId && r.accountId === work && r.toolName === 'get_weather')!;
    expect(row).toMatchObject({ effective: 'deny', mode: null });
    expect(row.explanation).toMatch(/^Disabled: you have not chosen a mode for get_weather on Weather \(Work\), and your default for such tools is Disabled/);
    expect(m.servers!.find((s) => s.serverId === serverId)!.explanation).toMatch(/Disabled \(your default in Settings\)/);
  });

  it('what an account listed survives a restart: a new core shows its tools from that listing before it connects', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-listings-'));
    dirs.push(dir);
    const kept = { secrets: new MapKeychain(), settingsStore: memorySettingsStore() };
    core = start(dir, kept);
    const { serverId, work } = await weatherWithTwoAccounts();
    await call('connections:connect', { serverId, accountId: work });
    await core.close();
    // A new core over the same settings and the same listings folder: nothing is connected.
    core = start(dir, kept);
    await core.permissions.ready;
    const m = await call('permissions:matrix', {});
    expect(m.servers!.find((s) => s.serverId === serverId)!.accounts[0]).toMatchObject({ label: 'Work', connection: 'disconnected', toolsFrom: 'last-listing', toolCount: 2 });
    expect(m.rows.filter((r) => r.serverId === serverId).map((r) => [r.toolName, r.source, r.effective])).toEqual([
      ['get_weather', 'last-listing', 'ask'],
      ['next_stage', 'last-listing', 'ask'],
    ]);
  });

  it('"would this call be allowed?" is answered by the real gate, with a rule not saved yet, and says why', async () => {
    core = start();
    const { serverId, work } = await weatherWithTwoAccounts();
    await call('connections:connect', { serverId, accountId: work });
    const base = { serverId, accountId: work, toolName: 'get_weather' };
    const draft = { constraints: [{ op: 'oneOf', field: 'city', value: ['Oslo', 'Bergen'] }], mode: 'allow' };
    expect(await call('permissions:check', { ...base, arguments: { city: 'Oslo' }, draft })).toEqual({
      outcome: 'allow',
      reason: 'Allowed: you set Always Allow for get_weather on Weather (Work) when city is one of "Oslo", "Bergen"',
      summary: 'Run get_weather with city "Oslo"',
    });
    expect(await call('permissions:check', { ...base, arguments: { city: 'Paris' }, draft })).toMatchObject({ outcome: 'ask' });
    expect(await call('permissions:check', { ...base, arguments: { town: 'Oslo' }, draft })).toMatchObject({ outcome: 'invalid', reason: expect.stringMatching(/^Invalid arguments: arguments\.city: required/) });
    // Nothing was saved, nothing was sent, no operation exists.
    expect(core.gate.policy.current().user).toEqual([]);
    expect(core.gate.gate.list()).toEqual([]);
  });
});
