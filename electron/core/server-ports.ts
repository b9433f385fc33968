/**
 * The settings, seen through the connection layer's ports (mcp/ports.ts): the configured servers
 * with their endpoint identity, and the saved on/off switch of each server. Only app-core builds
 * these, so the connection layer never imports the settings and the settings never import it.
 */
import type { ServerCatalog, ServerSwitches } from './mcp/ports';
import { endpointHash } from './settings/identity';
import type { ServerService } from './settings/server-service';
import type { SettingsRepository } from './settings/settings-repository';

/** The server service as the connection layer's catalog. */
export function serverCatalogOf(service: ServerService): ServerCatalog {
  return {
    definitions: () => service.definitions(),
    getServer: (serverId) => service.getServer(serverId),
    accountsOf: (serverId) => service.accountsOf(serverId),
    onChange: (listener) => service.onChange(listener),
    endpointHash,
  };
}

/**
 * `preferences.disabledServers` as the servers' on/off switch (absent when every server is on), and
 * `preferences.connectedAccounts` as the accounts the next start connects again.
 */
export function serverSwitchesOf(settings: SettingsRepository): ServerSwitches {
  return {
    disabled: () => settings.get().preferences.disabledServers ?? [],
    setDisabled: (serverIds) => {
      settings.update((draft) => {
        if (serverIds.length === 0) delete draft.preferences.disabledServers;
        else draft.preferences.disabledServers = [...serverIds];
      });
    },
    canSave: () => settings.problem === null,
    connectedAccounts: () => settings.get().preferences.connectedAccounts ?? [],
    setConnectedAccounts: (accountIds) => {
      settings.update((draft) => {
        if (accountIds.length === 0) delete draft.preferences.connectedAccounts;
        else draft.preferences.connectedAccounts = [...accountIds];
      });
    },
    onChange: (listener) => settings.onChange(() => listener()),
  };
}
