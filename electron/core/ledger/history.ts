/**
 * Operation history as the app reads it: the Activity and Recovery views, `operations:list/get`,
 * the gate's idempotency lookups and crash recovery all read through `HistoryReads`.
 *
 * Two implementations answer the same questions the same way, because both fold records with
 * the one projection (projections.ts):
 * - `IndexedHistory`: the durable ledger. The index (index-store.ts) says which records a query
 *   needs; they are read back from the segments and folded. Cost depends on the page asked for,
 *   never on the length of history, and nothing is kept in memory between queries.
 * - `MemoryHistory`: the in-memory journal (tests, the browser test host): folds all its records.
 */
import type { CallCursor, CallFilter } from '../../../shared/domain/activity';
import type { AuditFilter, AuditRow, OperationHistory as OperationHistoryView, OperationView } from '../../../shared/domain/ledger';
import type { OperationState } from '../../../shared/domain/operations';
import type { JournalRecord, OperationHistory, RecordedOperation } from '../ports';
import { operationPage } from './activity-query';
import type { StoredRecord } from './format';
import type { IndexedRow, LedgerIndex } from './index-store';
import { LedgerProjections } from './projections';
import type { RecordLocation } from './recovery';

/** Which operations, newest first. */
export interface OperationQuery {
  state?: OperationState | 'reconciled';
  conversationId?: string;
  limit?: number;
  offset?: number;
}

/** One operation as the Activity list reads it: its view, the arguments it was asked with, its paging key. */
export interface RecordedCall {
  view: OperationView;
  arguments: Readonly<Record<string, unknown>>;
  cursor: CallCursor;
}

/** A page of the Activity list. */
export interface CallPageQuery {
  limit: number;
  /** Continue after this row (keyset paging). */
  after?: CallCursor | null;
  /** Oldest first (exports); newest first otherwise. */
  oldestFirst?: boolean;
}

/** Everything the app reads about operation history. */
export interface HistoryReads extends OperationHistory {
  operation(operationId: string): Promise<OperationView | undefined>;
  history(operationId: string): Promise<OperationHistoryView | undefined>;
  /** Operations, newest first (default 200). */
  operations(query?: OperationQuery): Promise<OperationView[]>;
  /** Recorded operations, newest first (default 200). */
  recordedOperations(query?: OperationQuery): Promise<RecordedOperation[]>;
  /** Operations not finished yet, and outcome_unknown ones nobody reconciled (what recovery settles). */
  unfinished(): Promise<RecordedOperation[]>;
  /** outcome_unknown operations nobody has reconciled, newest first. */
  unreconciled(): Promise<OperationView[]>;
  /** Audit rows, newest first, and how many match (exact up to `COUNT_CAP`, then a lower bound). */
  audit(filter: AuditFilter, page: { limit: number; offset: number }): Promise<{ rows: AuditRow[]; total: number }>;
  /** Every matching audit row oldest first, handed over `batch` rows at a time (exports). */
  eachAuditRow(filter: AuditFilter, onRows: (rows: AuditRow[]) => Promise<void>, batch?: number): Promise<number>;
  operationCount(): Promise<number>;
  /** The tool names operations name (of one server or account when given), sorted, at most `limit` (Activity's Tool filter). */
  toolNames(where: { serverId?: string; accountId?: string }, limit: number): Promise<string[]>;
  /** Operations matching an Activity filter, by request time, a page at a time (keyset paging). */
  calls(filter: CallFilter, page: CallPageQuery): Promise<{ calls: RecordedCall[]; next: CallCursor | null }>;
}

const DEFAULT_LIMIT = 200;

/** Reads back records at index locations. */
export interface RecordSource {
  readAt(locations: readonly RecordLocation[]): Promise<StoredRecord[]>;
}

/** History of the durable ledger, through its index. */
export class IndexedHistory implements HistoryReads {
  constructor(
    private readonly index: LedgerIndex,
    private readonly source: RecordSource,
    /**
     * Settles once the index holds every record (its background catch-up after a start without a
     * current index). Every read waits for it: an answer about an id from half an index could
     * let a finished call run again.
     */
    private readonly indexed: () => Promise<void> = () => Promise.resolve(),
    /**
     * While the index catches up: where every record of an operation is, when the records read
     * at start or appended since hold all of them (catch-up.ts, `TailOperations.recent`). Reads
     * about such an operation are answered from them at once instead of waiting.
     */
    private readonly recent: (operationId: string) => readonly RecordLocation[] | undefined = () => undefined,
  ) {}

  /**
   * The operation as recorded, for the gate's idempotency check before every call with an id of
   * its own: read without committing the index (`LedgerIndex.operationRecords` says why).
   */
  async find(operationId: string): Promise<RecordedOperation | undefined> {
    // What this run recorded is answered from the log's end, never waiting for a catch-up.
    const at = this.recent(operationId);
    if (at) {
      const recent = LedgerProjections.fromRecords(await this.source.readAt(at), new Set([operationId])).recorded(operationId);
      if (recent) return recent;
    }
    await this.indexed();
    // Committed records through the index, pending ones from memory: never a forced commit.
    const found = await this.index.operationRecords(operationId);
    if (!found) return undefined;
    const read = found.rows.length > 0 ? await this.source.readAt(onePerPlace(found.rows)) : [];
    const records = found.records.length > 0 ? [...read, ...found.records].sort((a, b) => a.seq - b.seq) : read;
    return LedgerProjections.fromRecords(records, new Set([operationId])).recorded(operationId);
  }

  async operation(operationId: string): Promise<OperationView | undefined> {
    const one = await this.foldRecentOrIndexed(operationId);
    return one ? withRetry(one.p.operation(operationId)!, one.retryOf) : undefined;
  }

  async history(operationId: string): Promise<OperationHistoryView | undefined> {
    const one = await this.foldRecentOrIndexed(operationId);
    if (!one) return undefined;
    const h = one.p.history(operationId)!;
    return { ...h, operation: withRetry(h.operation, one.retryOf), events: [...h.events] };
  }

  async operations(query: OperationQuery = {}): Promise<OperationView[]> {
    await this.indexed();
    const { p, ids } = await this.foldMany(await this.index.operations(opFilter(query), page(query)));
    return ids.map(({ id, retryOf }) => withRetry(p.operation(id)!, retryOf));
  }

  async recordedOperations(query: OperationQuery = {}): Promise<RecordedOperation[]> {
    await this.indexed();
    const { p, ids } = await this.foldMany(await this.index.operations(opFilter(query), page(query)));
    return ids.map(({ id }) => p.recorded(id)!);
  }

  async unfinished(): Promise<RecordedOperation[]> {
    await this.indexed();
    const out: RecordedOperation[] = [];
    // Bounded by the number of unfinished operations, read a page at a time.
    for (let offset = 0; ; offset += 500) {
      const ns = await this.index.operations({ unfinished: true }, { limit: 500, offset });
      const { p, ids } = await this.foldMany(ns);
      for (const { id } of ids) out.push(p.recorded(id)!);
      if (ns.length < 500) break;
    }
    return out.reverse();
  }

  async unreconciled(): Promise<OperationView[]> {
    await this.indexed();
    const { p, ids } = await this.foldMany(await this.index.operations({ state: 'outcome_unknown', unreconciled: true }, { limit: 1000 }));
    return ids.map(({ id, retryOf }) => withRetry(p.operation(id)!, retryOf));
  }

  async audit(filter: AuditFilter, pg: { limit: number; offset: number }): Promise<{ rows: AuditRow[]; total: number }> {
    await this.indexed();
    const { rows, total } = await this.index.rows(filter, pg);
    return { rows: await this.auditRows(rows), total: Math.max(total, rows.length + pg.offset) };
  }

  async eachAuditRow(filter: AuditFilter, onRows: (rows: AuditRow[]) => Promise<void>, batch = 1000): Promise<number> {
    await this.indexed();
    let after = 0;
    let count = 0;
    for (;;) {
      const rows = await this.index.rowsAfter(filter, after, batch);
      if (rows.length === 0) return count;
      const audit = await this.auditRows(rows);
      audit.sort((a, b) => a.seq - b.seq);
      await onRows(audit);
      count += audit.length;
      after = rows[rows.length - 1]!.seq;
    }
  }

  async operationCount(): Promise<number> {
    await this.indexed();
    return this.index.operationCount();
  }

  async toolNames(where: { serverId?: string; accountId?: string }, limit: number): Promise<string[]> {
    await this.indexed();
    return this.index.toolNames(where, limit);
  }

  async calls(filter: CallFilter, pg: CallPageQuery): Promise<{ calls: RecordedCall[]; next: CallCursor | null }> {
    await this.indexed();
    const { rows, next } = await operationPage(this.index, filter, pg);
    const { p, ids } = await this.foldMany(rows.map((r) => r.n));
    const cursorOf = new Map(rows.map((r) => [r.n, { time: r.time, n: r.n }]));
    const calls = ids.map(({ n, id, retryOf }) => ({ view: withRetry(p.operation(id)!, retryOf), arguments: p.recorded(id)!.proposed.arguments, cursor: cursorOf.get(n)! }));
    return { calls, next };
  }

  /** The audit rows of indexed rows, in the order given: each op's earlier records decide its row. */
  private async auditRows(rows: IndexedRow[]): Promise<AuditRow[]> {
    if (rows.length === 0) return [];
    const ops = [...new Set(rows.map((r) => r.op).filter((n): n is number => n !== null))];
    const maxSeq = Math.max(...rows.map((r) => r.seq));
    const needed = new Map<number, IndexedRow>();
    for (const r of await this.index.recordsOf(ops, maxSeq)) needed.set(r.seq, r);
    for (const r of rows) needed.set(r.seq, r);
    const [records, ids] = await Promise.all([this.source.readAt(onePerPlace([...needed.values()].sort((a, b) => a.seq - b.seq))), this.index.operationIds(ops)]);
    const p = LedgerProjections.fromRecords(records, new Set(ids.map((i) => i.id)));
    const bySeq = new Map(p.audit().map((row) => [row.seq, row]));
    return rows.map((r) => bySeq.get(r.seq)).filter((row): row is AuditRow => row !== undefined);
  }

  /**
   * One operation's fold: from the records `recent` names when it names them (all of them are
   * there), otherwise through the index once it holds every record.
   */
  private async foldRecentOrIndexed(operationId: string): Promise<{ p: LedgerProjections; retryOf: string | null } | undefined> {
    const at = this.recent(operationId);
    if (at) {
      const p = LedgerProjections.fromRecords(await this.source.readAt(at), new Set([operationId]));
      if (p.operation(operationId)) return { p, retryOf: null };
    }
    await this.indexed();
    return this.foldOne(operationId);
  }

  private async foldOne(operationId: string): Promise<{ p: LedgerProjections; retryOf: string | null } | undefined> {
    const n = await this.index.operationNumber(operationId);
    if (n === undefined) return undefined;
    const { p, ids } = await this.foldMany([n]);
    return ids[0] ? { p, retryOf: ids[0].retryOf } : undefined;
  }

  private async foldMany(ns: number[]): Promise<{ p: LedgerProjections; ids: Array<{ n: number; id: string; retryOf: string | null }> }> {
    const [locations, ids] = await Promise.all([this.index.recordsOf(ns), this.index.operationIds(ns)]);
    const p = LedgerProjections.fromRecords(await this.source.readAt(onePerPlace(locations)), new Set(ids.map((i) => i.id)));
    const byN = new Map(ids.map((i) => [i.n, i]));
    return { p, ids: ns.map((n) => byN.get(n)).filter((i): i is { n: number; id: string; retryOf: string | null } => i !== undefined && p.operation(i.id) !== undefined) };
  }
}

/**
 * History of an in-memory journal. Its records are append-only, so the fold is kept and only the
 * records appended since the last question are applied (folding everything again made each call's
 * idempotency check grow with the number of calls before it).
 */
export class MemoryHistory implements HistoryReads {
  private folded = new LedgerProjections();
  private foldedCount = 0;

  constructor(private readonly records: () => readonly JournalRecord[]) {}

  private fold(): LedgerProjections {
    const records = this.records();
    if (records.length < this.foldedCount) {
      this.folded = new LedgerProjections();
      this.foldedCount = 0;
    }
    for (; this.foldedCount < records.length; this.foldedCount++) this.folded.apply(records[this.foldedCount]!);
    return this.folded;
  }

  async find(operationId: string): Promise<RecordedOperation | undefined> {
    return this.fold().recorded(operationId);
  }

  async operation(operationId: string): Promise<OperationView | undefined> {
    return this.fold().operation(operationId);
  }

  async history(operationId: string): Promise<OperationHistoryView | undefined> {
    return this.fold().history(operationId);
  }

  async operations(query: OperationQuery = {}): Promise<OperationView[]> {
    const all = this.fold().operations({ ...(query.state ? { state: query.state } : {}), ...(query.conversationId !== undefined ? { conversationId: query.conversationId } : {}) });
    return all.reverse().slice(query.offset ?? 0, (query.offset ?? 0) + (query.limit ?? DEFAULT_LIMIT));
  }

  async recordedOperations(query: OperationQuery = {}): Promise<RecordedOperation[]> {
    const p = this.fold();
    return (await this.operations(query)).map((o) => p.recorded(o.operationId)!);
  }

  async unfinished(): Promise<RecordedOperation[]> {
    return this.fold()
      .recordedAll()
      .filter((r) => r.state === 'proposed' || r.state === 'awaiting_approval' || r.state === 'approved' || r.state === 'executing');
  }

  async unreconciled(): Promise<OperationView[]> {
    return this.fold().unreconciled().reverse();
  }

  async audit(filter: AuditFilter, pg: { limit: number; offset: number }): Promise<{ rows: AuditRow[]; total: number }> {
    const rows = this.fold().audit(filter).reverse();
    return { rows: rows.slice(pg.offset, pg.offset + pg.limit), total: rows.length };
  }

  async eachAuditRow(filter: AuditFilter, onRows: (rows: AuditRow[]) => Promise<void>, batch = 1000): Promise<number> {
    const rows = this.fold().audit(filter);
    for (let i = 0; i < rows.length; i += batch) await onRows(rows.slice(i, i + batch));
    return rows.length;
  }

  async operationCount(): Promise<number> {
    return this.fold().operationCount();
  }

  async toolNames(where: { serverId?: string; accountId?: string }, limit: number): Promise<string[]> {
    const names = new Set<string>();
    for (const o of this.fold().operations()) if ((where.serverId === undefined || o.serverId === where.serverId) && (where.accountId === undefined || o.accountId === where.accountId)) names.add(o.toolName);
    return [...names].sort().slice(0, limit);
  }

  async calls(filter: CallFilter, pg: CallPageQuery): Promise<{ calls: RecordedCall[]; next: CallCursor | null }> {
    const p = this.fold();
    const older = !pg.oldestFirst;
    const after = pg.after ?? null;
    const matching: RecordedCall[] = [];
    for (const view of p.operations()) {
      const at = p.proposal(view.operationId)!;
      const cursor = { time: at.time, n: at.seq };
      if (!matchesCall(view, cursor.time, filter)) continue;
      if (after && (older ? compareCursor(cursor, after) >= 0 : compareCursor(cursor, after) <= 0)) continue;
      matching.push({ view, arguments: p.recorded(view.operationId)!.proposed.arguments, cursor });
    }
    matching.sort((a, b) => (older ? compareCursor(b.cursor, a.cursor) : compareCursor(a.cursor, b.cursor)));
    const calls = matching.slice(0, pg.limit);
    return { calls, next: matching.length > pg.limit ? calls.at(-1)!.cursor : null };
  }
}

function compareCursor(a: CallCursor, b: CallCursor): number {
  return a.time - b.time || a.n - b.n;
}

/** The Activity filter on one operation, as the index's query applies it. */
function matchesCall(v: OperationView, time: number, f: CallFilter): boolean {
  return (
    (f.serverId === undefined || v.serverId === f.serverId) &&
    (f.accountId === undefined || v.accountId === f.accountId) &&
    (f.toolName === undefined || v.toolName === f.toolName) &&
    (f.conversationId === undefined || v.conversationId === f.conversationId) &&
    (f.operationId === undefined || v.operationId === f.operationId) &&
    (f.decision === undefined || v.decision?.decision === f.decision) &&
    (f.outcome === undefined || v.state === f.outcome) &&
    (f.from === undefined || time >= f.from) &&
    (f.to === undefined || time <= f.to)
  );
}

/**
 * Rows with the record each points at read once: the operations an older ledger's checkpoint
 * carried all point at that one (large) record.
 */
function onePerPlace(rows: IndexedRow[]): IndexedRow[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const place = `${r.segment}:${r.offset}`;
    if (seen.has(place)) return false;
    seen.add(place);
    return true;
  });
}

function withRetry(view: OperationView, retryOf: string | null): OperationView {
  return retryOf !== null && view.retryOf === null ? { ...view, retryOf } : view;
}

function opFilter(query: OperationQuery): { state?: string; conversationId?: string; unreconciled?: boolean } {
  if (query.state === 'reconciled') return { ...(query.conversationId !== undefined ? { conversationId: query.conversationId } : {}) };
  return { ...(query.state ? { state: query.state } : {}), ...(query.conversationId !== undefined ? { conversationId: query.conversationId } : {}) };
}

function page(query: OperationQuery): { limit: number; offset: number } {
  return { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
}
