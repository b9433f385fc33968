/**
 * Assembles the servers/accounts/secrets/import part of the core from its ports, so app-core
 * wires it with a few lines.
 */
import { homedir } from 'node:os';
import type { CoreEvents } from '../events';
import { ImportService } from '../import/import-service';
import type { LocationContext } from '../import/config-locations';
import { WardenError } from '../../../shared/result';
import type { Clock, FileDialogs, Journal } from '../ports';
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
  /** Platform/env/home for default import locations. Default: this process's. */
  importLocation?: Omit<LocationContext, 'workspaceFolder'>;
  /** Told every secret value read or written (the ledger redactor). Only used for the default keytar store. */
  onSecretValue?: (value: string) => void;
  /** Main's native file choosers (import reads only a file chosen there). Default: refuses, so a headless core opens no file. */
  fileDialogs?: FileDialogs;
  /**
   * Main's native confirmation before a server definition is saved (add, edit, import), a local
   * server's env secret gets a new value, or an account bringing env secrets is added. Default:
   * refuses with a plain error, so a core without dialogs never saves a server unconfirmed.
   */
  confirmChange?: ServerChangeConfirmer;
}

/** File choosers for hosts that have none: refuse with a clear error, so no file is ever read. */
export const refusingFileDialogs: FileDialogs = {
  openFile: async () => {
    throw new WardenError('UNSUPPORTED', 'This host cannot show a file chooser; import from the Warden app');
  },
  saveFile: async () => {
    throw new WardenError('UNSUPPORTED', 'This host cannot show a save dialog; export from the Warden app');
  },
};

/** Builds the settings repository, server service, importer and their contract handlers (changes confirmed first). */
export function createServersModule(options: ServersModuleOptions & { clock: Clock; journal: Journal; events: CoreEvents }) {
  const settings = SettingsRepository.open(options.settingsStore ?? memorySettingsStore());
  const secrets = options.secrets ?? new KeytarSecretStore({ onSecretValue: options.onSecretValue });
  // The redactor must know secrets stored by earlier runs before anything could echo them; a
  // keychain that is unavailable now simply has nothing to announce.
  if (!options.secrets && options.onSecretValue) void (secrets as KeytarSecretStore).announceAll().catch(() => undefined);
  const service = new ServerService({ settings, secrets, clock: options.clock, journal: options.journal });
  const importer = new ImportService({
    servers: service,
    clock: options.clock,
    location: options.importLocation ?? { platform: process.platform, env: process.env, home: homedir() },
    fileDialogs: options.fileDialogs ?? refusingFileDialogs,
  });
  const plain = createServerHandlers(service, importer, options.events);
  const handlers = confirmServerChanges(plain.handlers, { servers: service, importer }, options.confirmChange ?? refusingServerConfirmer);
  const dispose = plain.dispose;
  return { settings, secrets, service, importer, handlers, dispose };
}
