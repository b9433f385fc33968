/**
 * The servers/accounts/secrets contract, end to end through the core's dispatch (as the renderer
 * reaches it), against the REAL keychain and a real settings file. Run with scripts/with-keyring.sh.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { ChannelName } from '../../../shared/ipc';
import type { Result } from '../../../shared/result';
import { filesContaining } from './scan';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

const store = new KeytarSecretStore({ service: `Warden-contract-test-${process.pid}-${randomBytes(3).toString('hex')}` });
let dir: string;
let core: WardenCore;
const seenByRenderer: unknown[] = [];

async function call<T = Record<string, unknown>>(channel: ChannelName, request: unknown): Promise<Result<T>> {
  const r = (await dispatch(core.handlers, channel, request, () => {})) as Result<T>;
  seenByRenderer.push(r);
  return r;
}
async function ok<T = Record<string, unknown>>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await call<T>(channel, request);
  if (!r.ok) throw new Error(`${channel} failed: ${r.error.code} ${r.error.message}`);
  return r.value;
}

beforeAll(() => {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) throw new Error('No D-Bus session: run with scripts/with-keyring.sh (real OS keychain)');
  dir = mkdtempSync(join(tmpdir(), 'warden-contract-'));
  core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: { settingsStore: openConfSettingsStore(dir), secrets: store } });
  core.events.subscribe((event, payload) => seenByRenderer.push({ event, payload }));
});
afterAll(async () => {
  await core.close();
  for (const k of await store.keys('')) await store.delete(k);
  rmSync(dir, { recursive: true, force: true });
});

describe('servers contract', () => {
  it('bad input is refused with a clear error naming the field', async () => {
    const http = await call('servers:add', { definition: { name: 'R', transport: 'http', url: 'http://remote.example.com/mcp' } });
    expect(http).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(!http.ok && http.error.message).toMatch(/definition\.url: plain http is only allowed on loopback/);
    const env = await call('servers:add', { definition: { name: 'S', transport: 'stdio', command: 'x', env: [{ name: 'K', secret: true, value: 'v' }] } });
    expect(!env.ok && env.error.message).toMatch(/definition\.env\.0\.value: must be absent when secret is true/);
    const unknown = await call('secrets:set', { serverId: 'nope-00000000', accountId: 'a', name: 'bearer', value: 'x' });
    expect(unknown).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'serverId: no server "nope-00000000"' } });
    const noCommand = await call('servers:add', { definition: { name: 'S', transport: 'stdio', command: '' } });
    expect(!noCommand.ok && noCommand.error.message).toMatch(/definition\.command: must not be empty/);
  });

  it('no secret value ever comes back to the renderer, in responses or events, and none is in the settings file', async () => {
    const token = `ghp_${randomBytes(20).toString('hex')}`;
    const bearer = `tok-${randomBytes(20).toString('hex')}`;
    const personalToken = `ghp_${randomBytes(20).toString('hex')}`;
    const added = await ok<{ definition: { id: string }; accounts: Array<{ id: string }>; commandLine: string }>('servers:add', {
      definition: { name: 'GitHub', transport: 'stdio', command: 'docker', args: ['run', '-i', '--rm', '-e', 'GITHUB_TOKEN', 'ghcr.io/github/github-mcp-server'], env: [{ name: 'GITHUB_TOKEN', secret: true }] },
      accountLabel: 'Work',
      secrets: [{ name: 'env:GITHUB_TOKEN', value: token }],
    });
    expect(added.commandLine).toBe('docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server');
    const serverId = added.definition.id;
    const personal = await ok<{ id: string }>('accounts:add', { serverId, label: 'Personal' });
    expect(await ok('secrets:set', { serverId, accountId: personal.id, name: 'env:GITHUB_TOKEN', value: personalToken })).toEqual({
      serverId,
      accountId: personal.id,
      name: 'env:GITHUB_TOKEN',
      hasSecret: true,
    });
    const remote = await ok<{ definition: { id: string }; accounts: Array<{ id: string }> }>('servers:add', {
      definition: { name: 'Remote', transport: 'http', url: 'https://mcp.example.com/mcp', auth: { kind: 'bearer' } },
      secrets: [{ name: 'bearer', value: bearer }],
    });
    await ok('accounts:rename', { accountId: personal.id, label: 'Home' });
    await ok('accounts:switch', { conversationId: 'c1', serverId, accountId: personal.id });
    const list = await ok<{ servers: Array<{ accounts: Array<{ label: string; secrets: unknown[] }> }>; keychainProblem: null; settingsProblem: null }>('servers:list', {});
    expect(list.keychainProblem).toBeNull();
    expect(list.settingsProblem).toBeNull();
    expect(list.servers[0]!.accounts.map((a) => [a.label, a.secrets])).toEqual([
      ['Work', [{ name: 'env:GITHUB_TOKEN', hasSecret: true }]],
      ['Home', [{ name: 'env:GITHUB_TOKEN', hasSecret: true }]],
    ]);
    await ok('secrets:clear', { serverId: remote.definition.id, accountId: remote.accounts[0]!.id, name: 'bearer' });
    await ok('accounts:list', {});
    expect(core.status().servers.configured).toBe(2);

    const everything = JSON.stringify(seenByRenderer);
    for (const v of [token, bearer, personalToken]) {
      expect(everything).not.toContain(v);
      expect(filesContaining(dir, v)).toEqual([]);
    }
    expect(seenByRenderer).toContainEqual({ event: 'accounts:switched', payload: { conversationId: 'c1', serverId, accountId: personal.id, previousAccountId: null } });
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toContain('GITHUB_TOKEN');
  });

  it('a failed keychain write leaves settings unchanged and undoes the secrets already written', async () => {
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    const keysBefore = await store.keys('');
    const first = `first-${randomBytes(16).toString('hex')}`;
    // 9000 × "é" is 18000 bytes: within the contract's character limit, beyond the keychain limit.
    const r = await call('servers:add', {
      definition: { name: 'Two', transport: 'stdio', command: 'x', env: [{ name: 'A_KEY', secret: true }, { name: 'B_KEY', secret: true }] },
      secrets: [
        { name: 'env:A_KEY', value: first },
        { name: 'env:B_KEY', value: 'é'.repeat(9000) },
      ],
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
    expect(await store.keys('')).toEqual(keysBefore);
    expect(filesContaining(dir, first)).toEqual([]);
  });

  it('an invalid settings file is reported through the contract with the field, and changes are refused', async () => {
    const brokenDir = mkdtempSync(join(tmpdir(), 'warden-contract-broken-'));
    const content = JSON.stringify({ schemaVersion: 1, servers: [{ id: 'x-1', name: 'X', transport: 'stdio', command: 'x', args: 'not-a-list', env: [] }], accounts: [], preferences: {} });
    writeFileSync(join(brokenDir, 'settings.json'), content);
    const broken = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: { settingsStore: openConfSettingsStore(brokenDir), secrets: store } });
    try {
      const list = await dispatch(broken.handlers, 'servers:list', {});
      expect(list.ok && (list.value as { settingsProblem: string }).settingsProblem).toMatch(/settings\.json is invalid: servers\.0\.args/);
      const add = await dispatch(broken.handlers, 'servers:add', { definition: { name: 'S', transport: 'stdio', command: 's' } });
      expect(add).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
      expect(readFileSync(join(brokenDir, 'settings.json'), 'utf8')).toBe(content);
    } finally {
      await broken.close();
      rmSync(brokenDir, { recursive: true, force: true });
    }
  });

  it('removing a server deletes its keychain entries', async () => {
    const { servers } = await ok<{ servers: Array<{ definition: { id: string } }> }>('servers:list', {});
    const id = servers[0]!.definition.id;
    expect((await store.keys(`${id}/`)).length).toBe(2);
    expect(await ok('servers:remove', { serverId: id })).toEqual({ serverId: id, deletedSecrets: 2 });
    expect(await store.keys(`${id}/`)).toEqual([]);
  });
});
