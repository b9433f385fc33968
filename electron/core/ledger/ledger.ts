/**
 * The durable ledger: an append-only, hash-chained event log in the user-data folder that
 * implements the `Journal` port.
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
 *
 * Why this file is longer than 450 lines: the class owns the one order that makes a record durable
 * and chained (redact, number, chain, write, sync, rotate, safe mode), and that order is checked by
 * reading it in one place; the parts that need none of it live beside it (writer.ts, recovery.ts,
 * segments.ts, format.ts).
 */
import { WardenError } from '../../../shared/result';
import { SAFE_MODE_ACK_TYPE, type LedgerRecoveryReport } from '../../../shared/domain/ledger';
import { systemClock, type Clock, type Journal, type JournalEntry, type JournalRecord } from '../ports';
import { Redactor } from '../redact/redactor';
import { CHECKPOINT_TYPE, GENESIS_HASH, decodeLine, encodeRecordText, scanSegment, type ChainKey, type StoredRecord } from './format';
import { inDir, nodeLedgerFs, type LedgerFs } from './ledger-fs';
import { recoverLog, type LogPosition, type RecordLocation, type RecoveryReader } from './recovery';
import { segmentName, segmentNumbers } from './segments';
import { SegmentWriter } from './writer';

export { CHECKPOINT_TYPE } from './format';
export type { StoredRecord } from './format';
export type { LogPosition, RecordLocation } from './recovery';
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
  /** Zero bytes a segment is extended by when records reach its end. Default 1 MiB; 0 disables. */
  preallocateBytes?: number;
  /**
   * Who takes the records recovery reads (an index), and from where: with `resumeAfter`, only
   * records after that one are read at open. Without a reader, every record is read and dropped
   * (the log is still checked).
   */
  reader?: Partial<RecoveryReader>;
  /**
   * The ledger's key: new records are sealed with it (HMAC) and sealed records are checked with
   * it. Without one, records are plain sha256 and sealed ones are read without being checked.
   */
  key?: ChainKey | null;
}

/** Counters, for tests and benchmarks. */
export interface LedgerStats {
  appendCalls: number;
  /** Records appended by this instance (checkpoints included). */
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

/** Records closer than this are read together (the bytes between are read and skipped). */
const READ_GAP = 16 * 1024;
/** The most one read of nearby records takes. */
const READ_MAX = 1024 * 1024;

/** Listener for records as they are appended, with where each one is written. */
export type RecordListener = (records: readonly StoredRecord[], locations: readonly RecordLocation[]) => void;

/** The file-backed, hash-chained journal. Create with `Ledger.open`. */
export class Ledger implements Journal {
  readonly kind = 'ledger' as const;
  /** Sequence numbers and the hash chain are assigned inside `append`: call order is record order. */
  readonly ordersOnCall = true;

  private readonly listeners = new Set<RecordListener>();
  private writer!: SegmentWriter;
  private appendCalls = 0;
  private appendedRecords = 0;
  private closed = false;
  /** The segment the next record goes to (ahead of the writer while a rotation is queued). */
  private segment = 0;
  /** Where the next record goes in `segment` (assigned with its seq, ahead of the writer). */
  private offset = 0;
  /**
   * Bytes appended to the current segment after its first record, counting appends not yet
   * written (decides rotation).
   */
  private segmentBytes = 0;
  private lastHash = GENESIS_HASH;
  private nextSeq = 1;
  private recoveryReport!: LedgerRecoveryReport;
  private segmentList: string[] = [];
  /** The last record's position (what an index that has everything is at), null when empty. */
  private lastPosition: LogPosition | null = null;
  /** The last record known to be synced to disk (what the anchor may name). */
  private syncedPosition: LogPosition | null = null;
  private readonly syncListeners = new Set<() => void>();
  private key: ChainKey | null;

  private constructor(
    readonly dir: string,
    private readonly fs: LedgerFs,
    private readonly clock: Clock,
    readonly redactor: Redactor,
    private readonly rotateBytes: number,
    private readonly preallocateBytes: number,
    key: ChainKey | null,
  ) {
    this.key = key;
  }

  /**
   * Opens (or creates) the ledger in `options.dir`, running recovery first.
   *
   * Recovery never guesses: it keeps valid records, truncates a torn tail, and reports every
   * problem in `recovery`. Read `safeMode` before letting any tool run without asking.
   */
  static async open(options: LedgerOptions): Promise<Ledger> {
    const rotateBytes = options.rotateBytes ?? 32 * 1024 * 1024;
    const preallocateBytes = options.preallocateBytes ?? 1024 * 1024;
    if (!Number.isSafeInteger(preallocateBytes) || preallocateBytes < 0) {
      throw new WardenError('INVALID_REQUEST', `ledger: preallocateBytes must be an integer >= 0, got ${preallocateBytes}`);
    }
    if (!(rotateBytes > 0)) throw new WardenError('INVALID_REQUEST', `ledger: rotateBytes must be > 0, got ${rotateBytes}`);
    const ledger = new Ledger(options.dir, options.fs ?? nodeLedgerFs, options.clock ?? systemClock, options.redactor ?? new Redactor(), rotateBytes, preallocateBytes, options.key ?? null);
    await ledger.recover(options.reader ?? {});
    return ledger;
  }

  /** Counters of this instance (appends, records, writes, syncs, rotations). */
  get stats(): LedgerStats {
    const w = this.writer.stats;
    return { appendCalls: this.appendCalls, records: this.appendedRecords, writes: w.writes, recordBytes: w.recordBytes, fsyncs: w.fsyncs, preallocations: w.preallocations, rotations: w.rotations };
  }

  /** What recovery found when this ledger was opened (plus acknowledgements since). */
  get recovery(): LedgerRecoveryReport {
    return this.recoveryReport;
  }

  /** True while a chain break is unacknowledged: every tool must be at ask. */
  get safeMode(): boolean {
    return this.recoveryReport.safeMode;
  }

  /** Segments on disk, oldest first. */
  segments(): string[] {
    return [...this.segmentList];
  }

  /** Name of the segment currently appended to. */
  get currentSegment(): string {
    return segmentName(this.segment);
  }

  /** Where the last record is (an index holding everything stands here); null for an empty log. */
  get position(): LogPosition | null {
    return this.lastPosition;
  }

  /** The last record known to be on disk (synced), or null when none is yet. */
  get synced(): LogPosition | null {
    return this.syncedPosition;
  }

  /** Calls `listener` whenever more records are known to be synced. */
  onSynced(listener: () => void): () => void {
    this.syncListeners.add(listener);
    return () => this.syncListeners.delete(listener);
  }

  /** The id of the key new records are sealed with, or null while records are plain. */
  get keyId(): string | null {
    return this.key?.id ?? null;
  }

  /** The key records are sealed and checked with (the service's verification needs it). */
  get chainKey(): ChainKey | null {
    return this.key;
  }

  /**
   * Seals every record appended from now on with `key` (a key made at the first open of a plain
   * ledger). The first sealed record chains onto the last plain one.
   */
  useKey(key: ChainKey): void {
    this.key = key;
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
    const { records, locations, bytes } = this.chain(scrubbed);
    this.segmentBytes += bytes.length;
    const written = this.writer.write(bytes, options.durable === true);
    if (options.durable === true) this.whenSynced(written).catch(() => undefined);
    this.notify(records, locations);
    if (this.segmentBytes >= this.rotateBytes) void this.startSegment().catch(() => undefined);
    return written.then(() => records);
  }

  /** How many records the log holds (the last seq: seqs start at 1 and never skip). */
  size(): number {
    return this.nextSeq - 1;
  }

  /**
   * Reads records back from where they were written, checking each one's checksum. A location
   * that no longer holds a valid record (changed on disk after it was indexed: the verification
   * reports it as a break) is left out, never guessed at or shown.
   */
  async readAt(locations: readonly RecordLocation[]): Promise<StoredRecord[]> {
    await this.writer.settled();
    // Records asked for together are mostly near each other (an operation's records follow one
    // another): nearby ones are read in one go, each segment is opened once for the batch.
    const order = locations.map((loc, i) => ({ loc, i })).sort((x, y) => x.loc.segment - y.loc.segment || x.loc.offset - y.loc.offset);
    const runs: Array<{ segment: number; from: number; to: number; items: typeof order }> = [];
    for (const item of order) {
      const run = runs.at(-1);
      const end = item.loc.offset + item.loc.length;
      if (run && run.segment === item.loc.segment && item.loc.offset - run.to <= READ_GAP && end - run.from <= READ_MAX) {
        run.to = Math.max(run.to, end);
        run.items.push(item);
      } else runs.push({ segment: item.loc.segment, from: item.loc.offset, to: end, items: [item] });
    }
    const fds = new Map<number, Promise<number>>();
    for (const run of runs) if (!fds.has(run.segment)) fds.set(run.segment, this.fs.open(inDir(this.dir, segmentName(run.segment)), 'r'));
    const out: Array<StoredRecord | null> = new Array(locations.length).fill(null);
    try {
      await Promise.all(
        runs.map(async (run) => {
          const bytes = await this.fs.read(await fds.get(run.segment)!, run.to - run.from, run.from);
          for (const { loc, i } of run.items) {
            const at = loc.offset - run.from;
            const line = at + loc.length <= bytes.length && bytes[at + loc.length - 1] === 0x0a ? decodeLine(bytes.subarray(at, at + loc.length - 1), this.key) : null;
            out[i] = line?.ok && line.seal !== 'other-key' ? line.record : null;
          }
        }),
      );
    } finally {
      for (const fd of fds.values()) await fd.then((n) => this.fs.close(n)).catch(() => undefined);
    }
    return out.filter((r): r is StoredRecord => r !== null);
  }

  /** Starts a new segment now, chained to the last record. Resolves when it is in place. */
  rotate(): Promise<void> {
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.startSegment();
  }

  /**
   * Records that a person looked at the chain breaks found, and leaves safe mode.
   *
   * The breaks stay in the report (and in `verify`); the acknowledgement is itself a durable
   * record naming who acknowledged and why, so a later verification knows it was seen.
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

  /**
   * Adds breaks found after start (the full verification) to the report: an unacknowledged one
   * puts the ledger in safe mode exactly as one found at start.
   */
  reportBreaks(breaks: LedgerRecoveryReport['breaks']): void {
    const known = new Set(this.recoveryReport.breaks.map((b) => b.id));
    const fresh = breaks.filter((b) => !known.has(b.id));
    if (fresh.length === 0) return;
    const all = [...this.recoveryReport.breaks, ...fresh];
    this.recoveryReport = { ...this.recoveryReport, breaks: all, safeMode: all.some((b) => !b.acknowledged) };
  }

  /** Resolves once everything appended so far is written and synced. */
  async flush(): Promise<void> {
    this.assertWritable();
    await this.whenSynced(this.writer.write(Buffer.alloc(0), true));
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
   * The one way records are made: assigns seq, time, place and the chain to scrubbed, JSON-shaped
   * entries (their JSON is what gets hashed and written) and returns the records, where each
   * goes, and their bytes. Never throws.
   */
  private chain(entries: ReadonlyArray<{ type: string; value: Record<string, unknown>; json: string }>): { records: StoredRecord[]; locations: RecordLocation[]; bytes: Buffer } {
    const time = this.clock.now();
    const records: StoredRecord[] = [];
    const locations: RecordLocation[] = [];
    let text = '';
    for (const e of entries) {
      const seq = this.nextSeq++;
      const prevHash = this.lastHash;
      const line = encodeRecordText(seq, time, e.type, e.json, prevHash, this.key);
      this.lastHash = line.checksum;
      const record: StoredRecord = Object.freeze(
        this.key ? { seq, time, type: e.type, payload: e.value, prevHash, keyId: this.key.id, checksum: line.checksum } : { seq, time, type: e.type, payload: e.value, prevHash, checksum: line.checksum },
      );
      const length = Buffer.byteLength(line.text, 'utf8');
      const location = { segment: this.segment, offset: this.offset, length };
      this.offset += length;
      this.lastPosition = { ...location, offset: this.offset, seq, checksum: line.checksum };
      this.appendedRecords++;
      records.push(record);
      locations.push(location);
      text += line.text;
    }
    // One buffer for the whole batch (it is written in one go anyway).
    return { records, locations, bytes: Buffer.from(text, 'utf8') };
  }

  /**
   * Once `written` (a durable write or a flush) resolves, every record assigned before it is on
   * disk: writes are in call order and its sync covers them all.
   */
  private whenSynced(written: Promise<void>): Promise<void> {
    const upTo = this.lastPosition;
    return written.then(() => {
      if (!upTo || (this.syncedPosition && this.syncedPosition.seq >= upTo.seq)) return;
      this.syncedPosition = upTo;
      for (const l of this.syncListeners) l();
    });
  }

  private notify(records: readonly StoredRecord[], locations: readonly RecordLocation[]): void {
    for (const l of this.listeners) l(records, locations);
  }

  /**
   * Queues the next segment. Its first record is a checkpoint naming the segments it joins; it
   * carries no state (every segment is kept, so nothing has to be carried across), and so costs
   * the same at any size of history.
   */
  private startSegment(): Promise<void> {
    const next = this.segment + 1;
    const checkpoint = this.redactor.scrubToJson({ segment: segmentName(next), previousSegment: segmentName(this.segment) });
    this.segment = next;
    this.offset = 0;
    const { records, locations, bytes } = this.chain([{ type: CHECKPOINT_TYPE, ...checkpoint }]);
    this.segmentBytes = 0;
    const done = this.whenSynced(this.writer.rotate(next, bytes));
    this.notify(records, locations);
    return done;
  }

  /** Reads the log from where the reader stands, checks the chain, repairs a torn tail, reports. */
  private async recover(reader: Partial<RecoveryReader>): Promise<void> {
    const started = performance.now();
    const acknowledged = new Set<string>();
    const log = await recoverLog(this.dir, this.fs, this.key, {
      ...reader,
      onRecord: (record, location) => {
        if (record.type === SAFE_MODE_ACK_TYPE && Array.isArray(record.payload.breaks)) {
          for (const id of record.payload.breaks) if (typeof id === 'string') acknowledged.add(id);
        }
        reader.onRecord?.(record, location);
      },
    });
    for (const b of log.breaks) b.acknowledged = acknowledged.has(b.id);
    this.lastHash = log.lastHash;
    this.nextSeq = log.nextSeq;
    this.lastPosition = log.last;
    // What recovery read is on disk (it was read back from there).
    this.syncedPosition = log.last;
    this.segment = log.writer.segment;
    this.offset = log.writer.position;
    this.segmentBytes = log.segmentBytes;
    this.segmentList = log.segments;
    this.writer = new SegmentWriter(this.fs, log.writer, this.preallocateBytes, async (n) => {
      this.segmentList.push(segmentName(n));
    });
    this.recoveryReport = {
      segments: [...this.segmentList],
      records: this.size(),
      tornTail: log.tornTail,
      breaks: log.breaks,
      safeMode: log.breaks.some((b) => !b.acknowledged),
      removedTempFiles: log.removedTempFiles,
      durationMs: performance.now() - started,
    };
  }
}

/**
 * Every record of the ledger in `dir`, in order, one segment in memory at a time (rebuilds, tests,
 * verification). Sealed records are checked with `key`; without it they are read unchecked.
 */
export async function* readLedger(dir: string, fs: LedgerFs = nodeLedgerFs, key: ChainKey | null = null): AsyncGenerator<{ record: StoredRecord; location: RecordLocation }> {
  for (const n of segmentNumbers(await fs.readdir(dir))) {
    const scan = scanSegment(await fs.readFile(inDir(dir, segmentName(n))), { prevHash: null, nextSeq: null }, 0, undefined, key);
    for (const r of scan.records) yield { record: r.record, location: { segment: n, offset: r.offset, length: r.length } };
  }
}
