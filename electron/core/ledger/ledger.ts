/**
 * The durable ledger: an append-only, hash-chained event log in the user-data folder that
 * implements the `Journal` port (DESIGN.md §4).
 *
 * - `append(entries, { durable: true })` resolves only after the records are fsync'd. Appends are
 *   written by one writer in call order, so the order on disk is the order of events; appends
 *   that arrive while a write+fsync is in flight are written together and share the next fsync
 *   (group commit).
 * - Opening recovers: every segment is read to its last valid record; a torn or corrupt tail is
 *   dropped (truncated) and reported with its byte offset; a bad record followed by valid ones is
 *   reported loudly, the segment is copied aside untouched, and `safeMode` stays on until a
 *   person acknowledges it.
 * - Past `rotateBytes` the log continues in a new segment whose first record is a checkpoint of
 *   live state, created by a durable replace (write temp, fsync, rename, fsync directory) and
 *   chained to the previous segment's last record. Old segments are kept up to `retainSegments`.
 * - Segments are preallocated: the file is extended with zero bytes a chunk at a time
 *   (`preallocateBytes`, written just before the records that need it and covered by the same
 *   sync), and records overwrite the zeros in place. A durable append then needs only an
 *   fdatasync, with no block allocation or size change to commit on most calls: what databases
 *   do with WAL segments. Readers treat trailing zeros as unused space (see format.ts); sizes
 *   that decide rotation count record bytes, never the file's length.
 * - Every payload passes through the redactor before it is hashed or written.
 */
import { basename } from 'node:path';
import { WardenError } from '../../../shared/result';
import {
  SAFE_MODE_ACK_TYPE,
  type LedgerChainBreak,
  type LedgerRecoveryReport,
  type LedgerTornTail,
} from '../../../shared/domain/ledger';
import { systemClock, type Clock, type Journal, type JournalEntry, type JournalRecord } from '../ports';
import { Redactor } from '../redact/redactor';
import { CHECKPOINT_TYPE, GENESIS_HASH, encodeRecordText, scanSegment, sha256Hex, type ChainCursor, type StoredRecord } from './format';
import { inDir, nodeLedgerFs, type LedgerFs } from './ledger-fs';

export { CHECKPOINT_TYPE } from './format';
export type { StoredRecord } from './format';

const SEGMENT_NAME = /^ledger\.(\d{6,})\.log$/;
const TEMP_NAME = /^ledger\.\d{6,}\.log\.tmp$/;

/** `ledger.000001.log`. */
export function segmentName(n: number): string {
  return `ledger.${String(n).padStart(6, '0')}.log`;
}

/** Segment numbers present in a directory listing, ascending. */
export function segmentNumbers(names: string[]): number[] {
  return names
    .map((n) => SEGMENT_NAME.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

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

type Pending =
  | { kind: 'data'; bytes: Buffer; durable: boolean; resolve: () => void; reject: (e: unknown) => void }
  | { kind: 'rotate'; segment: number; bytes: Buffer; resolve: () => void; reject: (e: unknown) => void };

/** Listener for records as they are appended (projections keep themselves current with it). */
export type RecordListener = (records: readonly StoredRecord[]) => void;

/** The file-backed, hash-chained journal. Create with `Ledger.open`. */
export class Ledger implements Journal {
  readonly kind = 'ledger' as const;
  /** Sequence numbers and the hash chain are assigned inside `append`: call order is record order. */
  readonly ordersOnCall = true;
  readonly stats: LedgerStats = { appendCalls: 0, records: 0, writes: 0, recordBytes: 0, fsyncs: 0, preallocations: 0, rotations: 0 };

  private readonly records: StoredRecord[] = [];
  private readonly listeners = new Set<RecordListener>();
  private readonly queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private failure: unknown = null;
  private closed = false;
  private fd = -1;
  /** End of the records in the current segment: where the next record is written. */
  private position = 0;
  /** Length of the current segment file (records plus preallocated zeros), as this writer made it. */
  private allocated = 0;
  /** Set when the disk refused a preallocation chunk: records then extend the file themselves. */
  private preallocationRefused = false;
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
   * `append` calls is the order on disk. With `durable: true` this resolves after the fsync that
   * covers the records; concurrent durable appends share that fsync.
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
    // The scrubbed payload's JSON is what gets hashed and written (one serialization per record);
    // the value kept is frozen and equal to that JSON.
    const types: string[] = [];
    const scrubbed: Array<{ value: Record<string, unknown>; json: string }> = [];
    try {
      for (const e of entries) {
        types.push(this.redactor.scrubString(e.type));
        scrubbed.push(this.redactor.scrubToJson(e.payload));
      }
    } catch (error) {
      return Promise.reject(new WardenError('INVALID_REQUEST', `ledger.append: a payload is not JSON-serializable (${error instanceof Error ? error.message : String(error)})`));
    }
    this.stats.appendCalls++;
    const time = this.clock.now();
    const added: StoredRecord[] = [];
    let text = '';
    for (let i = 0; i < scrubbed.length; i++) {
      const record = this.chainRecord(time, types[i]!, scrubbed[i]!.value, scrubbed[i]!.json);
      added.push(record.record);
      text += record.text;
    }
    // One buffer for the whole batch (it is written in one go anyway).
    const bytes = Buffer.from(text, 'utf8');
    this.segmentBytes += bytes.length;
    const written = this.enqueue({ kind: 'data', bytes, durable: options.durable === true });
    this.notify(added);
    if (this.segmentBytes >= this.rotateBytes) void this.enqueueRotation().catch(() => undefined);
    return written.then(() => added);
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
    return this.enqueueRotation();
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

  /** Resolves once everything appended so far is written and fsync'd. */
  async flush(): Promise<void> {
    this.assertWritable();
    await this.enqueue({ kind: 'data', bytes: Buffer.alloc(0), durable: true });
  }

  /** Flushes, fsyncs and closes the segment. Further appends fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (!this.failure) {
      try {
        await this.enqueue({ kind: 'data', bytes: Buffer.alloc(0), durable: true });
      } catch {
        // the failure is already recorded; closing still releases the descriptor
      }
    }
    this.closed = true;
    if (this.fd >= 0) {
      const fd = this.fd;
      this.fd = -1;
      await this.fs.close(fd);
    }
  }

  // ---- internals --------------------------------------------------------------------------

  private assertWritable(): void {
    if (this.closed) throw new WardenError('CONFLICT', 'ledger: closed');
    if (this.failure) {
      const why = this.failure instanceof Error ? this.failure.message : String(this.failure);
      throw new WardenError('INTERNAL', `ledger: a previous write failed (${why}); nothing more is accepted until restart`);
    }
  }

  /** Assigns seq and chain to an already scrubbed, JSON-shaped entry. Never throws. */
  private makeRecord(time: number, type: string, payload: Record<string, unknown>): { record: StoredRecord; line: Buffer } {
    const { record, text } = this.chainRecord(time, type, deepFreeze(payload), JSON.stringify(payload));
    return { record, line: Buffer.from(text, 'utf8') };
  }

  /** makeRecord with the payload's JSON already at hand; returns the line as text. Never throws. */
  private chainRecord(time: number, type: string, payload: Record<string, unknown>, payloadJson: string): { record: StoredRecord; text: string } {
    const seq = this.nextSeq++;
    const prevHash = this.lastHash;
    const { text, checksum } = encodeRecordText(seq, time, type, payloadJson, prevHash);
    this.lastHash = checksum;
    const record: StoredRecord = Object.freeze({ seq, time, type, payload, prevHash, checksum });
    this.records.push(record);
    this.stats.records++;
    return { record, text };
  }

  private notify(records: readonly StoredRecord[]): void {
    for (const l of this.listeners) l(records);
  }

  private enqueueRotation(): Promise<void> {
    const next = this.segment + 1;
    let payload: Record<string, unknown>;
    try {
      const state = this.snapshotProvider ? this.snapshotProvider() : {};
      payload = this.redactor.scrub({ segment: segmentName(next), previousSegment: segmentName(this.segment), state });
    } catch (error) {
      // Without its live state a new segment would lose it at retention: keep appending to the
      // current segment and try again on a later append.
      this.lastRotationError = error instanceof Error ? error.message : String(error);
      return Promise.reject(new WardenError('INTERNAL', `ledger: cannot rotate, the live-state snapshot failed: ${this.lastRotationError}`));
    }
    const { record, line } = this.makeRecord(this.clock.now(), CHECKPOINT_TYPE, payload);
    this.segment = next;
    this.segmentBytes = 0;
    this.segmentStartSeq.set(segmentName(next), record.seq);
    const done = new Promise<void>((resolve, reject) => {
      this.queue.push({ kind: 'rotate', segment: next, bytes: line, resolve, reject });
    });
    this.kick();
    this.notify([record]);
    return done;
  }

  private enqueue(item: { kind: 'data'; bytes: Buffer; durable: boolean }): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      this.queue.push({ ...item, resolve, reject });
    });
    this.kick();
    return done;
  }

  private kick(): void {
    if (!this.flushing) {
      this.flushing = this.flushLoop().finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.kick();
      });
    }
  }

  /** The single writer: takes everything queued, writes it in one go, fsyncs once if needed. */
  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      if (this.failure) {
        for (const item of this.queue.splice(0)) item.reject(this.writeError());
        return;
      }
      const head = this.queue[0]!;
      if (head.kind === 'rotate') {
        this.queue.shift();
        try {
          await this.switchSegment(head.segment, head.bytes);
          head.resolve();
        } catch (error) {
          this.failure = error;
          head.reject(this.writeError());
        }
        continue;
      }
      let end = 0;
      while (end < this.queue.length && this.queue[end]!.kind === 'data') end++;
      const batch = this.queue.splice(0, end) as Extract<Pending, { kind: 'data' }>[];
      const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((b) => b.bytes));
      const durable = batch.some((b) => b.durable);
      try {
        if (bytes.length > 0) {
          const end = this.position + bytes.length;
          if (end > this.allocated) await this.extendTo(this.fd, this.allocated, end);
          await this.fs.write(this.fd, bytes, this.position);
          this.position = end;
          this.stats.writes++;
          this.stats.recordBytes += bytes.length;
        }
        if (durable) {
          // Records overwrite preallocated zeros, so the data (and a size change, when this batch
          // extended the file) is all there is to make durable.
          await this.fs.fdatasync(this.fd);
          this.stats.fsyncs++;
        }
        for (const b of batch) b.resolve();
      } catch (error) {
        this.failure = error;
        for (const b of batch) b.reject(this.writeError());
      }
    }
  }

  private writeError(): WardenError {
    const why = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return new WardenError('INTERNAL', `ledger: write to ${this.dir} failed: ${why}`);
  }

  /**
   * Extends the segment open as `fd` from `from` bytes with zeros to the chunk boundary past
   * `needed` (or to exactly `needed` when preallocation is off, where the records themselves
   * extend the file).
   */
  private async extendTo(fd: number, from: number, needed: number): Promise<number> {
    const chunk = this.preallocateBytes;
    if (chunk === 0 || (fd === this.fd && this.preallocationRefused)) {
      if (fd === this.fd) this.allocated = needed;
      return needed;
    }
    const target = Math.ceil(needed / chunk) * chunk;
    // Zeros first, then the records over them: a crash in between leaves records + zeros.
    try {
      await this.fs.write(fd, Buffer.alloc(target - from), from);
    } catch (error) {
      // A disk too full for a chunk may still hold the records: write them without preallocation
      // (over whatever zeros did land) and only fail if they do not fit. Retried in the next
      // segment.
      if ((error as { code?: unknown } | null)?.code !== 'ENOSPC') throw error;
      if (fd === this.fd) {
        this.preallocationRefused = true;
        this.allocated = needed;
      }
      return needed;
    }
    this.stats.preallocations++;
    if (fd === this.fd) this.allocated = target;
    return target;
  }

  /** Durable replace: temp file with the checkpoint, fsync, rename, fsync directory; then retention. */
  private async switchSegment(n: number, checkpointLine: Buffer): Promise<void> {
    // The old segment keeps only its records (its unused preallocated space is given back), and
    // everything in it is on disk before the new one exists, so a later segment never outlives a
    // hole in an earlier one.
    if (this.allocated > this.position) {
      await this.fs.ftruncate(this.fd, this.position);
      this.allocated = this.position;
    }
    await this.fs.fsync(this.fd);
    this.stats.fsyncs++;
    const finalPath = inDir(this.dir, segmentName(n));
    const tempPath = `${finalPath}.tmp`;
    const fd = await this.fs.open(tempPath, 'w');
    let allocated: number;
    try {
      // The new segment arrives preallocated: the zeros are part of the durable replace.
      allocated = await this.extendTo(fd, 0, checkpointLine.length);
      await this.fs.write(fd, checkpointLine, 0);
      this.stats.recordBytes += checkpointLine.length;
      await this.fs.fsync(fd);
      this.stats.fsyncs++;
      await this.fs.rename(tempPath, finalPath);
      await this.fs.fsyncDir(this.dir);
    } catch (error) {
      await this.fs.close(fd).catch(() => undefined);
      throw error;
    }
    const old = this.fd;
    this.fd = fd;
    this.position = checkpointLine.length;
    this.allocated = allocated;
    this.preallocationRefused = false;
    this.stats.rotations++;
    this.segmentList.push(segmentName(n));
    await this.fs.close(old);
    await this.applyRetention();
  }

  private async applyRetention(): Promise<void> {
    const numbers = segmentNumbers(await this.fs.readdir(this.dir));
    const excess = numbers.length - this.retainSegments;
    if (excess <= 0) return;
    for (const n of numbers.slice(0, excess)) await this.fs.unlink(inDir(this.dir, segmentName(n)));
    await this.fs.fsyncDir(this.dir);
    this.segmentList = numbers.slice(excess).map(segmentName);
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
    await this.fs.mkdirp(this.dir);
    const names = await this.fs.readdir(this.dir);
    const removedTempFiles: string[] = [];
    for (const name of names.filter((n) => TEMP_NAME.test(n))) {
      // A rotation that crashed before its rename: the old segment is still complete.
      await this.fs.unlink(inDir(this.dir, name));
      removedTempFiles.push(name);
    }
    const numbers = segmentNumbers(names);
    let tornTail: LedgerTornTail | null = null;
    const breaks: LedgerChainBreak[] = [];
    let cursor: ChainCursor = numbers[0] === 1 ? { prevHash: GENESIS_HASH, nextSeq: 1 } : { prevHash: null, nextSeq: null };
    let lastValidLength = 0;
    let lastUnusedFrom = 0;
    let lastBytesLength = 0;
    let lastCheckpointLength = 0;
    for (const [i, n] of numbers.entries()) {
      const name = segmentName(n);
      const path = inDir(this.dir, name);
      const bytes = await this.fs.readFile(path);
      const scan = scanSegment(bytes, cursor);
      const isLast = i === numbers.length - 1;
      const tailOnly = isLast && scan.bad.length > 0 && scan.bad.every((b) => b.offset >= scan.validLength);
      if (tailOnly) {
        const first = scan.bad[0]!;
        // droppedBytes counts what was rejected, not the unused zeros after it.
        tornTail = { segment: name, offset: scan.validLength, droppedBytes: scan.unusedFrom - scan.validLength, problem: first.problem };
      } else if (scan.bad.length > 0) {
        const preservedCopy = await this.preserve(path, bytes);
        for (const b of scan.bad) {
          breaks.push({
            id: `${name}@${b.offset}`,
            segment: name,
            offset: b.offset,
            length: b.length,
            problem: b.problem,
            ...(b.seq !== undefined ? { seq: b.seq } : {}),
            acknowledged: false,
            preservedCopy,
          });
        }
      }
      if (scan.records[0]) this.segmentStartSeq.set(name, scan.records[0].record.seq);
      for (const r of scan.records) this.records.push(r.record);
      cursor = scan.cursor;
      lastValidLength = scan.validLength;
      lastUnusedFrom = scan.unusedFrom;
      lastBytesLength = bytes.length;
      const first = scan.records[0];
      lastCheckpointLength = first && first.offset === 0 && first.record.type === CHECKPOINT_TYPE ? first.length : 0;
    }

    const acknowledged = new Set<string>();
    for (const r of this.records) {
      if (r.type === SAFE_MODE_ACK_TYPE && Array.isArray(r.payload.breaks)) {
        for (const id of r.payload.breaks) if (typeof id === 'string') acknowledged.add(id);
      }
    }
    for (const b of breaks) b.acknowledged = acknowledged.has(b.id);

    const last = this.records[this.records.length - 1];
    this.lastHash = last ? last.checksum : numbers.length > 0 && cursor.prevHash ? cursor.prevHash : GENESIS_HASH;
    this.nextSeq = last ? last.seq + 1 : 1;
    this.stats.records = this.records.length;

    if (numbers.length === 0) {
      this.segment = 1;
      const path = inDir(this.dir, segmentName(1));
      this.fd = await this.fs.open(path, 'wx');
      await this.fs.fsyncDir(this.dir);
      this.position = 0;
      this.allocated = 0;
    } else {
      this.segment = numbers[numbers.length - 1]!;
      this.fd = await this.fs.open(inDir(this.dir, segmentName(this.segment)), 'r+');
      this.position = lastValidLength;
      this.allocated = lastBytesLength;
      if (lastUnusedFrom > lastValidLength) {
        // Drop the torn/corrupt tail (and the zeros after it) so new records continue the chain
        // from the last valid one; the next append preallocates again.
        await this.fs.ftruncate(this.fd, lastValidLength);
        await this.fs.fsync(this.fd);
        this.allocated = lastValidLength;
      }
    }
    this.segmentBytes = Math.max(0, this.position - lastCheckpointLength);

    this.segmentList = numbers.length > 0 ? numbers.map(segmentName) : [segmentName(1)];
    this.recoveryReport = {
      segments: [...this.segmentList],
      records: this.records.length,
      tornTail,
      breaks,
      safeMode: breaks.some((b) => !b.acknowledged),
      removedTempFiles,
      durationMs: performance.now() - started,
    };
  }

  /** Copies a damaged segment aside, untouched, once per distinct content. */
  private async preserve(path: string, bytes: Buffer): Promise<string> {
    const copy = `${path}.corrupt-${sha256Hex(bytes).slice(0, 16)}`;
    if (!(await this.fs.exists(copy))) {
      await this.fs.copyFile(path, copy);
      const fd = await this.fs.open(copy, 'r+');
      try {
        await this.fs.fsync(fd);
      } finally {
        await this.fs.close(fd);
      }
      await this.fs.fsyncDir(this.dir);
    }
    return basename(copy);
  }
}

/** Freezes a JSON-shaped value and everything inside it (a checkpoint's fresh copy); returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
