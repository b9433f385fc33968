import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Electron itself is mocked (it cannot run here); electron-store and conf underneath are real.
const userData = mkdtempSync(join(tmpdir(), 'warden-userdata-'));
vi.mock('electron', () => {
  const electron = {
    app: { getPath: (name: string) => (name === 'userData' ? userData : '/nonexistent'), getVersion: () => '0.1.0' },
    ipcMain: { on: () => undefined },
  };
  return { default: electron, ...electron };
});

const { openElectronSettingsStore } = await import('../../../electron/main/electron-settings-store');
const { SettingsRepository } = await import('../../../electron/core/settings/settings-repository');

afterAll(() => rmSync(userData, { recursive: true, force: true }));

describe('electron-store settings adapter', () => {
  it('stores settings.json in the user-data folder, readable only by the user, through the same repository rules', () => {
    const repo = SettingsRepository.open(openElectronSettingsStore());
    repo.update((d) => void (d.preferences.approvalTimeoutMs = 120_000));
    const path = join(userData, 'settings.json');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ schemaVersion: 1, preferences: { approvalTimeoutMs: 120_000 } });
    expect(statSync(path).mode & 0o077).toBe(0);
    expect(SettingsRepository.open(openElectronSettingsStore()).get().preferences.approvalTimeoutMs).toBe(120_000);
  });

  it('an unreadable file is reported and left untouched (electron-store never clears it)', () => {
    writeFileSync(join(userData, 'broken.json'), '{ nope');
    const repo = SettingsRepository.open(openElectronSettingsStore('broken'));
    expect(repo.problem?.message).toMatch(/broken\.json is not valid JSON/);
    expect(readFileSync(join(userData, 'broken.json'), 'utf8')).toBe('{ nope');
  });
});
