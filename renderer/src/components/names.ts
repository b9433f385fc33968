/**
 * Names for the ids a record carries (server, account), from the configured servers the store
 * already holds: people read "Weather / Work", never "weather-83c33b1c / work-011b56dc". A server
 * or account removed since is said so in words; the ids stay in exports and "details" areas.
 */
import { useMemo } from 'react';
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
