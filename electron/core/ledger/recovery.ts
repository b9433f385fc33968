/**
 * Log recovery: what opening a ledger folder does before anything is appended.
 *
 * It reads from where the caller's index already stands (`resumeAfter`, checked against the
 * record found there) to the end, so a start costs what was written since the index last
 * committed, not the whole history; without a usable position it reads every segment. Records
 * before the position are verified by the full verification (verify.ts), which runs later.
 *
 * Recovery never guesses: it keeps valid records, truncates a torn tail (a write that never
 * finished), and reports every problem. A bad record followed by valid ones is corruption or
 * tampering: it is reported with its place, the segment is copied aside untouched, and the ledger
 * opens in safe mode until a person acknowledges it. A `.tmp` segment is a rotation that crashed
 * before its rename; the older segment is whole, so the temp file is removed.
 */
import { basename } from 'node:path';
import type { LedgerChainBreak, LedgerTornTail } from '../../../shared/domain/ledger';
import { CHECKPOINT_TYPE, GENESIS_HASH, decodeLine, scanSegment, sha256Hex, type ChainCursor, type ChainKey, type StoredRecord } from './format';
import { inDir, type LedgerFs } from './ledger-fs';
import { TEMP_NAME, segmentName, segmentNumbers } from './segments';
import type { WriterStart } from './writer';

/** Where a record sits: its segment's number, its byte offset and its length (newline included). */
export interface RecordLocation {
  segment: number;
  offset: number;
  length: number;
}

/** A point in the log a reader already has everything up to: the last record it took. */
export interface LogPosition extends RecordLocation {
  seq: number;
  checksum: string;
}

/** How recovery hands what it reads to its caller. */
export interface RecoveryReader {
  /** Where to start reading (after this record), if the caller already has everything before. */
  resumeAfter?: LogPosition | null;
  /**
   * Called once, before any record, when `resumeAfter` is not used. `partial` says recovery reads
   * only the end of the log (`fromSegment`, `tailBytes`): what comes before is the caller's to read.
   */
  onFullScan?: (partial: boolean) => void | Promise<void>;
  /** Each valid record read, in sequence order. */
  onRecord: (record: StoredRecord, location: RecordLocation) => void;
  /** After each segment's records were handed over (lets the caller catch up: backpressure). */
  onSegmentRead?: () => Promise<void>;
  /**
   * Without a usable `resumeAfter`, read from the start of this segment instead of the first one
   * (the caller reads the earlier segments itself, later: the index's catch-up). Chain breaks in
   * those earlier segments are then found by the full verification, not here.
   */
  fromSegment?: number;
  /**
   * With `fromSegment`: read only about this many bytes at the end of that segment (from the first
   * record starting in them). What start needs there is where the log ends and whether its end is
   * whole; any suffix of the log tells which operations it leaves unfinished. A `resumeAfter` in
   * that segment further than this from its end is not used either (the caller catches up from it).
   */
  tailBytes?: number;
}

/** What recovery found, and where the writer continues. */
export interface RecoveredLog {
  /** The record recovery resumed after, or null when it read every segment. */
  resumedAfter: LogPosition | null;
  /** Why a given resume position was not used (it did not match the log), if it was not. */
  resumeRejected: string | null;
  segments: string[];
  tornTail: LedgerTornTail | null;
  /** Breaks found (acknowledgement is decided by the caller from the records). */
  breaks: LedgerChainBreak[];
  removedTempFiles: string[];
  /** The last valid record's checksum (the next record's prevHash) and the next seq. */
  lastHash: string;
  nextSeq: number;
  /** How many valid records were read (those after `resumedAfter`). */
  records: number;
  /** Position of the last valid record, or null for an empty log. */
  last: LogPosition | null;
  /** Record bytes in the last segment after its checkpoint (decides the next rotation). */
  segmentBytes: number;
  writer: WriterStart;
}

/**
 * Reads every segment of `dir` to its last valid record, checking the chain, handing each valid
 * record to `onRecord` in sequence order; repairs a torn tail and opens the segment to continue.
 */
export async function recoverLog(dir: string, fs: LedgerFs, key: ChainKey | null, reader: RecoveryReader): Promise<RecoveredLog> {
  await fs.mkdirp(dir);
  const names = await fs.readdir(dir);
  const removedTempFiles: string[] = [];
  for (const name of names.filter((n) => TEMP_NAME.test(n))) {
    await fs.unlink(inDir(dir, name));
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
  let records = 0;
  let last: LogPosition | null = null;
  let firstIndex = 0;
  let firstBytes: Buffer | null = null;
  let firstStart = 0;
  let resumeRejected: string | null = null;
  /** The bytes of `fromSegment` when checking the resume position already read them. */
  let tailSegment: Buffer | null = null;
  const resume = reader.resumeAfter ?? null;
  if (resume) {
    const found = await checkResume(dir, fs, numbers, resume, key);
    if (typeof found === 'string') resumeRejected = found;
    else if (reader.tailBytes !== undefined && resume.segment === reader.fromSegment && usedEnd(found.bytes) - resume.offset > reader.tailBytes) {
      // Far behind the end (a catch-up stopped in the last segment): reading the rest here would
      // be one long parse before start; only the end is read, and the caller catches up from it.
      tailSegment = found.bytes;
    } else {
      firstIndex = numbers.indexOf(resume.segment);
      firstBytes = found.bytes;
      firstStart = resume.offset;
      cursor = { prevHash: resume.checksum, nextSeq: resume.seq + 1, sealedBy: found.sealedBy };
      last = resume;
    }
  }
  const resumedAfter = firstBytes ? resume : null;
  if (!resumedAfter) {
    const from = reader.fromSegment === undefined ? -1 : numbers.indexOf(reader.fromSegment);
    if (from >= 0 && (from > 0 || reader.tailBytes !== undefined)) {
      firstIndex = from;
      firstStart = 0;
      if (reader.tailBytes !== undefined) {
        const bytes = tailSegment ?? (await fs.readFile(inDir(dir, segmentName(numbers[from]!))));
        const cut = usedEnd(bytes) - reader.tailBytes;
        firstBytes = bytes;
        // Lines are records (JSON holds no raw newline): the byte after a newline starts one.
        firstStart = cut > 0 ? bytes.lastIndexOf(0x0a, cut) + 1 : 0;
      }
      // The chain before where reading starts is not read now: its first record starts an
      // unknown chain (the first segment read from its start still starts at genesis).
      if (from > 0 || firstStart > 0) cursor = { prevHash: null, nextSeq: null };
    }
    await reader.onFullScan?.(firstIndex > 0 || firstStart > 0);
  }
  for (let i = firstIndex; i < numbers.length; i++) {
    const n = numbers[i]!;
    const name = segmentName(n);
    const path = inDir(dir, name);
    const start = i === firstIndex ? firstStart : 0;
    const bytes = i === firstIndex && firstBytes ? firstBytes : await fs.readFile(path);
    const scan = scanSegment(bytes, cursor, start, undefined, key);
    const isLast = i === numbers.length - 1;
    const tailOnly = isLast && scan.bad.length > 0 && scan.bad.every((b) => b.offset >= scan.validLength);
    if (tailOnly) {
      const first = scan.bad[0]!;
      // droppedBytes counts what was rejected, not the unused zeros after it.
      tornTail = { segment: name, offset: scan.validLength, droppedBytes: scan.unusedFrom - scan.validLength, problem: first.problem };
    } else if (scan.bad.length > 0) {
      const preservedCopy = await preserve(fs, dir, path, bytes);
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
    for (const r of scan.records) reader.onRecord(r.record, { segment: n, offset: r.offset, length: r.length });
    records += scan.records.length;
    const end = scan.records[scan.records.length - 1];
    if (end) last = { segment: n, offset: end.offset + end.length, length: end.length, seq: end.record.seq, checksum: end.record.checksum };
    await reader.onSegmentRead?.();
    cursor = scan.cursor;
    lastValidLength = scan.validLength;
    lastUnusedFrom = scan.unusedFrom;
    lastBytesLength = bytes.length;
    const first = scan.records[0];
    lastCheckpointLength = first && first.offset === 0 && first.record.type === CHECKPOINT_TYPE ? first.length : 0;
  }

  const lastHash = last ? last.checksum : numbers.length > 0 && cursor.prevHash ? cursor.prevHash : GENESIS_HASH;
  const nextSeq = last ? last.seq + 1 : 1;
  let writer: WriterStart;
  if (numbers.length === 0) {
    const fd = await fs.open(inDir(dir, segmentName(1)), 'wx');
    await fs.fsyncDir(dir);
    writer = { dir, fd, segment: 1, position: 0, allocated: 0 };
  } else {
    const segment = numbers[numbers.length - 1]!;
    const fd = await fs.open(inDir(dir, segmentName(segment)), 'r+');
    writer = { dir, fd, segment, position: lastValidLength, allocated: lastBytesLength };
    if (lastUnusedFrom > lastValidLength) {
      // Drop the torn/corrupt tail (and the zeros after it) so new records continue the chain
      // from the last valid one; the next append preallocates again.
      await fs.ftruncate(fd, lastValidLength);
      await fs.fsync(fd);
      writer.allocated = lastValidLength;
    }
  }
  return {
    resumedAfter,
    resumeRejected,
    last,
    segments: numbers.length > 0 ? numbers.map(segmentName) : [segmentName(1)],
    tornTail,
    breaks,
    removedTempFiles,
    lastHash,
    nextSeq,
    records,
    segmentBytes: Math.max(0, writer.position - lastCheckpointLength),
    writer,
  };
}

/**
 * The bytes of the segment `resume` points into, if the record it names is there exactly (same
 * seq and checksum, ending at its offset); otherwise why not.
 */
export async function checkResume(dir: string, fs: LedgerFs, numbers: number[], resume: LogPosition, key: ChainKey | null): Promise<{ bytes: Buffer; sealedBy: string | null } | string> {
  if (!numbers.includes(resume.segment)) return `segment ${segmentName(resume.segment)} is missing`;
  const bytes = await fs.readFile(inDir(dir, segmentName(resume.segment)));
  const from = resume.offset - resume.length;
  if (from < 0 || resume.offset > bytes.length || bytes[resume.offset - 1] !== 0x0a) return `no record ends at ${segmentName(resume.segment)}@${resume.offset}`;
  const decoded = decodeLine(bytes.subarray(from, resume.offset - 1), key);
  if (!decoded.ok || decoded.seal === 'other-key' || decoded.record.seq !== resume.seq || decoded.record.checksum !== resume.checksum) {
    return `the record at ${segmentName(resume.segment)}@${from} is not record ${resume.seq} as indexed`;
  }
  return { bytes, sealedBy: decoded.record.keyId ?? null };
}

/** Where the records of a segment end: its preallocated zeros after them are not counted. */
function usedEnd(bytes: Buffer): number {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return end;
}

/** Copies a damaged segment aside, untouched, once per distinct content. */
export async function preserve(fs: LedgerFs, dir: string, path: string, bytes: Buffer): Promise<string> {
  const copy = `${path}.corrupt-${sha256Hex(bytes).slice(0, 16)}`;
  if (!(await fs.exists(copy))) {
    await fs.copyFile(path, copy);
    const fd = await fs.open(copy, 'r+');
    try {
      await fs.fsync(fd);
    } finally {
      await fs.close(fd);
    }
    await fs.fsyncDir(dir);
  }
  return basename(copy);
}
