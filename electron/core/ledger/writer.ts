/**
 * The ledger's single writer: one queue of encoded record bytes, written in call order.
 *
 * - Group commit: everything queued while a write+sync is in flight is written together next and
 *   shares one fdatasync, so 64 concurrent durable appends cost a few syncs, not 64.
 * - Preallocation: a segment is extended with zero bytes a chunk at a time (written just before
 *   the records that need it and covered by the same sync), and records overwrite the zeros in
 *   place; a durable append then needs only an fdatasync, with no block allocation or size change
 *   to commit on most calls (what databases do with WAL segments). Readers treat trailing zeros as
 *   unused space (format.ts).
 * - Rotation: a new segment is created by a durable replace (temp file holding its first record,
 *   fsync, rename, fsync of the folder) after the old one is trimmed to its records and synced,
 *   so a later segment never outlives a hole in an earlier one.
 *
 * Every file operation goes through the `LedgerFs` port, whose real implementation never blocks
 * the event loop: the main process stays responsive while the disk syncs.
 */
import { WardenError } from '../../../shared/result';
import { inDir, type LedgerFs } from './ledger-fs';
import { segmentName } from './segments';
import { later } from '../turns';

/** Counters, for tests and benchmarks. */
export interface WriterStats {
  /** Writes of record bytes (zero-fill extensions not counted). */
  writes: number;
  /** Bytes of records written to segments by this writer (zero fill not counted). */
  recordBytes: number;
  /** Durability barriers (fdatasync on the append path, fsync around rotation). */
  fsyncs: number;
  /** Times a segment was extended with zero bytes. */
  preallocations: number;
  rotations: number;
}

/** Where the writer starts: the open segment and how far its records and its file reach. */
export interface WriterStart {
  dir: string;
  fd: number;
  segment: number;
  /** End of the records: where the next record is written. */
  position: number;
  /** Length of the file (records plus preallocated zeros). */
  allocated: number;
}

type Pending =
  | { kind: 'data'; bytes: Buffer; durable: boolean; resolve: () => void; reject: (e: unknown) => void }
  | { kind: 'rotate'; segment: number; bytes: Buffer; resolve: () => void; reject: (e: unknown) => void };

/** Writes queued record bytes to the current segment, in order, with group commit. */
export class SegmentWriter {
  readonly stats: WriterStats = { writes: 0, recordBytes: 0, fsyncs: 0, preallocations: 0, rotations: 0 };
  private readonly queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  /** A write that is not durable is waiting a turn before it starts (see `write`). */
  private kickQueued = false;
  private failure: unknown = null;
  private fd: number;
  private position: number;
  private allocated: number;
  /** Set when the disk refused a preallocation chunk: records then extend the file themselves. */
  private preallocationRefused = false;
  /** The segment the last completed rotation (or the start) left open. */
  private segment: number;

  constructor(
    private readonly fs: LedgerFs,
    start: WriterStart,
    private readonly preallocateBytes: number,
    /** Runs inside the writer's order after each rotation (the ledger's bookkeeping). */
    private readonly afterRotation: (segment: number) => Promise<void> = async () => undefined,
  ) {
    this.dir = start.dir;
    this.fd = start.fd;
    this.segment = start.segment;
    this.position = start.position;
    this.allocated = start.allocated;
  }

  private readonly dir: string;

  /** The error that stopped the writer, if one did (nothing more is written after it). */
  get failed(): unknown {
    return this.failure;
  }

  /** The segment currently written to. */
  get currentSegment(): number {
    return this.segment;
  }

  /**
   * Queues bytes; resolves once written (and, with `durable`, synced).
   *
   * A durable write starts at once. One that is not waits a turn of the event loop first: a call's
   * outcome record is followed at once by the next call's durable records, and the two then
   * share one write (and its trip to the thread pool) instead of queuing one behind the other.
   */
  write(bytes: Buffer, durable: boolean): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.queue.push({ kind: 'data', bytes, durable, resolve, reject }));
    if (durable) this.kick();
    else if (!this.flushing && !this.kickQueued) {
      this.kickQueued = true;
      later(() => {
        this.kickQueued = false;
        this.kick();
      });
    }
    return done;
  }

  /** Queues the start of segment `segment`, whose first record is `bytes`. */
  rotate(segment: number, bytes: Buffer): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.queue.push({ kind: 'rotate', segment, bytes, resolve, reject }));
    this.kick();
    return done;
  }

  /** Resolves once everything queued so far has been written (or failed). */
  async settled(): Promise<void> {
    if (this.queue.length > 0) this.kick();
    while (this.flushing) await this.flushing;
  }

  /** Waits for everything queued, then closes the segment. */
  async close(): Promise<void> {
    if (!this.failure) await this.write(Buffer.alloc(0), true).catch(() => undefined);
    if (this.fd >= 0) {
      const fd = this.fd;
      this.fd = -1;
      await this.fs.close(fd);
    }
  }

  /** The error every caller gets once the writer has failed. */
  writeError(): WardenError {
    const why = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return new WardenError('INTERNAL', `ledger: write to ${this.dir} failed: ${why}`);
  }

  private kick(): void {
    if (!this.flushing) {
      this.flushing = this.flushLoop().finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.kick();
      });
    }
  }

  /** Takes everything queued, writes it in one go, syncs once if any of it is durable. */
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
          const to = this.position + bytes.length;
          if (to > this.allocated) await this.extendTo(this.fd, this.allocated, to);
          await this.fs.write(this.fd, bytes, this.position);
          this.position = to;
          this.stats.writes++;
          this.stats.recordBytes += bytes.length;
        }
        if (durable) {
          // Records overwrite preallocated zeros, so the data (and a size change, when this batch
          // extended the file) is all there is to make durable.
          await this.fs.fdatasync(this.fd);
          this.stats.fsyncs++;
        }
        // One caller per turn of the event loop (turns.ts): a sync shared by dozens of calls would
        // otherwise let all of them go on (each sending its request) in the sync's one task.
        for (const b of batch) later(b.resolve);
      } catch (error) {
        this.failure = error;
        for (const b of batch) b.reject(this.writeError());
      }
    }
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

  /** Durable replace: temp file with the first record, fsync, rename, fsync folder. */
  private async switchSegment(n: number, firstRecord: Buffer): Promise<void> {
    // The old segment keeps only its records (its unused preallocated space is given back), and
    // everything in it is on disk before the new one exists.
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
      allocated = await this.extendTo(fd, 0, firstRecord.length);
      await this.fs.write(fd, firstRecord, 0);
      this.stats.recordBytes += firstRecord.length;
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
    this.segment = n;
    this.position = firstRecord.length;
    this.allocated = allocated;
    this.preallocationRefused = false;
    this.stats.rotations++;
    await this.fs.close(old);
    await this.afterRotation(n);
  }
}
