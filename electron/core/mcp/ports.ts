/**
 * What the connection layer needs from the rest of the core, as narrow ports: the server
 * definitions and accounts it connects, their endpoint identity, and the switch that turns a
 * server off. The settings own all of these; app-core wires them in, so nothing under mcp/
 * imports the settings (`test/unit/boundaries.test.ts`).
 */
import type { Account, ServerDefinition } from '../../../shared/domain/servers';

/** Where the manager reads server definitions and accounts from (the settings, or a test map). */
export interface ServerDirectory {
  /** The current definition of a server, or undefined if it does not exist. */
  server(serverId: string): ServerDefinition | undefined;
  /** Display label of an account, or undefined if the account does not exist for this server. */
  accountLabel(serverId: string, accountId: string): string | undefined;
  /**
   * The hash of what a definition runs or contacts: part of every tool's fingerprint and pin, so
   * it has one owner (the settings' identity) and the connection layer only asks for it.
   */
  endpointHash(definition: ServerDefinition): string;
}

/** A change to the configured servers, as the connection layer reacts to it. */
export interface ServerCatalogChange {
  serverId: string | null;
  reason: string;
}

/** The configured servers and their accounts, read live (the settings' server service). */
export interface ServerCatalog {
  definitions(): readonly ServerDefinition[];
  getServer(serverId: string): ServerDefinition | undefined;
  accountsOf(serverId: string): readonly Account[];
  /** Told after each saved change; returns an unsubscribe function. */
  onChange(listener: (change: ServerCatalogChange) => void): () => void;
  /** See `ServerDirectory.endpointHash`. */
  endpointHash(definition: ServerDefinition): string;
}

/**
 * The saved on/off switch of each server, stored as the servers turned OFF (so a settings file
 * written before the switch existed keeps every server on).
 */
export interface ServerSwitches {
  /** Ids of the servers turned off. */
  disabled(): readonly string[];
  /** Saves the servers turned off; throws a WardenError naming why when it cannot be saved. */
  setDisabled(serverIds: readonly string[]): void;
  /** False while saved settings refuse changes (the file could not be read). */
  canSave(): boolean;
  /** Ids of the accounts to connect again at the next start (the ones connected when Warden last ran). */
  connectedAccounts(): readonly string[];
  /** Saves the accounts to connect at the next start; throws a WardenError naming why when it cannot be saved. */
  setConnectedAccounts(accountIds: readonly string[]): void;
  /** Told after any saved settings change (the overview is drawn again); returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
}
