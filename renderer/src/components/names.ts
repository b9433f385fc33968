/**
 * Names for ids: what a person reads instead of `counting-fixture-d17e7acf / default-252681e2`.
 * Pure, so unit tests can check the fallbacks.
 */
import type { ServerView } from '../../../shared/domain/servers';

/** The server and account names for a pair of ids, from the servers the core listed. */
export interface ConnectionNames {
  server: string;
  account: string;
  /** False when the server (or account) is no longer configured: the names are then the ids. */
  known: boolean;
}

/**
 * Looks up the names; a server or account that has since been removed falls back to its id,
 * marked `known: false` so the view can say so instead of pretending.
 */
export function namesFor(servers: readonly ServerView[], serverId: string | null, accountId: string | null): ConnectionNames {
  const server = serverId ? servers.find((s) => s.definition.id === serverId) : undefined;
  const account = server && accountId ? server.accounts.find((a) => a.id === accountId) : undefined;
  return {
    server: server?.definition.name ?? serverId ?? '',
    account: account?.label ?? accountId ?? '',
    known: server !== undefined && (accountId === null || account !== undefined),
  };
}
