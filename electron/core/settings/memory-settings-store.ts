/**
 * A SettingsStore held in memory: for the offline demo and for hosts that pass no store. Same
 * contract as the file stores (a JSON object in, a copy out), nothing persisted.
 */
import type { SettingsStore } from './settings-store';

/** Creates an in-memory SettingsStore, optionally seeded with a document. */
export function memorySettingsStore(initial: Record<string, unknown> = {}): SettingsStore {
  let doc = structuredClone(initial);
  return {
    path: '(memory)',
    read: () => structuredClone(doc),
    write: (next) => {
      doc = structuredClone(next);
    },
  };
}
