/**
 * Where configured model providers live between runs: a small versioned document in its own
 * settings file (`models.json` next to `settings.json`), validated on load.
 *
 * Its own file because it is its own domain (nothing in it refers to servers or accounts) and so
 * that a broken providers file never blocks the servers. Same rules as the other settings files:
 * a file that is unreadable, invalid or from a newer Warden is left untouched, reported with the
 * field that is wrong, and every change is refused until it is fixed; a change is validated as a
 * whole document and written atomically (temp file + rename) or not at all. API keys are never
 * part of it.
 */
import { z } from 'zod';
import { WardenError } from '../../../shared/result';
import { ProviderConfig } from '../../../shared/domain/model-providers';
import { describeIssues } from '../dispatch';
import type { SettingsStore } from '../settings/settings-store';

/** The version this build writes. */
export const MODELS_FILE_VERSION = 1;

const ModelsDocument = z
  .object({
    version: z.literal(MODELS_FILE_VERSION),
    providers: z.array(ProviderConfig).max(200, 'at most 200 providers'),
  })
  .strict()
  .superRefine((doc, ctx) => {
    const ids = new Set<string>();
    doc.providers.forEach((p, i) => {
      if (ids.has(p.id)) ctx.addIssue({ code: 'custom', path: ['providers', i, 'id'], message: `duplicate provider id "${p.id}"` });
      ids.add(p.id);
    });
  });
type ModelsDocument = z.infer<typeof ModelsDocument>;

/** The providers document in memory, backed by its settings file. */
export class ProviderSettings {
  private providers: readonly ProviderConfig[];

  private constructor(
    private readonly store: SettingsStore,
    providers: readonly ProviderConfig[],
    /** Why the file could not be used; null when it loaded cleanly. */
    readonly problem: string | null,
  ) {
    this.providers = Object.freeze(providers.map((p) => Object.freeze({ ...p })));
  }

  /** Loads `store`; an empty or missing file means no providers. Never throws and never writes. */
  static open(store: SettingsStore): ProviderSettings {
    let raw: Record<string, unknown>;
    try {
      raw = store.read();
    } catch (error) {
      return new ProviderSettings(store, [], `${store.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (Object.keys(raw).length === 0) return new ProviderSettings(store, [], null);
    if (typeof raw.version === 'number' && raw.version > MODELS_FILE_VERSION) {
      return new ProviderSettings(store, [], `${store.path} was written by a newer Warden (version ${raw.version}); it was left untouched`);
    }
    const parsed = ModelsDocument.safeParse(raw);
    if (!parsed.success) {
      return new ProviderSettings(
        store,
        [],
        `${store.path} is not a valid model providers file (${describeIssues(parsed.error.issues)}); it was left untouched and no provider from it is used until it is fixed`,
      );
    }
    return new ProviderSettings(store, parsed.data.providers, null);
  }

  /** Every configured provider, in the order they were added (frozen). */
  list(): readonly ProviderConfig[] {
    return this.providers;
  }

  /** One provider, or undefined. */
  get(providerId: string): ProviderConfig | undefined {
    return this.providers.find((p) => p.id === providerId);
  }

  /**
   * Applies `change` to a copy of the providers, validates the whole document and writes it; all
   * or nothing. Throws CONFLICT while the file is unusable, VALIDATION_FAILED naming the field.
   */
  update(change: (draft: ProviderConfig[]) => void): readonly ProviderConfig[] {
    if (this.problem) throw new WardenError('CONFLICT', `${this.problem}. Changes are refused until it is fixed.`);
    const draft = this.providers.map((p) => ({ ...p }));
    change(draft);
    const parsed = ModelsDocument.safeParse({ version: MODELS_FILE_VERSION, providers: draft } satisfies ModelsDocument);
    if (!parsed.success) throw new WardenError('VALIDATION_FAILED', describeIssues(parsed.error.issues));
    try {
      this.store.write(JSON.parse(JSON.stringify(parsed.data)) as Record<string, unknown>);
    } catch (error) {
      throw new WardenError('INTERNAL', `${this.store.path} could not be written (${error instanceof Error ? error.message : String(error)}); nothing was changed`);
    }
    this.providers = Object.freeze(parsed.data.providers.map((p) => Object.freeze({ ...p })));
    return this.providers;
  }
}
