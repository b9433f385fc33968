import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { SettingsRepository, migrateSettings } from '../../../electron/core/settings/settings-repository';
import { SETTINGS_VERSION } from '../../../electron/core/settings/settings-document';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-settings-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const server = { id: 'files-0a1b2c3d', name: 'Files', transport: 'stdio', command: 'node', args: ['srv.js'], env: [] };
const account = { id: 'files-default', serverId: 'files-0a1b2c3d', label: 'Default' };

describe('settings repository', () => {
  it('round-trips a document through a real file and starts empty when none exists', () => {
    const store = openConfSettingsStore(dir);
    const repo = SettingsRepository.open(store);
    expect(repo.problem).toBeNull();
    expect(repo.get()).toEqual({ schemaVersion: SETTINGS_VERSION, servers: [], accounts: [], preferences: {} });
    repo.update((d) => {
      d.servers.push(server as never);
      d.accounts.push(account);
    });
    const again = SettingsRepository.open(openConfSettingsStore(dir));
    expect(again.get().servers[0]).toMatchObject({ id: server.id, command: 'node', args: ['srv.js'] });
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).schemaVersion).toBe(SETTINGS_VERSION);
  });

  it('an invalid file is reported with the failing field and preserved byte for byte', () => {
    const path = join(dir, 'settings.json');
    const bad = JSON.stringify({ schemaVersion: 1, servers: [{ ...server, command: 42 }], accounts: [account], preferences: {} }, null, 2);
    writeFileSync(path, bad);
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    expect(repo.problem?.message).toMatch(/servers\.0\.command/);
    expect(() => repo.update((d) => void (d.preferences.approvalTimeoutMs = 60_000))).toThrow(/refused until it is fixed/);
    expect(readFileSync(path, 'utf8')).toBe(bad);
  });

  it('a file that is not JSON is reported and preserved; reset keeps a backup', () => {
    const path = join(dir, 'settings.json');
    writeFileSync(path, '{"schemaVersion": 1, "servers": [');
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    expect(repo.problem?.message).toMatch(/not valid JSON.*left untouched/);
    expect(readFileSync(path, 'utf8')).toBe('{"schemaVersion": 1, "servers": [');
    const backup = repo.resetKeepingBackup(0);
    expect(backup && readFileSync(backup, 'utf8')).toBe('{"schemaVersion": 1, "servers": [');
    expect(repo.problem).toBeNull();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ schemaVersion: 1, servers: [] });
  });

  it('a file from a newer Warden is refused, not downgraded', () => {
    const path = join(dir, 'settings.json');
    writeFileSync(path, JSON.stringify({ schemaVersion: 99, servers: [], future: true }));
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    expect(repo.problem?.message).toMatch(/schemaVersion: the file was written by a newer Warden \(version 99/);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ schemaVersion: 99, servers: [], future: true });
  });

  it('a version-0 file migrates: servers gain a Default account and the upgrade is written back', () => {
    const path = join(dir, 'settings.json');
    writeFileSync(path, JSON.stringify({ servers: [server] }));
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    expect(repo.problem).toBeNull();
    expect(repo.get().accounts).toEqual([{ id: `${server.id}-default`, serverId: server.id, label: 'Default' }]);
    expect(JSON.parse(readFileSync(path, 'utf8')).schemaVersion).toBe(1);
    expect(migrateSettings({ servers: [server] })).toEqual(migrateSettings(migrateSettings({ servers: [server] })));
  });

  it('an invalid change throws naming the field and changes neither file nor memory', () => {
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    repo.update((d) => {
      d.servers.push(server as never);
      d.accounts.push(account);
    });
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    expect(() =>
      repo.update((d) => {
        d.servers.push({ ...server, id: 'other-00000000', env: [{ name: 'TOKEN', secret: true, value: 'ghp_leak' }] } as never);
        d.accounts.push({ ...account, id: 'other-default', serverId: 'other-00000000' });
      }),
    ).toThrow(/servers\.1\.env\.0\.value: must be absent when secret is true/);
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
    expect(repo.get().servers).toHaveLength(1);
    expect(() => repo.update((d) => void d.accounts.pop())).toThrow(/servers\.0\.id: server "files-0a1b2c3d" has no account/);
  });

  it('a write that fails on disk is reported and leaves the in-memory settings unchanged', () => {
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    chmodSync(dir, 0o500);
    try {
      if (process.getuid?.() === 0) {
        // root ignores directory permissions; make the target a directory instead so the write fails.
        chmodSync(dir, 0o700);
        rmSync(join(dir, 'settings.json'), { force: true });
        mkdirSync(join(dir, 'settings.json'));
      }
      expect(() => repo.update((d) => void (d.preferences.approvalTimeoutMs = 60_000))).toThrow(/settings\.json could not be written .*nothing was changed/);
      expect(repo.get().preferences.approvalTimeoutMs).toBeUndefined();
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  it('snapshots are frozen: mutating one changes nothing stored', () => {
    const repo = SettingsRepository.open(openConfSettingsStore(dir));
    expect(() => (repo.get().servers as unknown[]).push(server)).toThrow();
    expect(repo.get().servers).toHaveLength(0);
    expect(existsSync(join(dir, 'settings.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).servers).toEqual([]);
  });
});
