/**
 * The theme preference in the core (no Electron): stored in settings.json through the settings
 * repository, served on `theme:get` / `theme:set`, refused cleanly when the file cannot take it.
 * The app-level behaviour (nativeTheme, window colour) is in test/unit/shell/desktop.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import type { Appearance } from '../../../electron/core/appearance/theme';
import { dispatch } from '../../../electron/core/dispatch';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';

let dir: string;
let core: WardenCore | null = null;
const open = (appearance?: Appearance) => {
  core = createCore({ version: 't', servers: { settingsStore: openConfSettingsStore(dir) }, appearance });
  return core;
};
const call = (c: WardenCore, channel: string, request: unknown) => dispatch(c.handlers, channel, request, () => {});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-theme-'));
});
afterEach(async () => {
  await core?.close();
  core = null;
  rmSync(dir, { recursive: true, force: true });
});

describe('the theme preference in the core', () => {
  it('defaults to system; without a host, system means light', async () => {
    expect(await call(open(), 'theme:get', {})).toEqual({ ok: true, value: { preference: 'system', dark: false } });
  });

  it('theme:set writes settings.json, survives a restart, and emits theme:changed once per change', async () => {
    const c = open();
    const events: unknown[] = [];
    c.events.subscribe((e, p) => e === 'theme:changed' && events.push(p));
    expect(await call(c, 'theme:set', { preference: 'dark' })).toEqual({ ok: true, value: { preference: 'dark', dark: true } });
    await call(c, 'theme:set', { preference: 'dark' });
    expect(events).toEqual([{ preference: 'dark', dark: true }]);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).preferences.theme).toBe('dark');
    await c.close();
    expect(await call(open(), 'theme:get', {})).toMatchObject({ value: { preference: 'dark' } });
  });

  it('applies the stored preference to the host when the core starts, before anything asks', async () => {
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ schemaVersion: 1, servers: [], accounts: [], preferences: { theme: 'light' } }));
    const applied: string[] = [];
    open({ apply: (p) => void applied.push(p), isDark: () => false, onChange: () => () => {} });
    expect(applied).toEqual(['light']);
  });

  it('a settings file that cannot be written refuses the change with a reason, and the theme stays', async () => {
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ schemaVersion: 1, servers: 'oops', accounts: [], preferences: {} }));
    const applied: string[] = [];
    const c = open({ apply: (p) => void applied.push(p), isDark: () => false, onChange: () => () => {} });
    const result = await call(c, 'theme:set', { preference: 'dark' });
    expect(result).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    expect(!result.ok && result.error.message).toMatch(/settings\.json is invalid/);
    expect(applied).toEqual(['system']);
  });

  it('a theme the schema does not know in settings.json is reported as the invalid field', async () => {
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ schemaVersion: 1, servers: [], accounts: [], preferences: { theme: 'purple' } }));
    const c = open();
    expect(await call(c, 'theme:get', {})).toMatchObject({ value: { preference: 'system' } });
    const result = await call(c, 'theme:set', { preference: 'light' });
    expect(!result.ok && result.error.message).toContain('preferences.theme');
  });
});
