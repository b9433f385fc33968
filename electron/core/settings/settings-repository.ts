/**
 * The settings repository: loads the document through the SettingsStore port (migrating and
 * validating it), hands out read-only snapshots, and applies changes all-or-nothing.
 *
 * Invalid content is never silently dropped: if the file cannot be read, is from a newer Warden,
 * or fails validation, the repository opens in a "broken" state that reports exactly which field
 * is wrong, refuses every write (so the file is preserved byte for byte), and only replaces it
 * when a person explicitly asks (`resetKeepingBackup`, which first copies it aside).
 */
import { existsSync, renameSync } from 'node:fs';
import { WardenError } from '../../../shared/result';
import { describeIssues } from '../dispatch';
import { MIGRATIONS, SETTINGS_VERSION, SettingsDocument, emptySettings, type Migration } from './settings-document';
import { SettingsFileError, type SettingsStore } from './settings-store';

/** Why the settings could not be loaded; shown to the person so they can fix the file. */
export interface SettingsProblem {
  path: string;
  message: string;
}

/** Deep-freezes a JSON value so snapshots handed out cannot be mutated behind the repository's back. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Upgrades a raw document to the current version with `migrations`.
 *
 * Refuses (throws) a document from a newer version: silently downgrading it would lose whatever
 * the newer version stored.
 */
export function migrateSettings(
  raw: Record<string, unknown>,
  migrations: Readonly<Record<number, Migration>> = MIGRATIONS,
  target = SETTINGS_VERSION,
): Record<string, unknown> {
  let doc = structuredClone(raw);
  let version = doc.schemaVersion === undefined ? 0 : doc.schemaVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) {
    throw new WardenError('VALIDATION_FAILED', `schemaVersion: expected a non-negative integer, got ${JSON.stringify(version)}`);
  }
  if (version > target) {
    throw new WardenError(
      'VALIDATION_FAILED',
      `schemaVersion: the file was written by a newer Warden (version ${version}; this one understands up to ${target})`,
    );
  }
  while (version < target) {
    const step = migrations[version];
    if (!step) throw new WardenError('INTERNAL', `schemaVersion: no migration from version ${version}`);
    doc = step(doc);
    version += 1;
    doc.schemaVersion = version;
  }
  return doc;
}

/** The one owner of the settings document in memory and on disk (see the file comment). */
export class SettingsRepository {
  private current: SettingsDocument;
  private broken: SettingsProblem | null;
  private readonly listeners = new Set<(doc: SettingsDocument) => void>();

  private constructor(
    private readonly store: SettingsStore,
    doc: SettingsDocument,
    problem: SettingsProblem | null,
  ) {
    this.current = deepFreeze(doc);
    this.broken = problem;
  }

  /**
   * Loads, migrates and validates the settings.
   *
   * A migrated document is written back only when it validates; an invalid one opens the
   * repository in the broken state (see class doc) with an empty in-memory document.
   */
  static open(store: SettingsStore, migrations: Readonly<Record<number, Migration>> = MIGRATIONS): SettingsRepository {
    let raw: Record<string, unknown>;
    try {
      raw = store.read();
    } catch (error) {
      const message = error instanceof SettingsFileError ? error.message : `Settings file ${store.path} could not be read: ${String(error)}`;
      return new SettingsRepository(store, emptySettings(), { path: store.path, message });
    }
    let migrated: Record<string, unknown>;
    try {
      migrated = migrateSettings(raw, migrations);
    } catch (error) {
      return new SettingsRepository(store, emptySettings(), {
        path: store.path,
        message: `Settings file ${store.path}: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    const parsed = SettingsDocument.safeParse(migrated);
    if (!parsed.success) {
      return new SettingsRepository(store, emptySettings(), {
        path: store.path,
        message: `Settings file ${store.path} is invalid: ${describeIssues(parsed.error.issues)}. It was left untouched; fix it or reset it (a backup is kept).`,
      });
    }
    const repo = new SettingsRepository(store, parsed.data, null);
    if (raw.schemaVersion !== SETTINGS_VERSION) {
      // Writing the upgrade back is an optimisation; a read-only file must not stop the app. The
      // next real change reports the write failure to the person.
      try {
        store.write(structuredClone(parsed.data) as Record<string, unknown>);
      } catch {
        /* reported on the next update() */
      }
    }
    return repo;
  }

  /** Where the settings file is (for Settings and for messages). */
  get path(): string {
    return this.store.path;
  }

  /** The load problem, or null when the settings loaded cleanly. */
  get problem(): SettingsProblem | null {
    return this.broken;
  }

  /** The current document, deep-frozen. */
  get(): SettingsDocument {
    return this.current;
  }

  /**
   * Applies `change` to a copy of the document, validates it and writes it; all or nothing.
   *
   * A change that makes the document invalid throws VALIDATION_FAILED naming the field and leaves
   * both the file and the in-memory document as they were.
   */
  update(change: (draft: SettingsDocument) => void): SettingsDocument {
    if (this.broken) {
      throw new WardenError('CONFLICT', `${this.broken.message} Changes are refused until it is fixed or reset.`);
    }
    const draft = structuredClone(this.current) as SettingsDocument;
    change(draft);
    const parsed = SettingsDocument.safeParse(draft);
    if (!parsed.success) throw new WardenError('VALIDATION_FAILED', describeIssues(parsed.error.issues));
    try {
      this.store.write(structuredClone(parsed.data) as Record<string, unknown>);
    } catch (error) {
      throw new WardenError('INTERNAL', `Settings file ${this.store.path} could not be written (${error instanceof Error ? error.message : String(error)}); nothing was changed`);
    }
    this.current = deepFreeze(parsed.data);
    for (const l of this.listeners) l(this.current);
    return this.current;
  }

  /** Subscribes to successful changes; returns an unsubscribe function. */
  onChange(listener: (doc: SettingsDocument) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Explicit recovery from a broken file: moves it to `<file>.invalid-<time>` and starts empty.
   * Returns the backup path (null if there was no file). Only a person's action calls this.
   */
  resetKeepingBackup(now: number = Date.now()): string | null {
    let backup: string | null = null;
    if (existsSync(this.store.path)) {
      backup = `${this.store.path}.invalid-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
      // Moved aside, not copied: a store that failed to parse the old file then starts from nothing.
      renameSync(this.store.path, backup);
    }
    const fresh = emptySettings();
    this.store.write(structuredClone(fresh) as Record<string, unknown>);
    this.current = deepFreeze(fresh);
    this.broken = null;
    for (const l of this.listeners) l(this.current);
    return backup;
  }
}
