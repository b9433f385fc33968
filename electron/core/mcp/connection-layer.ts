/**
 * Assembles the connection layer for app-core: a ConnectionManager reading server definitions
 * and accounts from the server catalog (the settings, through a port), the `connections:*`
 * handlers, and event forwarding.
 * Edits and removals of a server or account close its connections, so a connection never keeps
 * running a command (or talking to a URL) the settings no longer say.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { ServerDefinition } from '../../../shared/domain/servers';
import type { CoreEvents } from '../events';
import { journalEntry } from '../../../shared/domain/journal-events';
import type { Clock, Journal, JournalRecord, SecretStore } from '../ports';
import { systemClock } from '../ports';
import { ConnectionManager, type ConnectionManagerOptions } from './connection-manager';
import type { ServerCatalog, ServerDirectory } from './ports';
import type { ToolsChange } from './contract-diff';
import { bindConnectionEvents, connectionHandlers } from './contract-handlers';

/** Host-tunable parts of the connection layer (timeouts, backoff, OAuth hook, pins). */
export type ConnectionLayerOptions = Partial<Omit<ConnectionManagerOptions, 'directory' | 'secrets'>> & {
  authProviderFor?: (definition: ServerDefinition, accountId: string) => OAuthClientProvider | undefined;
};

/** The directory view of the server catalog the manager reads definitions and accounts from. */
export function directoryOf(catalog: Pick<ServerCatalog, 'getServer' | 'accountsOf' | 'endpointHash'>): ServerDirectory {
  return {
    server: (serverId) => catalog.getServer(serverId),
    accountLabel: (serverId, accountId) => {
      if (!catalog.getServer(serverId)) return undefined;
      return catalog.accountsOf(serverId).find((a) => a.id === accountId)?.label;
    },
    endpointHash: (definition) => catalog.endpointHash(definition),
  };
}

/**
 * The contract hashes last recorded in the journal for one (server, account): the pins the first
 * discovery after a restart is compared with. Undefined when nothing was ever recorded.
 *
 * Why: a rug pull between two app runs must be caught too, not only one during a session.
 */
export function pinsFromJournal(journal: { read(): readonly JournalRecord[] }, serverId: string, accountId: string): { tools: Record<string, string>; instructionsHash: string | null } | undefined {
  const tools = new Map<string, string | null>();
  let instructions: string | null = null;
  for (const r of journal.read()) {
    if (r.type !== 'tool.contract-changed') continue;
    const p = r.payload as { serverId?: unknown; accountId?: unknown; toolName?: unknown; newContractHash?: unknown; instructionsHash?: unknown };
    if (p.serverId !== serverId || p.accountId !== accountId || typeof p.toolName !== 'string') continue;
    tools.set(p.toolName, typeof p.newContractHash === 'string' ? p.newContractHash : null);
    if (typeof p.instructionsHash === 'string') instructions = p.instructionsHash;
  }
  if (tools.size === 0) return undefined;
  const live = [...tools].filter((e): e is [string, string] => e[1] !== null);
  // The instructions hash last recorded with this server's tools (null for records older than it).
  return { tools: Object.fromEntries(live), instructionsHash: instructions };
}

/** One `tool.contract-changed` journal entry per added, removed or changed tool. */
export function contractChangeEntries(change: ToolsChange, at: number) {
  const base = { serverId: change.serverId, accountId: change.accountId, instructionsHash: change.instructionsHash, at };
  return [
    ...change.added.map((toolName) => ({ toolName, oldContractHash: null, newContractHash: change.newHashes[toolName] ?? null, changedFields: [] })),
    ...change.removed.map((toolName) => ({ toolName, oldContractHash: change.oldHashes[toolName] ?? null, newContractHash: null, changedFields: [] })),
    ...change.changed.map((c) => ({ toolName: c.name, oldContractHash: c.oldHash, newContractHash: c.newHash, changedFields: c.fields })),
  ].map((p) => journalEntry('tool.contract-changed', { ...base, ...p }));
}

/**
 * Builds the manager, its contract handlers and event forwarding, and journals every tool
 * contract change (the policy then holds Always Allow grants pinned to an old hash at ask).
 *
 * Why: app-core wires one object instead of knowing the connection layer's internals;
 * `dispose` disconnects everything (no child process outlives the core).
 */
export function createConnectionLayer(deps: {
  service: ServerCatalog;
  secrets: SecretStore;
  events: CoreEvents;
  journal?: Journal;
  /** The contracts last recorded per (server, account); default: read from an in-memory journal's records. */
  pins?: ConnectionManagerOptions['pinnedFor'];
  clock?: Clock;
  options?: ConnectionLayerOptions;
}) {
  const journal = deps.journal;
  const records = journal && 'read' in journal ? (journal as Journal & { read(): readonly JournalRecord[] }) : undefined;
  const pinnedFor = deps.pins ?? (records ? (serverId: string, accountId: string) => pinsFromJournal(records, serverId, accountId) : undefined);
  const clock = deps.clock ?? systemClock;
  const manager = new ConnectionManager({
    ...(pinnedFor ? { pinnedFor } : {}),
    clock,
    ...deps.options,
    directory: directoryOf(deps.service),
    secrets: deps.secrets,
  });
  const unbind = bindConnectionEvents(manager, deps.events);
  const offJournal = journal
    ? manager.on('toolsChanged', (change) => {
        const entries = contractChangeEntries(change, clock.now());
        if (entries.length) void journal.append(entries).catch((error: unknown) => console.error('journaling a tool contract change failed', error));
      })
    : () => {};
  const offChange = deps.service.onChange((change) => {
    if (change.serverId === null) return;
    if (change.reason === 'edited') void manager.disconnect(change.serverId);
    else if (change.reason === 'removed') void manager.forget(change.serverId);
    else if (change.reason === 'account-removed') void manager.forget(change.serverId, { onlyMissingAccounts: true });
  });
  return {
    manager,
    handlers: connectionHandlers(manager),
    /** Connected (server, account) pairs, for the core status. */
    connectedCount: () => manager.snapshot().filter((s) => s.status.state === 'connected').length,
    async dispose(): Promise<void> {
      offChange();
      offJournal();
      unbind();
      await manager.close();
    },
  };
}
