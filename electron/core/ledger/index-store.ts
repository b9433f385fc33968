/**
 * Why this file is long: it is the index's one writer (schema, batching, classification, the
 * transaction) and must stay one unit so every column is written in one place; queries that only
 * read it live beside it (activity-query.ts reads operations a page at a time).
 *
 * The ledger's persistent index: a SQLite file beside the segments (`index.sqlite`) that says
 * where each record is and what it is about, so that history queries, idempotency and start-up
 * cost the same at a million calls as at ten.
 *
 * It is derived, never the source of truth: it holds no record content, only each record's place
 * in the ledger and the columns queries filter on (operation, server, account, tool,
 * conversation, decision, time, type), plus each operation's current state. Readers fetch the
 * records themselves from the ledger and fold them (projections.ts), so what a query shows is
 * always what the ledger says. Deleting the file costs one rebuild from the segments.
 *
 * Consistency: records are added in sequence order as they are appended (or read back by
 * recovery) and committed in batches together with the position of the last one, in one
 * transaction, at most `COMMIT_DELAY_MS` after they were added. A crash loses at most the last
 * uncommitted batch, which the next start reads again from the ledger (recovery resumes after the
 * committed position). Statements run in the
 * order they are issued, so a query issued after a batch sees it (`flush` issues pending work).
 * The one query that does not commit first is the gate's idempotency lookup
 * (`operationRecords`): it reads what is not committed yet from the batches in memory
 * (docs/decisions/0013-idempotency-lookups.md).
 */
import { parseJournalEvent } from '../../../shared/domain/journal-events';
import { OpReconciled, RECONCILED_TYPE, type AuditFilter, type LedgerChainBreak } from '../../../shared/domain/ledger';
import { TERMINAL_STATES, type OperationState } from '../../../shared/domain/operations';
import { CHECKPOINT_TYPE, type StoredRecord } from './format';
import type { LogPosition, RecordLocation } from './recovery';
import type { SqlConnection } from './sqlite';

/**
 * Bumped when the schema or what is indexed changes: an index of another version is rebuilt from
 * the ledger. Version 2 pages operations by request time and indexes the operations older ledgers
 * kept only in their checkpoints; version 3 files operations under their facet (server, account,
 * tool, decision, state together) so any combination of Activity filters is one index range per
 * facet (activity-query.ts).
 */
const SCHEMA_VERSION = '3';
/** Records per transaction while catching up (a rebuild); steady state commits what is pending. */
const BATCH = 5000;
/**
 * How long added records wait to be committed together. Queries commit what is pending first
 * (the idempotency lookup reads it from memory instead), so nothing added is ever missing from an
 * answer; the wait only keeps index commits (a few thread pool hops and a WAL write each) off the
 * path of every single call.
 */
const COMMIT_DELAY_MS = 100;
/** Names (servers, tools, conversations, …) whose ids are kept in memory; the rest are looked up. */
const NAME_CACHE = 4096;
/** Counts above this are reported as "at least" (an exact count over a million rows is not free). */
export const COUNT_CAP = 10_000;

/**
 * The tables and indexes. `facets` lists each combination of (server, account, tool, decision,
 * state) any operation has had — a few hundred rows, kept by the triggers in the same transaction
 * as the operation itself — and `ops_facet_time` / `ops_conv_facet_time` file operations under
 * that combination and then their time: together they let any combination of Activity filters
 * read only what it shows (activity-query.ts). A facet an operation has left stays listed: it
 * costs the query one empty index probe, never a wrong row.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS names(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS ops(
  n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
  server INTEGER, account INTEGER, tool INTEGER, conv INTEGER, decision TEXT, reconciled INTEGER NOT NULL DEFAULT 0, retry_of TEXT,
  time INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS ops_state ON ops(state, n);
CREATE INDEX IF NOT EXISTS ops_conv ON ops(conv, n);
CREATE INDEX IF NOT EXISTS ops_time ON ops(time);
CREATE INDEX IF NOT EXISTS ops_facet_time ON ops(server, account, tool, decision, state, time);
CREATE INDEX IF NOT EXISTS ops_conv_facet_time ON ops(conv, server, account, tool, decision, state, time);
CREATE TABLE IF NOT EXISTS facets(server INTEGER NOT NULL, account INTEGER NOT NULL, tool INTEGER NOT NULL, decision TEXT NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY(server, account, tool, decision, state)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS ops_facet_added AFTER INSERT ON ops BEGIN
  INSERT INTO facets SELECT ifnull(new.server, 0), ifnull(new.account, 0), ifnull(new.tool, 0), ifnull(new.decision, ''), new.state WHERE NOT EXISTS
    (SELECT 1 FROM facets WHERE server = ifnull(new.server, 0) AND account = ifnull(new.account, 0) AND tool = ifnull(new.tool, 0) AND decision = ifnull(new.decision, '') AND state = new.state);
END;
CREATE TRIGGER IF NOT EXISTS ops_facet_changed AFTER UPDATE OF state, decision ON ops BEGIN
  INSERT INTO facets SELECT ifnull(new.server, 0), ifnull(new.account, 0), ifnull(new.tool, 0), ifnull(new.decision, ''), new.state WHERE NOT EXISTS
    (SELECT 1 FROM facets WHERE server = ifnull(new.server, 0) AND account = ifnull(new.account, 0) AND tool = ifnull(new.tool, 0) AND decision = ifnull(new.decision, '') AND state = new.state);
END;
CREATE TABLE IF NOT EXISTS rows(
  seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, type INTEGER NOT NULL, op INTEGER,
  server INTEGER, account INTEGER, tool INTEGER, conv INTEGER, decision TEXT,
  segment INTEGER NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rows_op ON rows(op, seq);
CREATE INDEX IF NOT EXISTS rows_server ON rows(server, seq);
CREATE INDEX IF NOT EXISTS rows_account ON rows(account, seq);
CREATE INDEX IF NOT EXISTS rows_tool ON rows(tool, seq);
CREATE INDEX IF NOT EXISTS rows_conv ON rows(conv, seq);
CREATE INDEX IF NOT EXISTS rows_decision ON rows(decision, seq);
CREATE INDEX IF NOT EXISTS rows_type ON rows(type, seq);
CREATE INDEX IF NOT EXISTS rows_time ON rows(time);
CREATE TABLE IF NOT EXISTS pins(server TEXT NOT NULL, account TEXT NOT NULL, tool TEXT NOT NULL, hash TEXT, instructions TEXT, seq INTEGER NOT NULL, PRIMARY KEY(server, account, tool));
`;

/** An operation's indexed facts (what filters and the next record's row need). */
interface OpFacts {
  n: number;
  state: OperationState;
  server: string;
  account: string;
  tool: string;
  conv: string | null;
  decision: string | null;
  reconciled: boolean;
  /** The outcome_unknown operation this one retries (its reconciliation names it). */
  retryOf: string | null;
  /** When it was requested (its proposal record's time): Activity pages by it. */
  time: number;
}

/** A record as added, waiting for its batch. */
interface Added {
  record: StoredRecord;
  location: RecordLocation;
}

/** The payload of a record the index keeps only the classified facts of (see `addClassified`). */
const NO_PAYLOAD: Readonly<Record<string, unknown>> = Object.freeze({});

/** Longest stretch of classifying before yielding to the event loop (a record takes tens of µs). */
const CLASSIFY_SLICE_MS = 1;

/** One record as classified for its batch (parsing happens once, on the way to the write). */
type Pending =
  | { kind: 'skip'; record: StoredRecord; location: RecordLocation }
  | { kind: 'row'; record: StoredRecord; location: RecordLocation; server: string | null; account: string | null; tool: string | null; conv: string | null; pin?: { hash: string | null; instructions: string | null } }
  | { kind: 'proposed'; record: StoredRecord; location: RecordLocation; id: string; server: string; account: string; tool: string; conv: string | null }
  | { kind: 'transition'; record: StoredRecord; location: RecordLocation; id: string; to: OperationState; decision: string | null }
  | { kind: 'reconciled'; record: StoredRecord; location: RecordLocation; id: string; outcome: string; retry: string | null }
  | { kind: 'observed'; record: StoredRecord; location: RecordLocation; id: string }
  | { kind: 'carried'; record: StoredRecord; location: RecordLocation; ops: CarriedOp[] };

/**
 * An operation as an older ledger's checkpoint carried it. Those ledgers deleted old segments and
 * kept every operation in the checkpoint starting each segment: for operations made in deleted
 * segments, the checkpoint is the only record there is. The index points their row at it.
 */
interface CarriedOp {
  id: string;
  /** The seq of its proposal (in a segment that no longer exists): its operation number. */
  n: number;
  time: number;
  server: string;
  account: string;
  tool: string;
  conv: string | null;
  state: OperationState;
  decision: string | null;
  reconciled: boolean;
  retryOf: string | null;
}

/** A row as the index answers: where its record is, and which operation it belongs to. */
export interface IndexedRow {
  seq: number;
  op: number | null;
  segment: number;
  offset: number;
  length: number;
}

/** What a read-only query module gets from the index (see `LedgerIndex.reader`). */
export interface IndexReader {
  db: SqlConnection;
  nameId(text: string): Promise<number | undefined>;
}

/** Paging for row and operation queries: newest first. */
export interface Page {
  limit: number;
  offset?: number;
}

/** The index. Open with `LedgerIndex.open`. */
export class LedgerIndex {
  /** Records added and not yet handed to a write (classified there, not on the append path). */
  private pending: Array<Added | Pending> = [];
  /** Batches handed to a write and not committed yet, oldest first (`operationRecords` reads them). */
  private writing: Array<Array<Added | Pending>> = [];
  /**
   * Operation ids proposed in records not committed yet, each with how many proposals (a
   * duplicate id is recorded and skipped, as the projections do): `operationRecords` answers
   * for them from memory instead of committing first.
   */
  private readonly uncommittedIds = new Map<string, number>();
  /**
   * Records not committed yet that `operationRecords` cannot answer from memory: an older
   * ledger's checkpoint carrying operations, or records a catch-up added already classified
   * (their payload is dropped). While any is waiting, a lookup commits first, as every query does.
   */
  private opaque = 0;
  /** Committed-index lookups waiting for the next query (see `committedNumber`). */
  private lookupQueue = new Map<string, Array<{ resolve: (n: number | undefined) => void; reject: (error: unknown) => void }>>();
  private lookingUp = false;
  private flushing: Promise<void> = Promise.resolve();
  private scheduled = false;
  private failure: unknown = null;
  private readonly names = new Map<string, number>();
  /** Facts of operations not finished yet, and of those touched by the batch being written. */
  private readonly live = new Map<string, OpFacts>();
  private committed: LogPosition | null = null;
  private lastAdded: LogPosition | null = null;
  private readonly counts = { commits: 0, records: 0, commitMs: 0 };

  private constructor(
    private readonly db: SqlConnection,
    private readonly commitDelayMs: number,
  ) {}

  /**
   * Opens the index (creating it, or starting it over when its schema is another version's).
   * `commitDelayMs` is how long added records wait for their batch (default `COMMIT_DELAY_MS`;
   * tests make it long to hold records in a batch that is not committed yet).
   */
  static async open(db: SqlConnection, options: { commitDelayMs?: number } = {}): Promise<LedgerIndex> {
    await db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;');
    const index = new LedgerIndex(db, options.commitDelayMs ?? COMMIT_DELAY_MS);
    const version = await db.get<{ v: string }>("SELECT v FROM sqlite_master, meta WHERE sqlite_master.name = 'meta' AND meta.k = 'schema'").catch(() => undefined);
    if (version?.v !== SCHEMA_VERSION) await index.reset();
    else await db.exec(SCHEMA);
    const position = await db.get<{ v: string }>("SELECT v FROM meta WHERE k = 'position'");
    index.committed = position ? (JSON.parse(position.v) as LogPosition) : null;
    index.lastAdded = index.committed;
    for (const op of await db.all<{ id: string; n: number; time: number; state: OperationState; decision: string | null; reconciled: number; retryOf: string | null; serverName: string; accountName: string; toolName: string; convName: string | null }>(
      `SELECT o.id, o.n, o.time, o.state, s.text serverName, a.text accountName, t.text toolName, c.text convName, o.decision, o.reconciled, o.retry_of retryOf FROM ops o
       LEFT JOIN names s ON s.id = o.server LEFT JOIN names a ON a.id = o.account LEFT JOIN names t ON t.id = o.tool LEFT JOIN names c ON c.id = o.conv
       WHERE o.state IN (${liveStates()})`,
    )) {
      index.live.set(op.id, { n: op.n, time: op.time, state: op.state, server: op.serverName, account: op.accountName, tool: op.toolName, conv: op.convName, decision: op.decision, reconciled: op.reconciled === 1, retryOf: op.retryOf });
    }
    return index;
  }

  /** The last record the index committed (recovery resumes after it); null when empty. */
  get position(): LogPosition | null {
    return this.committed;
  }

  /**
   * Transactions committed and records they held since open, and the time from each one's BEGIN
   * to its COMMIT: what the batching achieves (a call path that forces a commit per call shows
   * here as one commit per call), and whether a commit costs more as history grows.
   */
  get stats(): { commits: number; records: number; commitMs: number } {
    return { ...this.counts };
  }

  /** Records added and not yet handed to a write (a catch-up waits when this grows). */
  get backlog(): number {
    return this.pending.length;
  }

  /** Drops everything (the ledger will be read again from its first record). */
  async reset(): Promise<void> {
    this.pending = [];
    this.writing = [];
    this.uncommittedIds.clear();
    this.opaque = 0;
    this.live.clear();
    this.names.clear();
    this.committed = null;
    this.lastAdded = null;
    // Breaks found earlier are kept (the pins table is kept too): a start that rebuilds the index
    // is in safe mode at once for them, not only after the full verification finds them again.
    const breaks = await this.db.get<{ v: string }>("SELECT v FROM meta WHERE k = 'breaks'").catch(() => undefined);
    // One exec: no statement issued meanwhile (a query, a save of breaks) can run between the drop
    // and the new tables and find them missing.
    const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
    await this.db.exec(
      'DROP TABLE IF EXISTS rows; DROP TABLE IF EXISTS ops; DROP TABLE IF EXISTS facets; DROP TABLE IF EXISTS names; DROP TABLE IF EXISTS meta;' +
        SCHEMA +
        `INSERT INTO meta(k, v) VALUES ('schema', ${literal(SCHEMA_VERSION)});` +
        (breaks ? `INSERT INTO meta(k, v) VALUES ('breaks', ${literal(breaks.v)});` : ''),
    );
  }

  /**
   * Adds a record (call in sequence order). Nothing is parsed here: this runs inside every
   * append, on the call's path; the records are classified and committed in a batch shortly
   * after (or by `flush`).
   */
  add(record: StoredRecord, location: RecordLocation): void {
    const added = { record, location };
    this.pending.push(added);
    this.track(added, 1);
    this.lastAdded = { ...location, offset: location.offset + location.length, seq: record.seq, checksum: record.checksum };
    if (this.pending.length >= BATCH) void this.flush().catch(() => undefined);
    else if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => {
        this.scheduled = false;
        void this.flush().catch(() => undefined);
      }, this.commitDelayMs).unref();
    }
  }

  /**
   * Adds a record classified at once, keeping only what the index writes of it (a catch-up:
   * records read back in bulk would otherwise stay alive, payload and all, until their batch
   * commits, and every young-generation collection would copy them: pauses of tens of ms).
   */
  addClassified(record: StoredRecord, location: RecordLocation): void {
    const p = classify(record, location);
    const slim = { seq: record.seq, time: record.time, type: record.type, payload: NO_PAYLOAD, prevHash: '', checksum: record.checksum } as StoredRecord;
    const pending = { ...p, record: slim } as Pending;
    this.pending.push(pending);
    this.track(pending, 1);
    this.lastAdded = { ...location, offset: location.offset + location.length, seq: record.seq, checksum: record.checksum };
  }

  /** Writes everything added so far; resolves when it is committed. */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending.length === 0) return this.flushing;
    const batch = this.pending;
    const position = this.lastAdded;
    this.pending = [];
    this.writing.push(batch);
    this.flushing = this.flushing.then(() => this.write(batch, position));
    this.flushing.catch((error: unknown) => {
      this.failure = error;
    });
    return this.flushing;
  }

  /** Flushes and closes the database (refreshing the planner's statistics first). */
  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.db.exec('PRAGMA optimize;').catch(() => undefined);
    await this.db.close();
  }

  // ---- queries (each sees everything added before it was called) ----------------------------

  /** Audit rows matching `filter`, newest first, and how many match (capped at COUNT_CAP + 1). */
  async rows(filter: AuditFilter, page: Page): Promise<{ rows: IndexedRow[]; total: number }> {
    await this.flush();
    const where = await this.rowFilter(filter);
    if (where === null) return { rows: [], total: 0 };
    const rows = await this.db.all<IndexedRow>(`SELECT seq, op, segment, offset, length FROM rows ${where.sql} ${where.order} LIMIT ? OFFSET ?`, [...where.params, page.limit, page.offset ?? 0]);
    const counted = await this.db.get<{ c: number }>(`SELECT count(*) c FROM (SELECT 1 FROM rows ${where.sql} LIMIT ${COUNT_CAP + 1})`, where.params);
    return { rows, total: counted?.c ?? 0 };
  }

  /** Every row in seq order from `afterSeq`, `limit` at a time (exports read through this). */
  async rowsAfter(filter: AuditFilter, afterSeq: number, limit: number): Promise<IndexedRow[]> {
    await this.flush();
    const where = await this.rowFilter(filter, afterSeq);
    if (where === null) return [];
    return this.db.all<IndexedRow>(`SELECT seq, op, segment, offset, length FROM rows ${where.sql} ORDER BY seq LIMIT ?`, [...where.params, limit]);
  }

  /** Where the records of operations `ns` are (up to `maxSeq`), in seq order. */
  async recordsOf(ns: readonly number[], maxSeq = Number.MAX_SAFE_INTEGER): Promise<IndexedRow[]> {
    await this.flush();
    if (ns.length === 0) return [];
    return this.db.all<IndexedRow>(`SELECT seq, op, segment, offset, length FROM rows WHERE op IN (SELECT value FROM json_each(?)) AND seq <= ? ORDER BY seq`, [JSON.stringify(ns), maxSeq]);
  }

  /** Ids and retry links of operations `ns`. */
  async operationIds(ns: readonly number[]): Promise<Array<{ n: number; id: string; retryOf: string | null }>> {
    await this.flush();
    if (ns.length === 0) return [];
    return this.db.all(`SELECT n, id, retry_of retryOf FROM ops WHERE n IN (SELECT value FROM json_each(?))`, [JSON.stringify(ns)]);
  }

  /**
   * Every record of operation `id`, without committing anything: where its committed records
   * are (`rows`, in seq order) and its records not committed yet (`records`, from memory).
   * Undefined when no operation has this id.
   *
   * The gate asks this before admitting every call that names its own id (every chat call).
   * Committing first, as the other queries do, made each such call a commit of its own: the
   * batching that keeps index commits off the call path was lost, and calls queued behind each
   * other's commits. An id never seen (the usual answer) costs one indexed read of the committed
   * index; what is not committed yet is read from the batches waiting in memory.
   */
  async operationRecords(id: string): Promise<{ rows: IndexedRow[]; records: StoredRecord[] } | undefined> {
    if (this.failure) throw this.failure;
    if (this.opaque > 0) {
      await this.flush();
      return this.committedRecordsOf(id, []);
    }
    // Taken synchronously, before anything awaits: a batch that commits meanwhile is in both the
    // committed index and this copy, and the committed copy of a record is dropped below.
    const records: StoredRecord[] = [];
    for (const batch of this.writing) for (const a of batch) if (concerns(a, id)) records.push(a.record);
    for (const a of this.pending) if (concerns(a, id)) records.push(a.record);
    const proposedInMemory = this.uncommittedIds.has(id);
    const found = await this.committedRecordsOf(id, records);
    return found ?? (proposedInMemory ? { rows: [], records } : undefined);
  }

  private async committedRecordsOf(id: string, inMemory: readonly StoredRecord[]): Promise<{ rows: IndexedRow[]; records: StoredRecord[] } | undefined> {
    const n = await this.committedNumber(id);
    if (n === undefined) return undefined;
    const held = new Set(inMemory.map((r) => r.seq));
    const rows = await this.db.all<IndexedRow>('SELECT seq, op, segment, offset, length FROM rows WHERE op = ? ORDER BY seq', [n]);
    return { rows: rows.filter((r) => !held.has(r.seq)), records: [...inMemory] };
  }

  /** The operation number (seq of its proposal) of an operation id, if indexed. */
  async operationNumber(id: string): Promise<number | undefined> {
    await this.flush();
    return (await this.db.get<{ n: number }>('SELECT n FROM ops WHERE id = ?', [id]))?.n;
  }

  /** Operation numbers, newest first, by state and/or conversation. */
  async operations(filter: { state?: string; conversationId?: string; unreconciled?: boolean; unfinished?: boolean }, page: Page): Promise<number[]> {
    await this.flush();
    const clauses: string[] = [];
    const params: unknown[] = [];
    if (filter.state !== undefined) {
      clauses.push('state = ?');
      params.push(filter.state);
    }
    if (filter.unfinished) clauses.push("state IN ('proposed','awaiting_approval','approved','executing')");
    if (filter.unreconciled) clauses.push('reconciled = 0');
    if (filter.conversationId !== undefined) {
      const id = await this.nameId(filter.conversationId);
      if (id === undefined) return [];
      clauses.push('conv = ?');
      params.push(id);
    }
    const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
    const rows = await this.db.all<{ n: number }>(`SELECT n FROM ops ${where} ORDER BY n DESC LIMIT ? OFFSET ?`, [...params, page.limit, page.offset ?? 0]);
    return rows.map((r) => r.n);
  }

  /**
   * Every tool name any indexed operation names (of one server, or one account of it, when given),
   * sorted, at most `limit`: read from the facets, so it costs the number of combinations, not
   * the length of the history.
   */
  async toolNames(where: { serverId?: string; accountId?: string }, limit: number): Promise<string[]> {
    await this.flush();
    const conditions: string[] = [];
    const params: Array<string | number> = [];
    if (where.serverId !== undefined) {
      conditions.push('f.server = (SELECT id FROM names WHERE text = ?)');
      params.push(where.serverId);
    }
    if (where.accountId !== undefined) {
      conditions.push('f.account = (SELECT id FROM names WHERE text = ?)');
      params.push(where.accountId);
    }
    const rows = await this.db.all<{ name: string }>(
      `SELECT DISTINCT t.text name FROM facets f JOIN names t ON t.id = f.tool ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY name LIMIT ?`,
      [...params, limit],
    );
    return rows.map((r) => r.name);
  }

  /** How many operations are indexed. */
  async operationCount(): Promise<number> {
    await this.flush();
    return (await this.db.get<{ c: number }>('SELECT count(*) c FROM ops'))?.c ?? 0;
  }

  /**
   * Chain breaks found so far (at a start or by a verification), so the next start is in safe mode
   * at once instead of after its own verification finds them again. A cache like the rest of the
   * index: without it, the start-up scan and the verification find them in the segments.
   */
  async breaks(): Promise<LedgerChainBreak[]> {
    const row = await this.db.get<{ v: string }>("SELECT v FROM meta WHERE k = 'breaks'");
    return row ? (JSON.parse(row.v) as LedgerChainBreak[]) : [];
  }

  /** Remembers the breaks found so far (see `breaks`). */
  async saveBreaks(breaks: readonly LedgerChainBreak[]): Promise<void> {
    await this.flush();
    await this.db.run("INSERT OR REPLACE INTO meta(k, v) VALUES ('breaks', ?)", [JSON.stringify(breaks)]);
  }

  /** The last recorded contract of every tool (few: one row per tool ever listed), oldest first. */
  async pins(): Promise<Array<{ server: string; account: string; tool: string; hash: string | null; instructions: string | null; seq: number }>> {
    await this.flush();
    return this.db.all('SELECT server, account, tool, hash, instructions, seq FROM pins ORDER BY seq');
  }

  /** Rows of the given record types (few: acknowledgements), oldest first. */
  async rowsOfType(type: string): Promise<IndexedRow[]> {
    await this.flush();
    const id = await this.nameId(type);
    if (id === undefined) return [];
    return this.db.all<IndexedRow>('SELECT seq, op, segment, offset, length FROM rows WHERE type = ? ORDER BY seq', [id]);
  }

  /**
   * The connection for read-only query modules beside this one (activity-query.ts), once
   * everything added so far is committed, and the id of a name (undefined: never indexed).
   */
  async reader(): Promise<IndexReader> {
    await this.flush();
    return { db: this.db, nameId: (text) => this.nameId(text) };
  }

  // ---- internals ---------------------------------------------------------------------------

  /**
   * The WHERE clause of a row query and the order that lets SQLite walk one index without a sort:
   * by seq along the column index of the filter when there is one (time then only filters: the
   * unary `+` keeps the planner off the time index), by time along the time index when time is
   * the only filter.
   */
  private async rowFilter(filter: AuditFilter, afterSeq?: number): Promise<{ sql: string; params: unknown[]; order: string } | null> {
    const clauses: string[] = [];
    const params: unknown[] = [];
    const byName = async (column: string, text: string | undefined): Promise<boolean> => {
      if (text === undefined) return true;
      const id = await this.nameId(text);
      if (id === undefined) return false;
      clauses.push(`${column} = ?`);
      params.push(id);
      return true;
    };
    if (!(await byName('server', filter.serverId)) || !(await byName('account', filter.accountId)) || !(await byName('tool', filter.toolName)) || !(await byName('conv', filter.conversationId))) return null;
    if (filter.decision !== undefined) {
      clauses.push('decision = ?');
      params.push(filter.decision);
    }
    if (filter.operationId !== undefined) {
      const n = (await this.db.get<{ n: number }>('SELECT n FROM ops WHERE id = ?', [filter.operationId]))?.n;
      if (n === undefined) return null;
      clauses.push('op = ?');
      params.push(n);
    }
    const timeOnly = clauses.length === 0 && !filter.types && afterSeq === undefined;
    const time = timeOnly ? 'time' : '+time';
    if (filter.from !== undefined) {
      clauses.push(`${time} >= ?`);
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      clauses.push(`${time} <= ?`);
      params.push(filter.to);
    }
    const byTime = timeOnly && (filter.from !== undefined || filter.to !== undefined);
    if (filter.types) {
      const ids: number[] = [];
      for (const t of filter.types) {
        const id = await this.nameId(t);
        if (id !== undefined) ids.push(id);
      }
      if (ids.length === 0) return null;
      clauses.push('type IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(ids));
    }
    if (afterSeq !== undefined) {
      clauses.push('seq > ?');
      params.push(afterSeq);
    }
    return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params, order: byTime ? 'ORDER BY time DESC, seq DESC' : 'ORDER BY seq DESC' };
  }

  private async nameId(text: string): Promise<number | undefined> {
    const cached = this.names.get(text);
    if (cached !== undefined) return cached;
    const row = await this.db.get<{ id: number }>('SELECT id FROM names WHERE text = ?', [text]);
    if (row) this.remember(text, row.id);
    return row?.id;
  }

  /**
   * The operation number of `id` in the committed index. Lookups asked while one is running, or in
   * the same turn, go in one query: the connection runs statements one at a time, and 32 callers'
   * lookups one after another spread their calls over several milliseconds, so fewer of them
   * shared a ledger sync (twice the syncs per call of the same calls without ids).
   */
  private committedNumber(id: string): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.lookupQueue.get(id);
      if (waiting) waiting.push({ resolve, reject });
      else this.lookupQueue.set(id, [{ resolve, reject }]);
      if (!this.lookingUp) {
        this.lookingUp = true;
        queueMicrotask(() => void this.lookUpQueued());
      }
    });
  }

  private async lookUpQueued(): Promise<void> {
    while (this.lookupQueue.size > 0) {
      const batch = this.lookupQueue;
      this.lookupQueue = new Map();
      try {
        const found = await this.db.all<{ id: string; n: number }>('SELECT id, n FROM ops WHERE id IN (SELECT value FROM json_each(?))', [JSON.stringify([...batch.keys()])]);
        const byId = new Map(found.map((f) => [f.id, f.n]));
        for (const [id, waiting] of batch) for (const w of waiting) w.resolve(byId.get(id));
      } catch (error) {
        for (const waiting of batch.values()) for (const w of waiting) w.reject(error);
      }
    }
    this.lookingUp = false;
  }

  /** Counts what a record added (`by` 1) or committed (`by` -1) means for `operationRecords`. */
  private track(a: Added | Pending, by: 1 | -1): void {
    if ('kind' in a) {
      // Classified by a catch-up: its payload is gone, so a lookup cannot fold it from memory.
      if (a.kind !== 'skip' && a.kind !== 'row') this.opaque += by;
      return;
    }
    const { type, payload } = a.record;
    if (type === 'op.proposed' && typeof payload.operationId === 'string') {
      const left = (this.uncommittedIds.get(payload.operationId) ?? 0) + by;
      if (left > 0) this.uncommittedIds.set(payload.operationId, left);
      else this.uncommittedIds.delete(payload.operationId);
    } else if (type === CHECKPOINT_TYPE && Array.isArray((payload.state as { operations?: unknown } | undefined)?.operations)) {
      this.opaque += by;
    }
  }

  private remember(text: string, id: number): void {
    this.names.delete(text);
    if (this.names.size >= NAME_CACHE) this.names.delete(this.names.keys().next().value as string);
    this.names.set(text, id);
  }

  /**
   * Classifies added records in slices, yielding to the event loop between them: a batch holds
   * everything appended in the last `COMMIT_DELAY_MS` (hundreds of records under load), and
   * parsing it in one go would be a pause of its own.
   */
  private async classifyAll(added: Array<Added | Pending>): Promise<Pending[]> {
    const out: Pending[] = new Array(added.length);
    let sliceStart = performance.now();
    for (let i = 0; i < added.length; i++) {
      if (performance.now() - sliceStart > CLASSIFY_SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      const a = added[i]!;
      out[i] = 'kind' in a ? a : classify(a.record, a.location);
    }
    return out;
  }

  /** One transaction: names, operations and rows of `added`, and the position after it. */
  private async write(added: Array<Added | Pending>, position: LogPosition | null): Promise<void> {
    const batch = await this.classifyAll(added);
    // Facts of operations this batch touches that are not in memory (finished ones, e.g. a late
    // reconciliation) are read first; everything else is decided here, in order.
    const missing = new Set<string>();
    for (const p of batch) {
      if ((p.kind === 'transition' || p.kind === 'reconciled' || p.kind === 'proposed' || p.kind === 'observed') && !this.live.has(p.id)) missing.add(p.id);
      if (p.kind === 'reconciled' && p.retry !== null && !this.live.has(p.retry)) missing.add(p.retry);
      if (p.kind === 'carried') for (const op of p.ops) if (!this.live.has(op.id)) missing.add(op.id);
    }
    const known = new Map<string, OpFacts>();
    if (missing.size > 0) {
      const found = await this.db.all<{ id: string; n: number; time: number; state: OperationState; server: string; account: string; tool: string; conv: string | null; decision: string | null; reconciled: number; retryOf: string | null }>(
        `SELECT o.id, o.n, o.time, o.state, s.text server, a.text account, t.text tool, c.text conv, o.decision, o.reconciled, o.retry_of retryOf FROM ops o
         LEFT JOIN names s ON s.id = o.server LEFT JOIN names a ON a.id = o.account LEFT JOIN names t ON t.id = o.tool LEFT JOIN names c ON c.id = o.conv
         WHERE o.id IN (SELECT value FROM json_each(?))`,
        [JSON.stringify([...missing])],
      );
      for (const f of found) known.set(f.id, { ...f, reconciled: f.reconciled === 1 });
    }
    const factsOf = (id: string): OpFacts | undefined => this.live.get(id) ?? known.get(id);
    const touched = new Map<string, OpFacts>();
    const rows: unknown[][] = [];
    const pins: unknown[][] = [];
    const texts = new Set<string>();
    const name = (t: string | null): string | null => {
      if (t !== null) texts.add(t);
      return t;
    };
    const pushRow = (p: Pending, op: OpFacts | null, server: string | null, account: string | null, tool: string | null, conv: string | null, decision: string | null) => {
      rows.push([p.record.seq, p.record.time, name(p.record.type), op?.n ?? null, name(server), name(account), name(tool), name(conv), decision, p.location.segment, p.location.offset, p.location.length]);
    };
    for (const p of batch) {
      switch (p.kind) {
        case 'skip':
          break;
        case 'row':
          pushRow(p, null, p.server, p.account, p.tool, p.conv, null);
          if (p.pin) pins.push([p.server, p.account, p.tool, p.pin.hash, p.pin.instructions, p.record.seq]);
          break;
        case 'carried':
          // Operations already known (their records are in kept segments) are current already.
          for (const op of p.ops) {
            if (factsOf(op.id) || touched.has(op.id)) continue;
            const f: OpFacts = { n: op.n, time: op.time, state: op.state, server: op.server, account: op.account, tool: op.tool, conv: op.conv, decision: op.decision, reconciled: op.reconciled, retryOf: op.retryOf };
            this.live.set(op.id, f);
            touched.set(op.id, f);
            rows.push([op.n, op.time, name(p.record.type), op.n, name(op.server), name(op.account), name(op.tool), name(op.conv), op.decision, p.location.segment, p.location.offset, p.location.length]);
          }
          break;
        case 'proposed': {
          if (factsOf(p.id) || touched.has(p.id)) break; // a duplicate id is skipped, as the projections do
          const f: OpFacts = { n: p.record.seq, time: p.record.time, state: 'proposed', server: p.server, account: p.account, tool: p.tool, conv: p.conv, decision: null, reconciled: false, retryOf: null };
          this.live.set(p.id, f);
          touched.set(p.id, f);
          pushRow(p, f, f.server, f.account, f.tool, f.conv, null);
          break;
        }
        case 'transition': {
          const f = factsOf(p.id);
          if (!f) break;
          f.state = p.to;
          if (p.decision !== null) f.decision = p.decision;
          touched.set(p.id, f);
          pushRow(p, f, f.server, f.account, f.tool, f.conv, f.decision);
          break;
        }
        case 'observed': {
          // Filed under its operation so its history reads it; an observation changes no state.
          const f = touched.get(p.id) ?? factsOf(p.id);
          if (!f) break;
          pushRow(p, f, f.server, f.account, f.tool, f.conv, f.decision);
          break;
        }
        case 'reconciled': {
          const f = factsOf(p.id);
          if (!f || f.state !== 'outcome_unknown' || f.reconciled) break;
          f.reconciled = true;
          if (p.outcome !== 'retried') f.state = p.outcome as OperationState;
          touched.set(p.id, f);
          const retry = p.retry === null ? undefined : (touched.get(p.retry) ?? factsOf(p.retry));
          if (retry && p.retry !== null) {
            retry.retryOf = p.id;
            touched.set(p.retry, retry);
          }
          pushRow(p, f, f.server, f.account, f.tool, f.conv, f.decision);
          break;
        }
      }
    }
    // Name ids for this batch, held here for the whole write: the shared cache may evict any of
    // them while the new ones are remembered.
    const ids = new Map<string, number>();
    const unknownNames: string[] = [];
    for (const t of texts) {
      const known = this.names.get(t);
      if (known === undefined) unknownNames.push(t);
      else ids.set(t, known);
    }
    const began = performance.now();
    await this.db.run('BEGIN');
    try {
      if (unknownNames.length > 0) {
        const json = JSON.stringify(unknownNames);
        await this.db.run('INSERT OR IGNORE INTO names(text) SELECT value FROM json_each(?)', [json]);
        for (const r of await this.db.all<{ id: number; text: string }>('SELECT id, text FROM names WHERE text IN (SELECT value FROM json_each(?))', [json])) {
          ids.set(r.text, r.id);
          this.remember(r.text, r.id);
        }
      }
      const id = (t: unknown): number | null => (typeof t === 'string' ? (ids.get(t) ?? null) : null);
      const opRows = [...touched.entries()].map(([opId, f]) => [f.n, opId, f.state, id(f.server), id(f.account), id(f.tool), id(f.conv), f.decision, f.reconciled ? 1 : 0, f.retryOf, f.time]);
      if (opRows.length > 0) {
        await this.db.run(
          `INSERT INTO ops(n, id, state, server, account, tool, conv, decision, reconciled, retry_of, time)
           SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, value->>9, value->>10 FROM json_each(?) WHERE true
           ON CONFLICT(n) DO UPDATE SET state = excluded.state, decision = excluded.decision, reconciled = excluded.reconciled, retry_of = excluded.retry_of`,
          [JSON.stringify(opRows)],
        );
      }
      if (rows.length > 0) {
        for (const r of rows) for (const i of [2, 4, 5, 6, 7]) r[i] = id(r[i]);
        await this.db.run(
          `INSERT OR REPLACE INTO rows(seq, time, type, op, server, account, tool, conv, decision, segment, offset, length)
           SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, value->>9, value->>10, value->>11 FROM json_each(?)`,
          [JSON.stringify(rows)],
        );
      }
      if (pins.length > 0) {
        await this.db.run(
          `INSERT OR REPLACE INTO pins(server, account, tool, hash, instructions, seq)
           SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5 FROM json_each(?)`,
          [JSON.stringify(pins)],
        );
      }
      if (position) await this.db.run("INSERT OR REPLACE INTO meta(k, v) VALUES ('position', ?)", [JSON.stringify(position)]);
      await this.db.run('COMMIT');
    } catch (error) {
      await this.db.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    this.counts.commits++;
    this.counts.records += added.length;
    this.counts.commitMs += performance.now() - began;
    this.committed = position;
    // Committed: lookups read these from the index now (reset may have dropped the batch already).
    const at = this.writing.indexOf(added);
    if (at >= 0) {
      this.writing.splice(at, 1);
      for (const a of added) this.track(a, -1);
    }
    // Only unfinished operations stay in memory: memory does not grow with history.
    for (const [opId, f] of touched) if (TERMINAL_STATES.has(f.state) && (f.state !== 'outcome_unknown' || f.reconciled)) this.live.delete(opId);
    for (const [opId, f] of this.live) if (TERMINAL_STATES.has(f.state) && f.state !== 'outcome_unknown') this.live.delete(opId);
  }
}

/** Whether an added record is about operation `id` (its proposal, a transition, an observation, a reconciliation). */
function concerns(a: Added | Pending, id: string): boolean {
  return !('kind' in a) && a.record.payload.operationId === id;
}

function liveStates(): string {
  return "'proposed','awaiting_approval','approved','executing','outcome_unknown'";
}

/** What a record is, for the index: parsed once, the way the projections read it. */
function classify(record: StoredRecord, location: RecordLocation): Pending {
  if (record.type === CHECKPOINT_TYPE) {
    const ops = carriedOps(record);
    return ops.length > 0 ? { kind: 'carried', record, location, ops } : { kind: 'skip', record, location };
  }
  if (record.type === RECONCILED_TYPE) {
    const parsed = OpReconciled.safeParse(record.payload);
    if (!parsed.success) return { kind: 'skip', record, location };
    return { kind: 'reconciled', record, location, id: parsed.data.operationId, outcome: parsed.data.outcome, retry: parsed.data.retryOperationId };
  }
  let event: ReturnType<typeof parseJournalEvent>;
  try {
    event = parseJournalEvent(record.type, record.payload);
  } catch {
    return { kind: 'skip', record, location };
  }
  if (!event) return { kind: 'row', record, location, server: null, account: null, tool: null, conv: null };
  switch (event.type) {
    case 'op.proposed': {
      const p = event.payload;
      return { kind: 'proposed', record, location, id: p.operationId, server: p.identity.serverId, account: p.identity.accountId, tool: p.identity.toolName, conv: p.origin.conversationId };
    }
    case 'op.transition':
      return { kind: 'transition', record, location, id: event.payload.operationId, to: event.payload.to, decision: event.payload.decision?.decision ?? null };
    case 'op.observation':
      return { kind: 'observed', record, location, id: event.payload.operationId };
    case 'policy.changed': {
      const s = event.payload.scope;
      return { kind: 'row', record, location, server: s.serverId, account: s.accountId, tool: s.toolName, conv: s.conversationId };
    }
    case 'account.switched':
      return { kind: 'row', record, location, server: event.payload.serverId, account: event.payload.to, tool: null, conv: event.payload.conversationId };
    case 'server.endpoint-changed':
      return { kind: 'row', record, location, server: event.payload.serverId, account: null, tool: null, conv: null };
    case 'tool.contract-changed': {
      const p = event.payload as typeof event.payload & { instructionsHash?: unknown };
      const pin = { hash: p.newContractHash, instructions: typeof p.instructionsHash === 'string' ? p.instructionsHash : null };
      return { kind: 'row', record, location, server: p.serverId, account: p.accountId, tool: p.toolName, conv: null, pin };
    }
    case 'server.data-read':
    case 'server.sampling':
    case 'sampling.setting-changed':
      return { kind: 'row', record, location, server: event.payload.serverId, account: event.payload.accountId, tool: null, conv: null };
  }
}

/**
 * The operations an older ledger's checkpoint carried (`state.operations`, version 1), each with
 * the facts the index files it under; entries not of that shape are left out (the projection,
 * which folds the checkpoint when one of them is read, says why). Only operations proposed before
 * the checkpoint can be carried: anything else is not what such a checkpoint holds.
 */
/** A checkpoint's operation entry as read, before anything about it is known. */
interface LooseCarried {
  proposed?: { operationId?: unknown; identity?: { serverId?: unknown; accountId?: unknown; toolName?: unknown }; origin?: { conversationId?: unknown } };
  proposedSeq?: unknown;
  proposedTime?: unknown;
  transitions?: unknown;
  reconciled?: { outcome?: unknown } | null;
  retryOf?: unknown;
}

function carriedOps(record: StoredRecord): CarriedOp[] {
  const state = record.payload.state as { version?: unknown; operations?: unknown } | undefined;
  if (state?.version !== 1 || !Array.isArray(state.operations)) return [];
  const text = (v: unknown): v is string => typeof v === 'string';
  const out: CarriedOp[] = [];
  for (const raw of state.operations as Array<LooseCarried | null>) {
    const id = raw?.proposed?.operationId;
    const identity = raw?.proposed?.identity;
    const server = identity?.serverId;
    const account = identity?.accountId;
    const tool = identity?.toolName;
    const n = raw?.proposedSeq;
    const time = raw?.proposedTime;
    if (!raw || !text(id) || !text(server) || !text(account) || !text(tool)) continue;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n >= record.seq || typeof time !== 'number') continue;
    let state: OperationState = 'proposed';
    let decision: string | null = null;
    for (const x of Array.isArray(raw.transitions) ? (raw.transitions as Array<{ t?: { to?: unknown; decision?: { decision?: unknown } } } | null>) : []) {
      const to = x?.t?.to;
      const decided = x?.t?.decision?.decision;
      if (text(to)) state = to as OperationState;
      if (text(decided)) decision = decided;
    }
    const outcome = raw.reconciled?.outcome;
    if (text(outcome) && outcome !== 'retried') state = outcome as OperationState;
    const conv = raw.proposed?.origin?.conversationId;
    out.push({ id, n, time, server, account, tool, conv: text(conv) ? conv : null, state, decision, reconciled: !!raw.reconciled, retryOf: text(raw.retryOf) ? raw.retryOf : null });
  }
  return out;
}
