/**
 * SettingsStore over `conf` (atomic JSON file writes). Used by tests and by anything running the
 * core in plain Node; the app uses the electron-store adapter (electron/main), which is the same
 * class underneath (electron-store extends conf).
 */
import { join } from 'node:path';
import Conf from 'conf';
import { SettingsFileError, type SettingsStore } from './settings-store';

/** The part of a `conf` / `electron-store` instance the adapter uses. */
export interface ConfLike {
  readonly path: string;
  store: Record<string, unknown>;
}

/**
 * Adapts a conf-like store, created lazily by `create`, to the SettingsStore port.
 *
 * Why lazily: conf parses the file in its constructor and throws on invalid JSON; constructing on
 * first read turns that into a SettingsFileError naming the file, and leaves the file untouched
 * (conf is always created with `clearInvalidConfig: false`, no schema, no defaults, no
 * migrations, so it never rewrites or clears what it found).
 */
export function confSettingsStore(create: () => ConfLike, path: string): SettingsStore {
  let conf: ConfLike | undefined;
  const open = (): ConfLike => {
    if (conf) return conf;
    try {
      conf = create();
      return conf;
    } catch (error) {
      throw new SettingsFileError(path, describeReadError(path, error));
    }
  };
  return {
    path,
    read() {
      let value: unknown;
      try {
        value = open().store;
      } catch (error) {
        if (error instanceof SettingsFileError) throw error;
        throw new SettingsFileError(path, describeReadError(path, error));
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new SettingsFileError(path, `Settings file ${path} does not contain a JSON object`);
      }
      return value as Record<string, unknown>;
    },
    write(document) {
      open().store = document;
    },
  };
}

function describeReadError(path: string, error: unknown): string {
  const why = error instanceof Error ? error.message : String(error);
  return error instanceof SyntaxError || /JSON/i.test(why)
    ? `Settings file ${path} is not valid JSON (${why}); it was left untouched`
    : `Settings file ${path} could not be read: ${why}`;
}

/**
 * A conf-backed settings store at `<dir>/<name>.json`.
 *
 * File mode 0600: settings hold no secrets, but they do hold command lines and URLs that are
 * nobody else's business.
 */
export function openConfSettingsStore(dir: string, name = 'settings'): SettingsStore {
  const create = () =>
    new Conf<Record<string, unknown>>({
      cwd: dir,
      configName: name,
      clearInvalidConfig: false,
      accessPropertiesByDotNotation: false,
      configFileMode: 0o600,
    }) as unknown as ConfLike;
  return confSettingsStore(create, join(dir, `${name}.json`));
}
