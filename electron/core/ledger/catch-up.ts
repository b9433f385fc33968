/**
 * Start-up without a current index, in two halves.
 *
 * An index that is missing, unusable, of another schema version, or left far behind (a crash
 * during an earlier catch-up) would cost a read of every segment before the app could start:
 * minutes at a million calls. Instead start reads only the end of the log (recovery.ts,
 * `fromSegment`, `tailBytes`), and:
 *
 * - `TailOperations` folds the operation records read there (and everything appended while
 *   the index catches up): what recovery can settle at once without the index.
 * - `IndexCatchUp` brings the index up to date in the background, in short slices, from where it
 *   stands (or the first record) to where the log ended at open. Records appended meanwhile are
 *   held back (only their places, a few numbers each) and indexed after it, read back from the
 *   segments, so the index still takes every record once, in sequence order, and its committed
 *   position stays a point it can resume from after a crash.
 *
 * A history read about one operation proposed in those records is answered from them (every
 * later record of it is there too); every other history read waits for the catch-up
 * (history.ts): an answer about an operation id is never given from half an index, so
 * idempotency and recovery stay exact. A decision never needs one: the gate admits the ids it
 * made itself without asking the history.
 */
import { parseJournalEvent } from '../../../shared/domain/journal-events';
import { RECONCILED_TYPE } from '../../../shared/domain/ledger';
import { TERMINAL_STATES, type OperationState } from '../../../shared/domain/operations';
import { WardenError } from '../../../shared/result';
import type { RecordedOperation } from '../ports';
import { scanSegment, type ChainCursor, type ChainKey, type StoredRecord } from './format';
import type { LedgerIndex } from './index-store';
import { inDir, type LedgerFs } from './ledger-fs';
import { LedgerProjections } from './projections';
import { checkResume, type LogPosition, type RecordLocation } from './recovery';
import { segmentName, segmentNumbers } from './segments';

/**
 * Bytes of a segment parsed and checked in one go: a fraction of a millisecond of work, so that
 * with the young-generation collections its records cause, a turn of the event loop stays short.
 */
const SLICE_BYTES = 16 * 1024;
/**
 * Bytes of a segment read at a time. A segment is read in windows, not whole: a 32 MiB buffer
 * per segment made the collector run a full mark of the heap for each one.
 */
const WINDOW_BYTES = 1024 * 1024;
/** Held-back records read back per turn once the catch-up reaches them. */
const HELD_BATCH = 256;
/**
 * Records handed to the index per commit. Each waits in memory (young objects every collection
 * copies) until its commit, so batches are small; the next one is parsed while one commits.
 */
const BACKLOG = 250;

/** What the catch-up needs. */
export interface CatchUpOptions {
  dir: string;
  fs: LedgerFs;
  key: ChainKey | null;
  index: LedgerIndex;
  /** Where the log ended when it was opened: the catch-up reads up to here from the segments. */
  until: LogPosition;
  /** Reads records back at their places (the ledger's `readAt`). */
  readAt: (locations: readonly RecordLocation[]) => Promise<StoredRecord[]>;
  /** Called between slices; throws to stop (closing). Default: one turn of the event loop. */
  pause?: () => Promise<void>;
  /** Called once, in the same turn the last held-back record was handed to the index. */
  onLive: () => void;
  /** Progress, in percent (whole numbers, only when it changes). */
  onProgress?: (percent: number) => void;
}

/** The background catch-up of the index. Create with `start`; `done` settles when it is live. */
export class IndexCatchUp {
  private held: RecordLocation[] = [];
  private percentDone = 0;
  private fromSeq = 0;
  readonly done: Promise<void>;

  private constructor(private readonly o: CatchUpOptions) {
    this.done = this.run();
  }

  static start(options: CatchUpOptions): IndexCatchUp {
    return new IndexCatchUp(options);
  }

  /** Remembers the place of a record appended while catching up (indexed after the rest). */
  hold(location: RecordLocation): void {
    this.held.push(location);
  }

  /** How far it is, 0–100. */
  get percent(): number {
    return this.percentDone;
  }

  private progress(seq: number): void {
    const span = this.o.until.seq - this.fromSeq;
    const percent = span <= 0 ? 100 : Math.min(99, Math.floor((100 * (seq - this.fromSeq)) / span));
    if (percent === this.percentDone) return;
    this.percentDone = percent;
    this.o.onProgress?.(percent);
  }

  private async run(): Promise<void> {
    const { dir, fs, key, index, until } = this.o;
    const pause = this.o.pause ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
    const numbers = segmentNumbers(await fs.readdir(dir)).filter((n) => n <= until.segment);
    // Resume where an earlier catch-up committed, if that record is still there as indexed.
    let from = index.position;
    if (from && (from.seq > until.seq || typeof (await checkResume(dir, fs, numbers, from, key)) === 'string')) {
      await index.reset();
      from = null;
    }
    this.fromSeq = from?.seq ?? 0;
    const commits = new CommitPipeline(index);
    for (const n of numbers) {
      if (from && n < from.segment) continue;
      const end = n === until.segment ? until.offset : Number.POSITIVE_INFINITY;
      await this.indexSegment(n, from && n === from.segment ? from.offset : 0, end, pause, commits);
    }
    // Then what was appended meanwhile, read back from where it was written, until nothing is
    // left: the switch to indexing records as they are appended happens in the same turn.
    while (this.held.length > 0) {
      await pause();
      const batch = this.held.splice(0, HELD_BATCH);
      const records = await this.o.readAt(batch);
      const bySeq = records.length === batch.length ? null : await this.pair(batch);
      for (let i = 0; i < batch.length; i++) {
        const record = bySeq ? bySeq[i] : records[i];
        if (record) index.addClassified(record, batch[i]!);
      }
      await commits.maybe();
    }
    await commits.settled();
    this.o.onLive();
    await index.flush();
    this.percentDone = 100;
    this.o.onProgress?.(100);
  }

  /**
   * Indexes the records of segment `n` from byte `start` up to `end` (at most), reading it a
   * window at a time and parsing a slice of it per turn. Each record's checksum (and seal) is
   * checked here; the links between them are the full verification's job, which reads
   * everything after this. A run of zeros (preallocated space, or a hole a crash left) is
   * skipped, and the chain is read as starting again after it, as a scan of the whole segment does.
   */
  private async indexSegment(n: number, start: number, end: number, pause: () => Promise<void>, commits: CommitPipeline): Promise<void> {
    const { fs, dir, key, index } = this.o;
    const fd = await fs.open(inDir(dir, segmentName(n)), 'r');
    try {
      let cursor: ChainCursor = { prevHash: null, nextSeq: null };
      /** The bytes read and not yet parsed, and where in the segment they start. */
      let bytes: Buffer = Buffer.alloc(0);
      let base = start;
      let offset = 0;
      for (;;) {
        if (bytes[offset] === 0) {
          // A slice of zeros per turn, like a slice of records.
          const stop = Math.min(bytes.length, offset + SLICE_BYTES);
          while (offset < stop && bytes[offset] === 0) offset++;
          cursor = { prevHash: null, nextSeq: null };
          if (offset === stop && stop < bytes.length) {
            await pause();
            continue;
          }
        }
        const whole = bytes.lastIndexOf(0x0a) + 1;
        if (whole <= offset) {
          // No whole line left: read on (a record may be longer than a window).
          const at = base + bytes.length;
          const want = Math.min(WINDOW_BYTES, end - at);
          const more = want > 0 ? await fs.read(fd, want, at) : Buffer.alloc(0);
          if (more.length === 0) return;
          const rest = bytes.subarray(offset);
          base += offset;
          bytes = rest.length === 0 ? more : Buffer.concat([rest, more]);
          offset = 0;
          continue;
        }
        await pause();
        const lines = bytes.subarray(0, whole);
        const scan = scanSegment(lines, cursor, offset, Math.min(offset + SLICE_BYTES, whole), key);
        for (const r of scan.records) index.addClassified(r.record, { segment: n, offset: base + r.offset, length: r.length });
        const last = scan.records.at(-1);
        if (last) this.progress(last.record.seq);
        cursor = scan.cursor;
        // Stopped short of the slice by something that is not a record: the segment ends here.
        if (scan.unusedFrom <= offset) return;
        offset = scan.unusedFrom;
        await commits.maybe();
      }
    } finally {
      await fs.close(fd);
    }
  }

  /** Records at `batch` one by one (a place that no longer holds a valid record is left out). */
  private async pair(batch: RecordLocation[]): Promise<Array<StoredRecord | undefined>> {
    const out: Array<StoredRecord | undefined> = [];
    for (const loc of batch) out.push((await this.o.readAt([loc]))[0]);
    return out;
  }
}

/**
 * Commits of the index while catching up: one is written while the next batch is parsed, and the
 * catch-up waits only when the one before it has not finished (so memory and the backlog of
 * records waiting for a commit stay small without parsing waiting for every commit).
 */
class CommitPipeline {
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly index: LedgerIndex) {}

  /** Starts a commit once a batch is waiting, after the one before it finished. */
  async maybe(): Promise<void> {
    if (this.index.backlog < BACKLOG) return;
    await this.writing;
    this.writing = this.index.flush();
    // Awaited by the next call or by `settled`; a failure is the index's, reported there.
    this.writing.catch(() => undefined);
  }

  /** Resolves once the last commit started here finished (rejects if it failed). */
  settled(): Promise<void> {
    return this.writing;
  }
}

/** An operation as the records of the tail show it. */
interface TailOp {
  state: OperationState;
  /** Its records seen here (all of them when its proposal is among them). */
  records: StoredRecord[];
  proposed: boolean;
}

/**
 * What the records read at start (the end of the log) and appended since say about operations,
 * while the index catches up.
 *
 * - Unfinished operations: each one's last state there is its last state anywhere, because every
 *   later record of it is there too. Finished ones are dropped as they finish.
 * - Where the records are of every operation proposed there (`recent`): all of its records are
 *   there too (an operation's records follow its proposal), so history reads about it are
 *   answered from them without waiting for the index. A few numbers per record, kept until the
 *   index is current (`forgetRecent`).
 */
export class TailOperations {
  private readonly ops = new Map<string, TailOp>();
  /** The last state of operations that finished here after recovery handed them on. */
  private readonly finished = new Map<string, OperationState>();
  /**
   * Places of the records of each operation proposed here, in sequence order; an entry of null is
   * an operation only the index can answer for. The map is null once the index is current.
   */
  private recentOps: Map<string, RecordLocation[] | null> | null = new Map();

  apply(record: StoredRecord, location: RecordLocation): void {
    if (record.type === RECONCILED_TYPE) return this.applyReconciled(record, location);
    // What Warden saw a call do belongs to its operation's records; it changes no state.
    if (record.type === 'op.observation') {
      const id = (record.payload as { operationId?: unknown }).operationId;
      if (typeof id === 'string') this.recentOps?.get(id)?.push(location);
      return;
    }
    if (record.type !== 'op.proposed' && record.type !== 'op.transition') return;
    let event: ReturnType<typeof parseJournalEvent>;
    try {
      event = parseJournalEvent(record.type, record.payload);
    } catch {
      return;
    }
    const recent = this.recentOps;
    if (event?.type === 'op.proposed') {
      const id = event.payload.operationId;
      if (!this.ops.has(id)) this.ops.set(id, { state: 'proposed', records: [record], proposed: true });
      // A second proposal of one id (the gate never writes one) is left to the index, which reads
      // the first as the projections do.
      if (recent) recent.set(id, recent.has(id) ? null : [location]);
    } else if (event?.type === 'op.transition') {
      const id = event.payload.operationId;
      recent?.get(id)?.push(location);
      const op = this.ops.get(id) ?? { state: event.payload.from, records: [], proposed: false };
      op.state = event.payload.to;
      op.records.push(record);
      if (TERMINAL_STATES.has(op.state)) {
        this.ops.delete(id);
        this.finished.set(id, op.state);
      } else this.ops.set(id, op);
    }
  }

  /** Unfinished operations: id, state, and the recorded operation when its proposal is here. */
  unfinished(): Array<{ id: string; state: OperationState; recorded: RecordedOperation | undefined }> {
    return [...this.ops].map(([id, op]) => ({
      id,
      state: op.state,
      recorded: op.proposed ? LedgerProjections.fromRecords(op.records, new Set([id])).recorded(id) : undefined,
    }));
  }

  /** The state of an operation seen here (live or finished), if it was. */
  stateOf(id: string): OperationState | undefined {
    return this.ops.get(id)?.state ?? this.finished.get(id);
  }

  /**
   * Where every record of operation `id` is, when its proposal is among the records seen here
   * (undefined otherwise: only the index can answer for it).
   */
  recent(id: string): readonly RecordLocation[] | undefined {
    return this.recentOps?.get(id) ?? undefined;
  }

  /** Stops keeping places (the index answers for everything from now on). */
  forgetRecent(): void {
    this.recentOps = null;
  }

  /**
   * A reconciliation belongs to the operation it settles. The operation it names as its retry
   * shows `retryOf` from it, which a fold of the retry's own records cannot see: that one is left
   * to the index.
   */
  private applyReconciled(record: StoredRecord, location: RecordLocation): void {
    const recent = this.recentOps;
    if (!recent) return;
    const p = record.payload as { operationId?: unknown; retryOperationId?: unknown };
    if (typeof p.operationId === 'string') recent.get(p.operationId)?.push(location);
    if (typeof p.retryOperationId === 'string' && recent.has(p.retryOperationId)) recent.set(p.retryOperationId, null);
  }
}

/** The error history reads fail with after the catch-up stopped (closing). */
export function catchUpStopped(): WardenError {
  return new WardenError('CONFLICT', 'ledger: closed while the history was being indexed');
}
