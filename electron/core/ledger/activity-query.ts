/**
 * The Activity list's query: operations matching a filter, a page at a time, from the ledger's
 * index (index-store.ts). Read-only; the index's writer stays the one place that writes it.
 *
 * Keyset paging: operations are ordered by (request time, ledger position), newest first, and a
 * page continues after the last row of the one before (`time <= t AND (time < t OR n < n0)`), so
 * page 1,000 costs what page 1 costs. Every filter column has an index that starts with it and
 * continues with the time (`ops_<column>_time`), so a filter and a time range together are one
 * index range walked in order: no sort, no scan of what does not match. Filter values are bound
 * parameters, never SQL text.
 */
import type { CallCursor, CallFilter } from '../../../shared/domain/activity';
import type { LedgerIndex } from './index-store';

/** A page of operations (number = the seq of its proposal, time = its request time) and where the next page starts. */
export interface OperationPage {
  rows: Array<{ n: number; time: number }>;
  /** Null when this page is the last. */
  next: CallCursor | null;
}

/** The SQL of one page (null: a name in the filter was never indexed, so nothing can match). */
export async function pageQuery(nameId: (text: string) => Promise<number | undefined>, filter: CallFilter, page: { limit: number; after?: CallCursor | null; oldestFirst?: boolean }): Promise<{ sql: string; params: unknown[] } | null> {
  const clauses: string[] = [];
  const params: unknown[] = [];
  for (const [column, text] of [
    ['server', filter.serverId],
    ['account', filter.accountId],
    ['tool', filter.toolName],
    ['conv', filter.conversationId],
  ] as const) {
    if (text === undefined) continue;
    const id = await nameId(text);
    if (id === undefined) return null;
    clauses.push(`${column} = ?`);
    params.push(id);
  }
  if (filter.decision !== undefined) {
    clauses.push('decision = ?');
    params.push(filter.decision);
  }
  if (filter.outcome !== undefined) {
    clauses.push('state = ?');
    params.push(filter.outcome);
  }
  if (filter.operationId !== undefined) {
    clauses.push('id = ?');
    params.push(filter.operationId);
  }
  if (filter.from !== undefined) {
    clauses.push('time >= ?');
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    clauses.push('time <= ?');
    params.push(filter.to);
  }
  const older = !page.oldestFirst;
  if (page.after) {
    clauses.push(older ? 'time <= ? AND (time < ? OR n < ?)' : 'time >= ? AND (time > ? OR n > ?)');
    params.push(page.after.time, page.after.time, page.after.n);
  }
  const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
  const order = older ? 'ORDER BY time DESC, n DESC' : 'ORDER BY time ASC, n ASC';
  // One more than asked: whether there is a next page, without counting.
  return { sql: `SELECT n, time FROM ops ${where} ${order} LIMIT ?`, params: [...params, page.limit + 1] };
}

/** Operations matching `filter`, `limit` at a time after `after`: newest first, or oldest first for exports. */
export async function operationPage(index: LedgerIndex, filter: CallFilter, page: { limit: number; after?: CallCursor | null; oldestFirst?: boolean }): Promise<OperationPage> {
  const { db, nameId } = await index.reader();
  const query = await pageQuery(nameId, filter, page);
  if (query === null) return { rows: [], next: null };
  const rows = await db.all<{ n: number; time: number }>(query.sql, query.params);
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const last = shown.at(-1);
  return { rows: shown, next: more && last ? { time: last.time, n: last.n } : null };
}
