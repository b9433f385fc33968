/**
 * The SettingsStore port: where the settings document lives on disk.
 *
 * Deliberately tiny and untyped: it reads and writes one JSON object. Validation, schema versions
 * and migrations are the repository's job (settings-repository.ts), so the same rules apply to
 * the `conf` adapter used in tests and the electron-store adapter used by the app.
 */

/** Why a settings file could not be read at all (not JSON, unreadable). */
export class SettingsFileError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingsFileError';
  }
}

/** Raw access to the settings file. Implementations must write atomically (temp file + rename). */
export interface SettingsStore {
  /** Absolute path of the file, for messages and for tests that scan its bytes. */
  readonly path: string;
  /**
   * The parsed JSON object, `{}` when the file does not exist yet.
   * Throws SettingsFileError when the file exists but is not a JSON object; never deletes it.
   */
  read(): Record<string, unknown>;
  /** Replaces the whole file atomically. */
  write(document: Record<string, unknown>): void;
}
