/**
 * Export of the audit view as JSONL and CSV.
 *
 * CSV is opened in spreadsheets, where a cell starting with `=`, `+`, `-`, `@` (or a tab/CR) is
 * run as a formula; tool arguments and reasons come from models and servers, so every such cell
 * is prefixed with a single quote (OWASP "CSV injection"). Quoting follows RFC 4180.
 */
import { createPrivateWriteStream } from '../storage/private-files';
import type { AuditFilter, AuditRow } from '../../../shared/domain/ledger';
import { WardenError } from '../../../shared/result';
import type { HistoryReads } from './history';

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

/** RFC 4180 CSV (with a header row unless `header` is false); formula-looking cells neutralized. */
export function auditToCsv(rows: readonly AuditRow[], header = true): string {
  const lines = rows.map((r) => [...AUDIT_COLUMNS.map((c) => r[c]), new Date(r.time).toISOString()].map(csvCell).join(','));
  if (header) lines.unshift([...AUDIT_COLUMNS, 'isoTime'].map(csvCell).join(','));
  return lines.length ? lines.join('\r\n') + '\r\n' : '';
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

/**
 * Audit rows read, folded and written between two turns of the event loop: the export runs in the
 * main process beside every window, and a batch is built in one go (1,000 rows held it tens of ms).
 */
const AUDIT_EXPORT_BATCH = 100;

/**
 * Streams the filtered audit view to `path` (JSONL or formula-safe CSV), oldest first, a batch
 * of rows at a time: memory does not grow with the size of the export. The file is created with
 * owner-only permissions (it holds arguments of tool calls).
 */
export async function writeAuditFile(history: HistoryReads, format: 'jsonl' | 'csv', filter: AuditFilter, path: string): Promise<{ format: 'jsonl' | 'csv'; path: string; rows: number }> {
  const out = createPrivateWriteStream(path);
  const opened = new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', reject);
  });
  const write = (text: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      out.write(text, (err) => (err ? reject(err) : resolve()));
    });
  try {
    await opened;
    if (format === 'csv') await write(auditToCsv([]));
    const rows = await history.eachAuditRow(filter, (batch) => write(format === 'csv' ? auditToCsv(batch, false) : auditToJsonl(batch)), AUDIT_EXPORT_BATCH);
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { format, path, rows };
  } catch (error) {
    out.destroy();
    throw new WardenError('INTERNAL', `activity:export: could not write ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A file name for an export made at `now`. */
export function exportFileName(format: 'jsonl' | 'csv', now: number): string {
  return `warden-audit-${new Date(now).toISOString().replace(/[:.]/g, '-')}.${format}`;
}
