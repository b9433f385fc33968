/**
 * The app's SettingsStore: electron-store (v11) in the user-data folder, adapted to the core's
 * port. electron-store extends conf, so this is the same atomic-write store the tests use; it is
 * created with no schema, no defaults, no migrations and `clearInvalidConfig: false`, so it never
 * rewrites or clears what it found — validation and migrations are the core's SettingsRepository.
 */
import { join } from 'node:path';
import { app } from 'electron';
import ElectronStore from 'electron-store';
import { confSettingsStore, type ConfLike } from '../core/settings/conf-settings-store';
import type { SettingsStore } from '../core/settings/settings-store';

/**
 * Opens `<userData>/settings.json` as a SettingsStore.
 *
 * Why here and not in core: electron-store imports `electron` to find the user-data folder.
 */
export function openElectronSettingsStore(name = 'settings'): SettingsStore {
  const dir = app.getPath('userData');
  const create = () =>
    new ElectronStore<Record<string, unknown>>({
      name,
      cwd: dir,
      clearInvalidConfig: false,
      accessPropertiesByDotNotation: false,
      configFileMode: 0o600,
    }) as unknown as ConfLike;
  return confSettingsStore(create, join(dir, `${name}.json`));
}
