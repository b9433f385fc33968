/**
 * Pure helpers of the views, kept out of the .tsx files so unit tests (Node, no JSX) can import
 * them: the args box split and the matrix search.
 */
import type { MatrixAccount, MatrixRow, MatrixServer } from '../../../shared/contract/permissions';

/**
 * Splits the args box: one argument per line, exactly as typed (no shell parsing, no trimming).
 *
 * Why so literal: the command-line preview must be exactly what runs, so nothing may reinterpret
 * what the person typed.
 */
export function parseArgs(text: string): string[] {
  if (text === '') return [];
  return text.replace(/\r\n/g, '\n').split('\n');
}

/**
 * Rows whose server, account, tool or description contains every word of `query` (case-insensitive).
 *
 * Why local: the matrix is already cached, so typing filters 10k rows without a round trip each key.
 */
export function filterMatrix(rows: readonly MatrixRow[], query: string): MatrixRow[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return rows as MatrixRow[];
  return rows.filter((r) => {
    const hay = `${r.serverLabel} ${r.accountLabel} ${r.toolName} ${r.serverId} ${r.accountId} ${r.serverDescription ?? ''}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** One line of the grouped matrix: a server, one of its accounts, a tool, or an account with no tools known. */
export type MatrixItem =
  | { kind: 'server'; key: string; serverId: string; label: string; server: MatrixServer | null; toolCount: number }
  | { kind: 'account'; key: string; serverId: string; accountId: string; label: string; serverLabel: string; account: MatrixAccount | null; toolCount: number }
  | { kind: 'tool'; key: string; row: MatrixRow }
  | { kind: 'no-tools'; key: string; serverId: string; accountId: string; account: MatrixAccount | null };

/**
 * The matrix grouped server → account → tool, flattened for a virtual list. Every configured
 * account is listed (from `servers`, when given) even with no tools; groups in `collapsed` (keys
 * "serverId" or "serverId/accountId") show their header only. With a search, only groups with a
 * matching tool are listed.
 *
 * Why flat: one virtual list keeps 10k tools in 200 servers fast; headers are rows like the rest.
 */
export function groupMatrix(rows: readonly MatrixRow[], servers: readonly MatrixServer[] | null, collapsed: ReadonlySet<string>, searching = false): MatrixItem[] {
  const byServer = new Map<string, { label: string; server: MatrixServer | null; accounts: Map<string, { label: string; account: MatrixAccount | null; rows: MatrixRow[] }> }>();
  for (const s of servers ?? []) {
    if (searching) continue;
    byServer.set(s.serverId, { label: s.label, server: s, accounts: new Map(s.accounts.map((a) => [a.accountId, { label: a.label, account: a, rows: [] }])) });
  }
  const known = new Map((servers ?? []).map((s) => [s.serverId, s]));
  for (const r of rows) {
    let g = byServer.get(r.serverId);
    if (!g) {
      g = { label: r.serverLabel, server: known.get(r.serverId) ?? null, accounts: new Map() };
      byServer.set(r.serverId, g);
    }
    let a = g.accounts.get(r.accountId);
    if (!a) {
      a = { label: r.accountLabel, account: g.server?.accounts.find((x) => x.accountId === r.accountId) ?? null, rows: [] };
      g.accounts.set(r.accountId, a);
    }
    a.rows.push(r);
  }
  const items: MatrixItem[] = [];
  for (const [serverId, g] of byServer) {
    const toolCount = [...g.accounts.values()].reduce((n, a) => n + a.rows.length, 0);
    items.push({ kind: 'server', key: serverId, serverId, label: g.label, server: g.server, toolCount });
    if (collapsed.has(serverId)) continue;
    for (const [accountId, a] of g.accounts) {
      const key = `${serverId}/${accountId}`;
      items.push({ kind: 'account', key, serverId, accountId, label: a.label, serverLabel: g.label, account: a.account, toolCount: a.rows.length });
      if (collapsed.has(key)) continue;
      if (a.rows.length === 0) items.push({ kind: 'no-tools', key: `${key}/-`, serverId, accountId, account: a.account });
      for (const row of a.rows) items.push({ kind: 'tool', key: `${key}/${row.toolName}`, row });
    }
  }
  return items;
}

/**
 * A byte count in the units a person reads ("812 bytes", "64 KiB", "8.0 MiB").
 *
 * Why: the "truncated" note says how much of a server's answer is shown; raw byte counts in the
 * millions are hard to read at a glance.
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
