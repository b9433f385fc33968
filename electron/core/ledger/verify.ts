/**
 * `verify(dir)`: checks a ledger folder without changing it — every record's checksum, the hash
 * chain within and across segments, sequence numbers — and names the first broken record.
 *
 * Read-only on purpose: it is what a person runs on a copy they suspect was tampered with, and
 * what the crash test runs after every recovery.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerChainBreak, LedgerVerifyResult } from '../../../shared/domain/ledger';
import { anchorMismatch, unanchoredStartProblem, type AnchoredEnds, type AnchoredRecord } from './anchor';
import { GENESIS_HASH, scanSegment, type BadLine, type ChainCursor, type ChainKey, type StoredRecord } from './format';
import { nodeLedgerFs, type LedgerFs } from './ledger-fs';
import type { LogPosition } from './recovery';
import { segmentName, segmentNumbers } from './segments';

/** What a verification is given besides the folder. */
export interface VerifyOptions {
  /** The ledger's key: sealed records are checked with it. Without it they cannot be checked. */
  key?: ChainKey | null;
  /** The anchor kept outside the ledger: the ledger must hold both records it names, unchanged. */
  anchor?: AnchoredEnds | null;
}

/**
 * Verifies the ledger in `dir`; `ok` is false at the first problem of any kind.
 *
 * The first segment may start from a deleted one (older versions deleted old segments); its first
 * record is then accepted as the chain's start, unless `options.anchor` names another first
 * record (`anchorMismatch`, the check the app's start makes too). A torn tail counts as broken:
 * recovery has not run yet. Sealed records need `options.key`: without it the result says they
 * could not be checked (never "intact"). `sealing` says how many records are plain (sha256 only:
 * written before the ledger had a key).
 */
export async function verifyLedger(dir: string, options: VerifyOptions = {}): Promise<LedgerVerifyResult> {
  const key = options.key ?? null;
  const numbers = segmentNumbers(await readdir(dir));
  let cursor: ChainCursor = numbers[0] === 1 ? { prevHash: GENESIS_HASH, nextSeq: 1 } : { prevHash: null, nextSeq: null };
  let records = 0;
  const sealing = { plain: 0, sealed: 0, unverified: 0 };
  let firstUnverified: { segment: string; offset: number; seq: number; excerpt: string } | null = null;
  let lastSeq = 0;
  let end = { segment: segmentName(numbers.at(-1) ?? 1), offset: 0 };
  let start: { seq: number; segment: number; sealed: boolean } | null = null;
  // The records at the places the anchor names, as this scan read (and checked) them.
  const anchored = new Map<string, StoredRecord>();
  const places = [options.anchor, options.anchor?.first].filter((p): p is AnchoredRecord => !!p).map((p) => `${p.segment}@${p.offset}@${p.length}`);
  for (const n of numbers) {
    const name = segmentName(n);
    const bytes = await readFile(join(dir, name));
    const scan = scanSegment(bytes, cursor, 0, bytes.length, key);
    const firstBad = scan.bad[0];
    if (firstBad) {
      const excerpt = bytes.subarray(firstBad.offset, firstBad.offset + Math.min(firstBad.length, 240)).toString('utf8');
      return {
        ok: false,
        segments: numbers.map(segmentName),
        records: records + scan.records.filter((r) => r.offset < firstBad.offset).length,
        firstBroken: {
          segment: name,
          offset: firstBad.offset,
          problem: firstBad.problem,
          ...(firstBad.seq !== undefined ? { seq: firstBad.seq } : {}),
          excerpt,
        },
        sealing,
      };
    }
    for (const r of scan.records) {
      if (r.record.keyId === undefined) sealing.plain++;
      else if (key) sealing.sealed++;
      else {
        sealing.unverified++;
        firstUnverified ??= { segment: name, offset: r.offset, seq: r.record.seq, excerpt: bytes.subarray(r.offset, r.offset + Math.min(r.length, 240)).toString('utf8') };
      }
      start ??= { seq: r.record.seq, segment: n, sealed: r.record.keyId !== undefined };
      const place = `${n}@${r.offset}@${r.length}`;
      if (places.includes(place)) anchored.set(place, r.record);
      lastSeq = r.record.seq;
    }
    records += scan.records.length;
    cursor = scan.cursor;
    end = { segment: name, offset: scan.validLength };
  }
  const result = { ok: true, segments: numbers.map(segmentName), records, firstBroken: null, sealing };
  if (firstUnverified) {
    return {
      ...result,
      ok: false,
      firstBroken: {
        ...firstUnverified,
        problem: 'key',
        detail: `Records from ${firstUnverified.seq} on are sealed with the ledger's key, which this check was not given (it is in the keychain): their seals were not checked.`,
      },
    };
  }
  const mismatch = options.anchor
    ? await anchorMismatch(options.anchor, { firstSegment: numbers[0] ?? null, lastSeq, readAt: async (p) => anchored.get(`${p.segment}@${p.offset}@${p.length}`) })
    : null;
  if (mismatch) {
    const at = mismatch.end === 'last' ? end : { segment: segmentName(numbers[0] ?? 1), offset: 0 };
    return { ...result, ok: false, firstBroken: { ...at, problem: 'anchor', ...(mismatch.end === 'first' || lastSeq >= mismatch.seq ? { seq: mismatch.seq } : {}), excerpt: '', detail: mismatch.detail } };
  }
  const lost = options.anchor && start ? unanchoredStartProblem(options.anchor, start) : null;
  if (lost) return { ...result, ok: false, firstBroken: { segment: segmentName(start!.segment), offset: 0, problem: 'anchor', seq: start!.seq, excerpt: '', detail: lost } };
  return result;
}

/**
 * Bytes read and checked at a time by the background verification: a few dozen records, well
 * under a millisecond (each is parsed, hashed and its seal checked). It runs on the main thread
 * beside the app, so one slice is a pause every window waits out: 256 KiB slices held the loop
 * 5–15 ms each (p99 15 ms at a million calls, against a 5 ms target). Reading a slice at a time
 * instead of a whole 32 MiB segment also keeps no segment-sized buffer alive for the collector.
 */
const VERIFY_SLICE_BYTES = 32 * 1024;
const NEWLINE = 0x0a;

/** A bad record found by the full verification (the shape recovery reports, before acknowledgement). */
export type FoundBreak = Omit<LedgerChainBreak, 'acknowledged' | 'preservedCopy'>;

/**
 * Verifies every record of the ledger in `dir` up to `until` (the position when it started),
 * reading and checking slices of about `sliceBytes` with a turn of the event loop between them, so a full
 * verification of a large history runs beside the app without stalling it. Returns the bad
 * records that have valid ones after them (a tear at the very end is recovery's business), and
 * the chain's first record when it is valid (what the anchor vouches for as the ledger's start).
 */
export async function verifyInSlices(
  dir: string,
  until: LogPosition | null,
  options: { fs?: LedgerFs; sliceBytes?: number; pause?: () => Promise<void>; key?: ChainKey | null } = {},
): Promise<{ records: number; breaks: FoundBreak[]; first: (AnchoredRecord & { sealed: boolean }) | null }> {
  const fs = options.fs ?? nodeLedgerFs;
  const sliceBytes = options.sliceBytes ?? VERIFY_SLICE_BYTES;
  const pause = options.pause ?? (() => new Promise<void>((resolve) => setImmediate(resolve)));
  const breaks: FoundBreak[] = [];
  let records = 0;
  let first: (AnchoredRecord & { sealed: boolean }) | null = null;
  if (!until) return { records, breaks, first };
  const numbers = segmentNumbers(await fs.readdir(dir)).filter((n) => n <= until.segment);
  let cursor: ChainCursor = numbers[0] === 1 ? { prevHash: GENESIS_HASH, nextSeq: 1 } : { prevHash: null, nextSeq: null };
  for (const n of numbers) {
    const name = segmentName(n);
    const end = n === until.segment ? until.offset : Number.MAX_SAFE_INTEGER;
    let lastValid = 0;
    const bad: BadLine[] = [];
    const fd = await fs.open(join(dir, name), 'r');
    try {
      // `held` starts at `base` in the segment: what the last read brought that no newline ended
      // yet (part of a record, or zeros), scanned with the next read so a record is never cut.
      let base = 0;
      let held: Buffer = Buffer.alloc(0);
      let want = sliceBytes;
      for (;;) {
        const at = base + held.length;
        const asked = Math.min(want, end - at);
        const chunk = asked > 0 ? await fs.read(fd, asked, at) : Buffer.alloc(0);
        const last = chunk.length < asked || at + chunk.length >= end;
        const bytes = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
        // Up to the last newline read; at the end, everything (a torn tail or zeros are seen
        // exactly as a scan of the whole segment sees them).
        const limit = last ? bytes.length : bytes.lastIndexOf(NEWLINE) + 1;
        if (limit === 0) {
          // One line longer than everything read so far: read on, twice as much each time.
          held = bytes;
          want *= 2;
          continue;
        }
        want = sliceBytes;
        const scan = scanSegment(bytes, cursor, 0, limit, options.key ?? null);
        for (const b of scan.bad) bad.push({ ...b, offset: base + b.offset });
        const head = scan.records[0];
        if (n === numbers[0] && records === 0 && bad.length === 0 && head && base + head.offset === 0) first = { seq: head.record.seq, segment: n, offset: 0, length: head.length, hash: head.record.checksum, sealed: head.record.keyId !== undefined };
        records += scan.records.length;
        if (scan.records.length > 0) lastValid = base + scan.validLength;
        cursor = scan.cursor;
        if (last) break;
        held = bytes.subarray(limit);
        base += limit;
        await pause();
      }
    } finally {
      await fs.close(fd).catch(() => undefined);
    }
    for (const b of bad) {
      if (b.offset >= lastValid) continue; // a tail, not a break
      breaks.push({ id: `${name}@${b.offset}`, segment: name, offset: b.offset, length: b.length, problem: b.problem, ...(b.seq !== undefined ? { seq: b.seq } : {}) });
    }
  }
  return { records, breaks, first };
}
