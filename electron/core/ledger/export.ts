/**
 * Export of the audit view as JSONL and CSV.
 *
 * CSV is opened in spreadsheets, where a cell starting with `=`, `+`, `-`, `@` (or a tab/CR) is
 * run as a formula; tool arguments and reasons come from models and servers, so every such cell
 * is prefixed with a single quote (OWASP "CSV injection"). Quoting follows RFC 4180.
 */
import type { AuditRow } from '../../../shared/domain/ledger';

/** Column order of the CSV export (also the key order of each JSONL object). */
export const AUDIT_COLUMNS: ReadonlyArray<keyof AuditRow> = [
  'seq',
  'time',
  'type',
  'operationId',
  'serverId',
  'accountId',
  'toolName',
  'conversationId',
  'from',
  'to',
  'decision',
  'reason',
  'actor',
  'fingerprint',
  'arguments',
];

/** One JSON object per line, `time` also given as ISO text for people reading the file. */
export function auditToJsonl(rows: readonly AuditRow[]): string {
  return rows.map((r) => JSON.stringify({ ...pick(r), isoTime: new Date(r.time).toISOString() }) + '\n').join('');
}

/** RFC 4180 CSV with a header row; formula-looking cells neutralized. */
export function auditToCsv(rows: readonly AuditRow[]): string {
  const header = [...AUDIT_COLUMNS, 'isoTime'].map(csvCell).join(',');
  const lines = rows.map((r) => [...AUDIT_COLUMNS.map((c) => r[c]), new Date(r.time).toISOString()].map(csvCell).join(','));
  return [header, ...lines].join('\r\n') + '\r\n';
}

/** One CSV cell: formula-safe, quoted when it holds a quote, comma or line break. */
export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'string' ? value : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  if (/[",\r\n]/.test(text)) text = `"${text.replace(/"/g, '""')}"`;
  return text;
}

function pick(r: AuditRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of AUDIT_COLUMNS) out[c] = r[c];
  return out;
}
