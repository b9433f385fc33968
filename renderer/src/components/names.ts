/**
 * Names for the ids a record carries (server, account), from the configured servers the store
 * already holds: people read "Weather / Work", never "weather-83c33b1c / work-011b56dc". A server
 * or account removed since is said so in words; the ids stay in exports and "details" areas.
 * `namesFor` and `eventWords` are pure, so unit tests can check the fallbacks.
 */
import { useMemo } from 'react';
import type { ServerView } from '../../../shared/domain/servers';
import { useAppStore } from '../store';

export interface Names {
  server(serverId: string): string;
  account(serverId: string, accountId: string | null | undefined): string;
  /** "Weather / Work". */
  where(serverId: string, accountId: string | null | undefined): string;
}

/** The names of the configured servers and accounts, re-made when they change. */
export function useNames(): Names {
  const servers = useAppStore((s) => s.servers);
  return useMemo(() => {
    const byId = new Map(servers.map((s) => [s.definition.id, { name: s.definition.name, accounts: new Map(s.accounts.map((a) => [a.id, a.label])) }]));
    const server = (id: string) => byId.get(id)?.name ?? 'a removed server';
    const account = (serverId: string, accountId: string | null | undefined) => (accountId ? (byId.get(serverId)?.accounts.get(accountId) ?? 'a removed account') : 'every account');
    return { server, account, where: (s, a) => `${server(s)} / ${account(s, a)}` };
  }, [servers]);
}

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

/** What each operation state means, as the Activity log's event column says it. */
const STATE_WORDS: Record<string, string> = {
  proposed: 'Requested',
  validation_failed: 'Refused: arguments did not fit the tool',
  denied: 'Refused by the rules',
  awaiting_approval: 'Waiting for approval',
  rejected: 'Rejected',
  expired: 'Expired without approval',
  invalidated: 'No longer valid',
  cancelled: 'Cancelled',
  approved: 'Approved',
  executing: 'Sent to the server',
  succeeded: 'Succeeded',
  failed: 'Failed',
  outcome_unknown: 'Outcome unknown',
};

/** An operation state in words ("Refused by the rules"); an unknown one keeps its own name. */
export function stateWords(state: string): string {
  return STATE_WORDS[state] ?? state;
}

/** Record types other than state changes, in words. */
const TYPE_WORDS: Record<string, string> = {
  'policy.changed': 'Permission changed',
  'tool.contract-changed': 'Tool changed on the server',
  'server.endpoint-changed': 'Server address changed',
  'model.provider-changed': 'Model provider changed',
  'account.switched': 'Active account switched',
  'server.data-read': 'Read from a server',
  'server.sampling': 'A server asked your model',
  'sampling.setting-changed': 'Model use by a server changed',
  'op.reconciled': 'Outcome recorded by you',
  'op.observation': 'What Warden saw the call do',
  'ledger.safe_mode_acknowledged': 'Damage acknowledged',
};

/**
 * An activity record's event in words ("Sent to the server", "Permission changed"); a record type
 * this version does not know keeps its own name rather than being hidden.
 */
export function eventWords(row: { type: string; to: string | null }): string {
  if ((row.type === 'op.transition' || row.type === 'op.proposed') && row.to) return STATE_WORDS[row.to] ?? row.to;
  return TYPE_WORDS[row.type] ?? row.type;
}
