/**
 * The Activity list's query: operations matching a filter, a page at a time, from the ledger's
 * index (index-store.ts). Read-only; the index's writer stays the one place that writes it.
 *
 * Keyset paging: operations are ordered by (request time, ledger position), newest first, and a
 * page continues after the last row of the one before (`time <= t AND (time < t OR n < n0)`), so
 * page 1,000 costs what page 1 costs. Filter values are bound parameters, never SQL text.
 *
 * Why facets: the view combines up to six equality filters (server, account, tool, decision,
 * outcome, conversation) with a time range, and an index can only serve the columns it starts
 * with. Walking one column's index and checking the others row by row costs what that column
 * matches, not what the combination matches: a combination that matches little (or nothing)
 * walked hundreds of thousands of rows at a million calls. So every operation is filed under its
 * facet (server, account, tool, decision, state together: a few hundred distinct values, listed
 * in the `facets` table), with the time after it (`ops_facet_time`, and `ops_conv_facet_time`
 * with the conversation first). Any combination of filters picks the facets it matches from that
 * small table, and each facet is one index range already ordered by time. A page is then
 * two steps in one statement: each facet's (limit+1)-th newest time bounds where the page can
 * end (the page is at or after the latest of these, since that facet alone fills it), and the
 * rows of the matching facets inside that bound are sorted. Both read at most (limit+1) rows per
 * matching facet, whatever the history's length and whether anything matches.
 */
import type { CallCursor, CallFilter } from '../../../shared/domain/activity';
import type { LedgerIndex } from './index-store';

/** A page of operations (number = the seq of its proposal, time = its request time) and where the next page starts. */
export interface OperationPage {
  rows: Array<{ n: number; time: number }>;
  /** Null when this page is the last. */
  next: CallCursor | null;
}

/** How an operation's row joins its facet (names absent from a row are 0 and '' in `facets`). */
const FACET_JOIN = "o.server IS nullif(f.server, 0) AND o.account IS nullif(f.account, 0) AND o.tool IS nullif(f.tool, 0) AND o.decision IS nullif(f.decision, '') AND o.state = f.state";

/** The SQL of one page (null: a name in the filter was never indexed, so nothing can match). */
export async function pageQuery(nameId: (text: string) => Promise<number | undefined>, filter: CallFilter, page: { limit: number; after?: CallCursor | null; oldestFirst?: boolean }): Promise<{ sql: string; params: unknown[] } | null> {
  // Conditions on the facet (the `facets` table, f) and on the operation's row (o).
  const facet: string[] = [];
  const facetParams: unknown[] = [];
  for (const [column, text] of [
    ['server', filter.serverId],
    ['account', filter.accountId],
    ['tool', filter.toolName],
  ] as const) {
    if (text === undefined) continue;
    const id = await nameId(text);
    if (id === undefined) return null;
    facet.push(`f.${column} = ?`);
    facetParams.push(id);
  }
  if (filter.decision !== undefined) {
    facet.push('f.decision = ?');
    facetParams.push(filter.decision);
  }
  if (filter.outcome !== undefined) {
    facet.push('f.state = ?');
    facetParams.push(filter.outcome);
  }
  const row: string[] = [];
  const rowParams: unknown[] = [];
  let conv: number | undefined;
  if (filter.conversationId !== undefined) {
    conv = await nameId(filter.conversationId);
    if (conv === undefined) return null;
  }
  if (filter.from !== undefined) {
    row.push('o.time >= ?');
    rowParams.push(filter.from);
  }
  if (filter.to !== undefined) {
    row.push('o.time <= ?');
    rowParams.push(filter.to);
  }
  const older = !page.oldestFirst;
  if (page.after) {
    row.push(older ? 'o.time <= ? AND (o.time < ? OR o.n < ?)' : 'o.time >= ? AND (o.time > ? OR o.n > ?)');
    rowParams.push(page.after.time, page.after.time, page.after.n);
  }
  const order = older ? 'ORDER BY o.time DESC, o.n DESC' : 'ORDER BY o.time ASC, o.n ASC';
  // One more than asked: whether there is a next page, without counting.
  const take = page.limit + 1;

  if (filter.operationId !== undefined) {
    // One operation at most: its id is unique, the rest is checked on that one row.
    const checks = [...facet.map((c) => c.replace(/^f\.(\w+) = \?$/, 'o.$1 = ?')), ...(conv !== undefined ? ['o.conv = ?'] : []), ...row];
    return {
      sql: `SELECT o.n, o.time FROM ops o WHERE o.id = ?${checks.map((c) => ` AND ${c}`).join('')} ${order} LIMIT ?`,
      params: [filter.operationId, ...facetParams, ...(conv !== undefined ? [conv] : []), ...rowParams, take],
    };
  }
  if (facet.length === 0 && conv === undefined) {
    // No column to match: the time index alone, in order.
    return { sql: `SELECT o.n, o.time FROM ops o INDEXED BY ops_time${row.length ? ` WHERE ${row.join(' AND ')}` : ''} ${order} LIMIT ?`, params: [...rowParams, take] };
  }
  const index = conv !== undefined ? 'ops_conv_facet_time' : 'ops_facet_time';
  const onRow = [...(conv !== undefined ? ['o.conv = ?'] : []), FACET_JOIN, ...row].join(' AND ');
  const onRowParams = [...(conv !== undefined ? [conv] : []), ...rowParams];
  // Where the page can end at the latest: the (limit+1)-th row of each facet, the latest of them.
  const bound = older ? 'max' : 'min';
  const beyond = older ? 'o.time >= ifnull((SELECT t FROM bound), -1)' : 'o.time <= ifnull((SELECT t FROM bound), 9e15)';
  const sql =
    `WITH matching AS (SELECT * FROM facets f${facet.length ? ` WHERE ${facet.join(' AND ')}` : ''}), ` +
    `bound(t) AS (SELECT ${bound}((SELECT o.time FROM ops o INDEXED BY ${index} WHERE ${onRow} ${order} LIMIT 1 OFFSET ?)) FROM matching f) ` +
    `SELECT o.n, o.time FROM matching f CROSS JOIN ops o INDEXED BY ${index} WHERE ${onRow} AND ${beyond} ${order} LIMIT ?`;
  return { sql, params: [...facetParams, ...onRowParams, page.limit, ...onRowParams, take] };
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
