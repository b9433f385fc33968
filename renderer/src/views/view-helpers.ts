/**
 * Pure helpers of the views, kept out of the .tsx files so unit tests (Node, no JSX) can import
 * them: the args box split and the matrix search.
 */
import type { MatrixRow } from '../../../shared/contract/permissions';

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
