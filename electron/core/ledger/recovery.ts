/**
 * Log recovery: what opening a ledger folder does before anything is appended.
 *
 * Recovery never guesses: it keeps valid records, truncates a torn tail (a write that never
 * finished), and reports every problem. A bad record followed by valid ones is corruption or
 * tampering: it is reported with its place, the segment is copied aside untouched, and the ledger
 * opens in safe mode until a person acknowledges it. A `.tmp` segment is a rotation that crashed
 * before its rename; the older segment is whole, so the temp file is removed.
 */
import { basename } from 'node:path';
import type { LedgerChainBreak, LedgerTornTail } from '../../../shared/domain/ledger';
import { CHECKPOINT_TYPE, GENESIS_HASH, scanSegment, sha256Hex, type ChainCursor, type StoredRecord } from './format';
import { inDir, type LedgerFs } from './ledger-fs';
import { TEMP_NAME, segmentName, segmentNumbers } from './segments';
import type { WriterStart } from './writer';

/** What recovery found, and where the writer continues. */
export interface RecoveredLog {
  segments: string[];
  tornTail: LedgerTornTail | null;
  /** Breaks found (acknowledgement is decided by the caller from the records). */
  breaks: LedgerChainBreak[];
  removedTempFiles: string[];
  /** The last valid record's checksum (the next record's prevHash) and the next seq. */
  lastHash: string;
  nextSeq: number;
  /** How many valid records were read. */
  records: number;
  /** Record bytes in the last segment after its checkpoint (decides the next rotation). */
  segmentBytes: number;
  writer: WriterStart;
}

/**
 * Reads every segment of `dir` to its last valid record, checking the chain, handing each valid
 * record to `onRecord` in sequence order; repairs a torn tail and opens the segment to continue.
 */
export async function recoverLog(dir: string, fs: LedgerFs, onRecord: (record: StoredRecord) => void): Promise<RecoveredLog> {
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
  let last: StoredRecord | undefined;
  for (const [i, n] of numbers.entries()) {
    const name = segmentName(n);
    const path = inDir(dir, name);
    const bytes = await fs.readFile(path);
    const scan = scanSegment(bytes, cursor);
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
    for (const r of scan.records) onRecord(r.record);
    records += scan.records.length;
    if (scan.records.length > 0) last = scan.records[scan.records.length - 1]!.record;
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

/** Copies a damaged segment aside, untouched, once per distinct content. */
async function preserve(fs: LedgerFs, dir: string, path: string, bytes: Buffer): Promise<string> {
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
