/**
 * The core: everything the main process owns, assembled from ports. Runs in plain Node (no
 * `electron` import), so main and the browser test host serve the very same object.
 */
import type { CoreStatus } from '../../shared/contract/core';
import type { Handlers } from './dispatch';
import { CoreEvents } from './events';
import { systemClock, type Clock, type Journal } from './ports';
import { MemoryJournal } from './memory-journal';
import { activityHandlers } from './ledger/activity-handlers';
import type { LedgerService } from './ledger/service';
import { createServersModule, type ServersModuleOptions } from './settings/servers-module';
import type { ServerService } from './settings/server-service';

/** What the core needs from its host. */
export interface CoreDeps {
  version: string;
  platform?: string;
  clock?: Clock;
  journal?: Journal;
  /** The durable ledger service (its ledger is then the journal); absent = in-memory journal. */
  ledger?: LedgerService;
  /** Settings store, keychain and import locations for servers/accounts (defaults: memory, keytar). */
  servers?: ServersModuleOptions;
}

/** The running core: contract handlers, outgoing events, and shutdown. */
export interface WardenCore {
  readonly handlers: Handlers;
  readonly events: CoreEvents;
  /** Server definitions, accounts and their secrets (the connection layer reads these). */
  readonly servers: ServerService;
  status(): CoreStatus;
  close(): Promise<void>;
}

/** Assembles the core from its ports. */
export function createCore(deps: CoreDeps): WardenCore {
  const clock = deps.clock ?? systemClock;
  const journal = deps.journal ?? deps.ledger?.ledger ?? new MemoryJournal(clock);
  const events = new CoreEvents();
  const startedAt = new Date(clock.now()).toISOString();
  const serversModule = createServersModule({ ...deps.servers, clock, journal, events });

  const status = (): CoreStatus => ({
    version: deps.version,
    startedAt,
    platform: deps.platform ?? process.platform,
    journal: { kind: journal.kind, records: journal.size() },
    servers: { configured: serversModule.service.definitions().length, connected: 0 },
    pendingApprovals: 0,
    safeMode: deps.ledger?.ledger.safeMode ?? false,
  });

  const handlers: Handlers = {
    'core:status': () => status(),
    'core:ping': ({ nonce }) => ({ nonce, receivedAt: new Date(clock.now()).toISOString() }),
    ...activityHandlers({ service: deps.ledger ?? null, journal }),
    ...serversModule.handlers,
  };

  return {
    handlers,
    events,
    servers: serversModule.service,
    status,
    close: () => journal.close(),
  };
}
