/**
 * The durable ledger: an append-only, hash-chained event log in the user-data folder that
 * implements the `Journal` port (DESIGN.md §4).
 *
 * - `append(entries, { durable: true })` resolves only after the records are synced. Sequence
 *   numbers and the chain are assigned when `append` is called, so call order is record order;
 *   the single writer (writer.ts) writes them in that order with group commit and preallocation.
 * - Opening recovers (recovery.ts): every segment is read to its last valid record, a torn tail is
 *   dropped and reported, and a bad record followed by valid ones opens the ledger in safe mode
 *   until a person acknowledges it.
 * - Past `rotateBytes` the log continues in a new segment (segments.ts) whose first record is a
 *   checkpoint chained to the previous segment's last record.
 * - Every payload passes through the redactor before it is hashed or written.
 */
import { WardenError } from '../../../shared/result';
import { SAFE_MODE_ACK_TYPE, type LedgerRecoveryReport } from '../../../shared/domain/ledger';
import { systemClock, type Clock, type Journal, type JournalEntry, type JournalRecord } from '../ports';
import { Redactor } from '../redact/redactor';
import { CHECKPOINT_TYPE, GENESIS_HASH, encodeRecordText, type StoredRecord } from './format';
import { inDir, nodeLedgerFs, type LedgerFs } from './ledger-fs';
import { recoverLog } from './recovery';
import { segmentName, segmentNumbers } from './segments';
import { SegmentWriter } from './writer';

export { CHECKPOINT_TYPE } from './format';
export type { StoredRecord } from './format';
export { segmentName, segmentNumbers } from './segments';

/** How the ledger is opened. */
export interface LedgerOptions {
  /** The folder holding the segments (the user-data folder's `ledger/`; tests use temp dirs). */
  dir: string;
  clock?: Clock;
  /** Scrubs secrets from every payload. Share the app's one redactor. */
  redactor?: Redactor;
  fs?: LedgerFs;
  /** Start a new segment once the current one passes this many bytes. Default 32 MiB. */
  rotateBytes?: number;
  /** How many segments to keep (the current one included). Default 4. */
  retainSegments?: number;
  /** Zero bytes a segment is extended by when records reach its end. Default 1 MiB; 0 disables. */
  preallocateBytes?: number;
  /** Live state written into the checkpoint that starts each new segment. */
  snapshot?: () => Record<string, unknown>;
}

/** Counters, for tests and benchmarks. */
export interface LedgerStats {
  appendCalls: number;
  records: number;
  /** Writes of record bytes (zero-fill extensions not counted). */
  writes: number;
  /** Bytes of records written to segments by this instance (checkpoints included, zero fill not). */
  recordBytes: number;
  /** Durability barriers (fdatasync on the append path, fsync around rotation). */
  fsyncs: number;
  /** Times a segment was extended with zero bytes. */
  preallocations: number;
  rotations: number;
}

/** Listener for records as they are appended (projections keep themselves current with it). */
export type RecordListener = (records: readonly StoredRecord[]) => void;

/** The file-backed, hash-chained journal. Create with `Ledger.open`. */
export class Ledger implements Journal {
  readonly kind = 'ledger' as const;
  /** Sequence numbers and the hash chain are assigned inside `append`: call order is record order. */
  readonly ordersOnCall = true;

  private readonly records: StoredRecord[] = [];
  private readonly listeners = new Set<RecordListener>();
  private writer!: SegmentWriter;
  private appendCalls = 0;
  private recordCount = 0;
  private closed = false;
  /** The segment the next record goes to (ahead of the writer while a rotation is queued). */
  private segment = 0;
  /**
   * Bytes appended to the current segment after its checkpoint, counting appends not yet written
   * (decides rotation; the checkpoint itself does not count, or a large live state would rotate
   * on every append).
   */
  private segmentBytes = 0;
  private lastHash = GENESIS_HASH;
  private nextSeq = 1;
  private snapshotProvider: (() => Record<string, unknown>) | undefined;
  private recoveryReport!: LedgerRecoveryReport;
  private segmentList: string[] = [];
  /** Why the last rotation could not happen, if it could not. */
  lastRotationError: string | null = null;
  /** seq of the first record of each segment, so retention can drop their records from memory too. */
  private readonly segmentStartSeq = new Map<string, number>();

  private constructor(
    readonly dir: string,
    private readonly fs: LedgerFs,
    private readonly clock: Clock,
    readonly redactor: Redactor,
    private readonly rotateBytes: number,
    private readonly retainSegments: number,
    private readonly preallocateBytes: number,
  ) {}

  /**
   * Opens (or creates) the ledger in `options.dir`, running recovery first.
   *
   * Recovery never guesses: it keeps valid records, truncates a torn tail, and reports every
   * problem in `recovery`. Read `safeMode` before letting any tool run without asking.
   */
  static async open(options: LedgerOptions): Promise<Ledger> {
    const rotateBytes = options.rotateBytes ?? 32 * 1024 * 1024;
    const retainSegments = options.retainSegments ?? 4;
    const preallocateBytes = options.preallocateBytes ?? 1024 * 1024;
    if (!Number.isSafeInteger(preallocateBytes) || preallocateBytes < 0) {
      throw new WardenError('INVALID_REQUEST', `ledger: preallocateBytes must be an integer >= 0, got ${preallocateBytes}`);
    }
    if (!(rotateBytes > 0)) throw new WardenError('INVALID_REQUEST', `ledger: rotateBytes must be > 0, got ${rotateBytes}`);
    if (!Number.isInteger(retainSegments) || retainSegments < 1) {
      throw new WardenError('INVALID_REQUEST', `ledger: retainSegments must be an integer >= 1, got ${retainSegments}`);
    }
    const ledger = new Ledger(
      options.dir,
      options.fs ?? nodeLedgerFs,
      options.clock ?? systemClock,
      options.redactor ?? new Redactor(),
      rotateBytes,
      retainSegments,
      preallocateBytes,
    );
    ledger.snapshotProvider = options.snapshot;
    await ledger.recover();
    return ledger;
  }

  /** Counters of this instance (appends, records, writes, syncs, rotations). */
  get stats(): LedgerStats {
    const w = this.writer.stats;
    return { appendCalls: this.appendCalls, records: this.recordCount, writes: w.writes, recordBytes: w.recordBytes, fsyncs: w.fsyncs, preallocations: w.preallocations, rotations: w.rotations };
  }

  /** What recovery found when this ledger was opened (plus acknowledgements since). */
  get recovery(): LedgerRecoveryReport {
    return this.recoveryReport;
  }

  /** True while a chain break found by recovery is unacknowledged: every tool must be at ask. */
  get safeMode(): boolean {
    return this.recoveryReport.safeMode;
  }

  /** Segments currently on disk, oldest first. */
  segments(): string[] {
    return [...this.segmentList];
  }

  /** Name of the segment currently appended to. */
  get currentSegment(): string {
    return segmentName(this.segment);
  }

  /** Sets the provider of live state for checkpoints (projections exist only after open). */
  setSnapshotProvider(provider: () => Record<string, unknown>): void {
    this.snapshotProvider = provider;
  }

  /** Calls `listener` synchronously with every batch of records appended from now on. */
  subscribe(listener: RecordListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Appends entries in order, atomically as a group (one write).
   *
   * Sequence numbers, time and the hash chain are assigned synchronously, so the order of
   * `append` calls is the order on disk. With `durable: true` this resolves after the sync that
   * covers the records; concurrent durable appends share that sync.
   *
   * Resolves with the stored records themselves, deep-frozen (record and payload): no copy is
   * made for callers, and none is needed, since no one can change them. A payload that is
   * already deep-frozen JSON data is stored as given; any other is stored as a frozen copy of
   * what was written.
   */
  append(entries: JournalEntry[], options: { durable?: boolean } = {}): Promise<JournalRecord[]> {
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    if (!Array.isArray(entries)) return Promise.reject(new WardenError('INVALID_REQUEST', 'ledger.append: entries must be an array'));
    if (entries.length === 0) return Promise.resolve([]);
    for (const [i, e] of entries.entries()) {
      if (typeof e?.type !== 'string' || e.type.length === 0) {
        return Promise.reject(new WardenError('INVALID_REQUEST', `ledger.append: entries[${i}].type must be a non-empty string`));
      }
      if (typeof e.payload !== 'object' || e.payload === null || Array.isArray(e.payload)) {
        return Promise.reject(new WardenError('INVALID_REQUEST', `ledger.append: entries[${i}].payload must be an object`));
      }
    }
    // Scrub (and JSON-shape) every entry before any of them gets a seq: a payload that cannot be
    // written must not leave a half-assigned batch behind (a hole in the chain).
    const scrubbed: Array<{ type: string; value: Record<string, unknown>; json: string }> = [];
    try {
      for (const e of entries) scrubbed.push({ type: this.redactor.scrubString(e.type), ...this.redactor.scrubToJson(e.payload) });
    } catch (error) {
      return Promise.reject(new WardenError('INVALID_REQUEST', `ledger.append: a payload is not JSON-serializable (${error instanceof Error ? error.message : String(error)})`));
    }
    this.appendCalls++;
    const { records, bytes } = this.chain(scrubbed);
    this.segmentBytes += bytes.length;
    const written = this.writer.write(bytes, options.durable === true);
    this.notify(records);
    if (this.segmentBytes >= this.rotateBytes) void this.startSegment().catch(() => undefined);
    return written.then(() => records);
  }

  /**
   * Every retained record, in sequence order (checkpoints included). Records appended by this
   * instance are deep-frozen; records read back by recovery are not (freezing 100,000 of them
   * would slow every start), so do not mutate.
   */
  read(): readonly StoredRecord[] {
    return this.records;
  }

  /** How many records are retained. */
  size(): number {
    return this.records.length;
  }

  /**
   * Starts a new segment now (compaction): a checkpoint of live state, durably created, chained
   * to the last record. Resolves when the new segment is in place.
   */
  rotate(): Promise<void> {
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.startSegment();
  }

  /**
   * Records that a person looked at the chain breaks recovery found, and leaves safe mode.
   *
   * The breaks stay in the report (and in `verify`); the acknowledgement is itself a durable
   * record naming who acknowledged and why, so the next start knows it was seen.
   */
  async acknowledgeSafeMode(by: string, reason: string): Promise<LedgerRecoveryReport> {
    const open = this.recoveryReport.breaks.filter((b) => !b.acknowledged).map((b) => b.id);
    if (open.length === 0) return this.recoveryReport;
    await this.append([{ type: SAFE_MODE_ACK_TYPE, payload: { breaks: open, by, reason } }], { durable: true });
    this.recoveryReport = {
      ...this.recoveryReport,
      breaks: this.recoveryReport.breaks.map((b) => ({ ...b, acknowledged: true })),
      safeMode: false,
    };
    return this.recoveryReport;
  }

  /** Resolves once everything appended so far is written and synced. */
  async flush(): Promise<void> {
    this.assertWritable();
    await this.writer.write(Buffer.alloc(0), true);
  }

  /** Flushes, syncs and closes the segment. Further appends fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
  }

  // ---- internals --------------------------------------------------------------------------

  private assertWritable(): void {
    if (this.closed) throw new WardenError('CONFLICT', 'ledger: closed');
    if (this.writer.failed) {
      const why = this.writer.failed instanceof Error ? this.writer.failed.message : String(this.writer.failed);
      throw new WardenError('INTERNAL', `ledger: a previous write failed (${why}); nothing more is accepted until restart`);
    }
  }

  /**
   * The one way records are made: assigns seq, time and the chain to scrubbed, JSON-shaped
   * entries (their JSON is what gets hashed and written) and returns the records and their bytes.
   * Never throws.
   */
  private chain(entries: ReadonlyArray<{ type: string; value: Record<string, unknown>; json: string }>): { records: StoredRecord[]; bytes: Buffer } {
    const time = this.clock.now();
    const records: StoredRecord[] = [];
    let text = '';
    for (const e of entries) {
      const seq = this.nextSeq++;
      const prevHash = this.lastHash;
      const line = encodeRecordText(seq, time, e.type, e.json, prevHash);
      this.lastHash = line.checksum;
      const record: StoredRecord = Object.freeze({ seq, time, type: e.type, payload: e.value, prevHash, checksum: line.checksum });
      this.records.push(record);
      this.recordCount++;
      records.push(record);
      text += line.text;
    }
    // One buffer for the whole batch (it is written in one go anyway).
    return { records, bytes: Buffer.from(text, 'utf8') };
  }

  private notify(records: readonly StoredRecord[]): void {
    for (const l of this.listeners) l(records);
  }

  /** Queues the next segment, whose first record is a checkpoint of live state. */
  private startSegment(): Promise<void> {
    const next = this.segment + 1;
    let checkpoint: { value: Record<string, unknown>; json: string };
    try {
      const state = this.snapshotProvider ? this.snapshotProvider() : {};
      checkpoint = this.redactor.scrubToJson({ segment: segmentName(next), previousSegment: segmentName(this.segment), state });
    } catch (error) {
      // Without its live state a new segment would lose it at retention: keep appending to the
      // current segment and try again on a later append.
      this.lastRotationError = error instanceof Error ? error.message : String(error);
      return Promise.reject(new WardenError('INTERNAL', `ledger: cannot rotate, the live-state snapshot failed: ${this.lastRotationError}`));
    }
    const { records, bytes } = this.chain([{ type: CHECKPOINT_TYPE, ...checkpoint }]);
    this.segment = next;
    this.segmentBytes = 0;
    this.segmentStartSeq.set(segmentName(next), records[0]!.seq);
    const done = this.writer.rotate(next, bytes);
    this.notify(records);
    return done;
  }

  private async applyRetention(): Promise<void> {
    const numbers = segmentNumbers(await this.fs.readdir(this.dir));
    const excess = numbers.length - this.retainSegments;
    this.segmentList = numbers.slice(Math.max(0, excess)).map(segmentName);
    if (excess <= 0) return;
    for (const n of numbers.slice(0, excess)) await this.fs.unlink(inDir(this.dir, segmentName(n)));
    await this.fs.fsyncDir(this.dir);
    for (const n of numbers.slice(0, excess)) this.segmentStartSeq.delete(segmentName(n));
    // read() is "every retained record": forget the records of the deleted segments.
    const firstKept = this.segmentStartSeq.get(this.segmentList[0]!);
    if (firstKept !== undefined) {
      const drop = this.records.findIndex((r) => r.seq >= firstKept);
      if (drop > 0) this.records.splice(0, drop);
    }
  }

  /** Reads every segment, checks the chain, repairs a torn tail, reports everything. */
  private async recover(): Promise<void> {
    const started = performance.now();
    let segmentOf = '';
    const log = await recoverLog(this.dir, this.fs, (record) => {
      this.records.push(record);
      if (record.type === CHECKPOINT_TYPE && typeof record.payload.segment === 'string' && record.payload.segment !== segmentOf) {
        segmentOf = record.payload.segment;
        this.segmentStartSeq.set(segmentOf, record.seq);
      }
    });
    const acknowledged = new Set<string>();
    for (const r of this.records) {
      if (r.type === SAFE_MODE_ACK_TYPE && Array.isArray(r.payload.breaks)) {
        for (const id of r.payload.breaks) if (typeof id === 'string') acknowledged.add(id);
      }
    }
    for (const b of log.breaks) b.acknowledged = acknowledged.has(b.id);
    this.lastHash = log.lastHash;
    this.nextSeq = log.nextSeq;
    this.recordCount = log.records;
    this.segment = log.writer.segment;
    this.segmentBytes = log.segmentBytes;
    this.segmentList = log.segments;
    this.writer = new SegmentWriter(this.fs, log.writer, this.preallocateBytes, async (n) => {
      this.segmentList.push(segmentName(n));
      await this.applyRetention();
    });
    this.recoveryReport = {
      segments: [...this.segmentList],
      records: this.records.length,
      tornTail: log.tornTail,
      breaks: log.breaks,
      safeMode: log.breaks.some((b) => !b.acknowledged),
      removedTempFiles: log.removedTempFiles,
      durationMs: performance.now() - started,
    };
  }
}
