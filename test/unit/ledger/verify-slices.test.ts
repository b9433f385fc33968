/**
 * The background verification reads each segment a slice at a time (so it never holds the main
 * thread for more than a slice): whatever the slice size, it must find exactly what a scan of
 * each whole segment finds — the same records, the same breaks at the same offsets, the same
 * first record — with records cut by a slice boundary, a record longer than a slice, a hole of
 * zeros, a changed record and a torn tail.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GENESIS_HASH, scanSegment, type ChainCursor } from '../../../electron/core/ledger/format';
import { Ledger } from '../../../electron/core/ledger/ledger';
import type { LogPosition } from '../../../electron/core/ledger/recovery';
import { segmentName, segmentNumbers } from '../../../electron/core/ledger/segments';
import { verifyInSlices } from '../../../electron/core/ledger/verify';
import { lineStarts, recordBytesOf, steppingClock, tempDir } from './helpers';

const dirs: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** A ledger of `count` records over a few segments, one of them far longer than a slice. */
async function ledger(count: number): Promise<{ dir: string; until: LogPosition }> {
  const t = tempDir('warden-verify-slices-');
  dirs.push(t);
  const l = await Ledger.open({ dir: t.dir, clock: steppingClock(), rotateBytes: 24 * 1024, preallocateBytes: 64 * 1024 });
  for (let i = 0; i < count; i++) {
    const payload = { operationId: `op-${i}`, text: i === 7 ? 'x'.repeat(70_000) : `record ${i} ${'y'.repeat(i % 300)}` };
    await l.append([{ type: 'op.transition', payload }], { durable: i % 10 === 0 });
  }
  await l.flush();
  const until = l.position!;
  await l.close();
  return { dir: t.dir, until };
}

/** What the verification reports, found by scanning each whole segment in one go (the reference). */
function wholeScan(dir: string, until: LogPosition): { records: number; breaks: Array<{ id: string; problem: string; length: number }>; first: number | null } {
  const numbers = segmentNumbers(readdirSync(dir)).filter((n) => n <= until.segment);
  let cursor: ChainCursor = numbers[0] === 1 ? { prevHash: GENESIS_HASH, nextSeq: 1 } : { prevHash: null, nextSeq: null };
  let records = 0;
  let first: number | null = null;
  const breaks: Array<{ id: string; problem: string; length: number }> = [];
  for (const n of numbers) {
    const bytes = readFileSync(join(dir, segmentName(n)));
    const end = n === until.segment ? Math.min(until.offset, bytes.length) : bytes.length;
    const scan = scanSegment(bytes, cursor, 0, end, null);
    if (n === numbers[0] && scan.bad.length === 0 && scan.records[0]?.offset === 0) first = scan.records[0].record.seq;
    records += scan.records.length;
    const lastValid = scan.records.length > 0 ? scan.validLength : 0;
    for (const b of scan.bad) if (b.offset < lastValid) breaks.push({ id: `${segmentName(n)}@${b.offset}`, problem: b.problem, length: b.length });
    cursor = scan.cursor;
  }
  return { records, breaks, first };
}

async function sliced(dir: string, until: LogPosition, sliceBytes: number) {
  const r = await verifyInSlices(dir, until, { sliceBytes });
  return { records: r.records, breaks: r.breaks.map((b) => ({ id: b.id, problem: b.problem, length: b.length })), first: r.first?.seq ?? null };
}

const SLICES = [1, 97, 1000, 4096, 32 * 1024, 1 << 20];

describe('the background verification, a slice at a time', () => {
  it('finds what a scan of each whole segment finds, whatever the slice size, on an intact ledger', async () => {
    const { dir, until } = await ledger(120);
    const expected = wholeScan(dir, until);
    expect(expected.breaks).toEqual([]);
    expect(expected.records).toBeGreaterThan(120);
    for (const size of SLICES) expect(await sliced(dir, until, size), `slices of ${size} bytes`).toEqual(expected);
  });

  it('finds a changed record, a hole of zeros and a torn record at the same offsets, whatever the slice size', async () => {
    const { dir, until } = await ledger(120);
    const seg = join(dir, segmentName(2));
    const bytes = readFileSync(seg);
    const starts = lineStarts(recordBytesOf(seg));
    // A changed byte in the third record, zeros over the fifth, the sixth cut short (torn) by zeros.
    bytes[bytes.indexOf('record ', starts[2]!)] = 'R'.charCodeAt(0);
    bytes.fill(0, starts[4]!, starts[5]! - 1);
    bytes.fill(0, starts[5]! + 20, starts[6]! - 1);
    writeFileSync(seg, bytes);
    const expected = wholeScan(dir, until);
    expect(expected.breaks.map((b) => b.problem)).toEqual(expect.arrayContaining(['checksum', 'unparseable']));
    for (const size of SLICES) expect(await sliced(dir, until, size), `slices of ${size} bytes`).toEqual(expected);
  });

  it('a tear at the very end is not a break, whatever the slice size', async () => {
    const { dir, until } = await ledger(60);
    const last = join(dir, segmentName(until.segment));
    const bytes = readFileSync(last);
    writeFileSync(last, bytes.subarray(0, until.offset - 15));
    const expected = wholeScan(dir, until);
    expect(expected.breaks).toEqual([]);
    for (const size of SLICES) expect(await sliced(dir, until, size), `slices of ${size} bytes`).toEqual(expected);
  });
});
