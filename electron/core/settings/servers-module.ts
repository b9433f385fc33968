/**
 * Assembles the servers/accounts/secrets part of the core from its ports, so app-core wires it
 * with a few lines. Import from other apps builds on this (import/import-module.ts); nothing here
 * knows it exists.
 */
import type { CoreEvents } from '../events';
import type { Clock, Journal } from '../ports';
import { KeytarSecretStore, type ListableSecretStore } from '../secrets/keytar-secret-store';
import { memorySettingsStore } from './memory-settings-store';
import { confirmServerChanges, refusingServerConfirmer, type ServerChangeConfirmer } from './server-confirmation';
import { createServerHandlers } from './server-handlers';
import { ServerService } from './server-service';
import { SettingsRepository } from './settings-repository';
import type { SettingsStore } from './settings-store';

/** What a host may pass in; everything has a safe default. */
export interface ServersModuleOptions {
  /** Where settings live (electron-store in the app, conf in tests). Default: in memory. */
  settingsStore?: SettingsStore;
  /** The keychain. Default: keytar under service "Warden" (never a plaintext fallback). */
  secrets?: ListableSecretStore;
  /** Told every secret value read or written (the ledger redactor). Only used for the default keytar store. */
  onSecretValue?: (value: string) => void;
  /**
   * Main's native confirmation before a server definition is saved (add, edit), a local
   * server's env secret gets a new value, or an account bringing env secrets is added. Default:
   * refuses with a plain error, so a core without dialogs never saves a server unconfirmed.
   */
  confirmChange?: ServerChangeConfirmer;
}

/** Builds the settings repository, server service and their contract handlers (changes confirmed first). */
export function createServersModule(options: ServersModuleOptions & { clock: Clock; journal: Journal; events: CoreEvents }) {
  const settings = SettingsRepository.open(options.settingsStore ?? memorySettingsStore());
  const secrets = options.secrets ?? new KeytarSecretStore({ onSecretValue: options.onSecretValue });
  // The redactor must know secrets stored by earlier runs before anything could echo them; a
  // keychain that is unavailable now simply has nothing to announce.
  if (!options.secrets && options.onSecretValue) void (secrets as KeytarSecretStore).announceAll().catch(() => undefined);
  const service = new ServerService({ settings, secrets, clock: options.clock, journal: options.journal });
  const plain = createServerHandlers(service, options.events);
  const handlers = confirmServerChanges(plain.handlers, { servers: service }, options.confirmChange ?? refusingServerConfirmer);
  const dispose = plain.dispose;
  return { settings, secrets, service, handlers, dispose };
}
