/**
 * Preallocated segments: the ledger extends a segment with zeros ahead of its records and
 * overwrites them in place (one fdatasync per durable append). These tests prove that the zeros
 * are never mistaken for records or for damage, that damage inside or after them is judged by
 * the same rules as anywhere else, and that sizes that matter count records, not file length.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, segmentName } from '../../../electron/core/ledger/ledger';
import { countingFs, nodeLedgerFs, type LedgerFs } from '../../../electron/core/ledger/ledger-fs';
import { verifyLedger } from '../../../electron/core/ledger/verify';
import { lineStarts, recordBytesOf, tempDir, writeLedger, recordsOf } from './helpers';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function dir(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

describe('preallocated segments', () => {
  it('trailing zeros are unused space: a reopen reports nothing, verify passes, and appends overwrite the zeros in place', async () => {
    const d = dir();
    await writeLedger(d, 10);
    const seg = join(d, segmentName(1));
    expect(statSync(seg).size).toBe(1024 * 1024);
    const before = recordBytesOf(seg);
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 10, firstBroken: null });
    const { fs, counts } = countingFs();
    const ledger = await Ledger.open({ dir: d, fs });
    try {
      expect(ledger.recovery.tornTail).toBeNull();
      expect(ledger.recovery.breaks).toEqual([]);
      expect(ledger.size()).toBe(10);
      expect(counts.ftruncate).toBe(0); // nothing was "repaired"
      await ledger.append([{ type: 'after', payload: { ok: true } }], { durable: true });
      expect(ledger.stats.preallocations).toBe(0);
      expect(counts.fdatasync).toBe(1);
      expect(counts.fsync).toBe(0);
    } finally {
      await ledger.close();
    }
    expect(statSync(seg).size).toBe(1024 * 1024);
    const after = recordBytesOf(seg);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(after.length).toBeGreaterThan(before.length);
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 11 });
  });

  it('records crossing chunk boundaries extend the segment a chunk at a time, and every record survives', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d, preallocateBytes: 512 });
    try {
      for (let i = 0; i < 40; i++) await ledger.append([{ type: 't', payload: { i, pad: 'x'.repeat(i * 7) } }], { durable: i % 2 === 0 });
      // One record larger than several chunks.
      await ledger.append([{ type: 'big', payload: { blob: 'y'.repeat(3000) } }], { durable: true });
      await ledger.flush();
      const seg = join(d, segmentName(1));
      const size = statSync(seg).size;
      const records = recordBytesOf(seg).length;
      expect(size % 512).toBe(0);
      expect(size).toBeGreaterThanOrEqual(records);
      expect(size - records).toBeLessThan(512);
      expect(ledger.stats.recordBytes).toBe(records);
      expect(ledger.stats.preallocations).toBeGreaterThan(5);
    } finally {
      await ledger.close();
    }
    const reopened = await Ledger.open({ dir: d, preallocateBytes: 512 });
    try {
      expect(reopened.size()).toBe(41);
      expect((await recordsOf(reopened)).at(-1)!.payload).toEqual({ blob: 'y'.repeat(3000) });
      expect(reopened.recovery.tornTail).toBeNull();
    } finally {
      await reopened.close();
    }
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 41 });
  });

  it('zeros then garbage at the tail is dropped and reported, and appends continue the chain', async () => {
    const d = dir();
    await writeLedger(d, 5);
    const seg = join(d, segmentName(1));
    const validLength = recordBytesOf(seg).length;
    const bytes = readFileSync(seg);
    Buffer.from('{"seq":6,"time":1,"type":"forged","payload":{}}\n').copy(bytes, validLength + 100);
    writeFileSync(seg, bytes);
    expect((await verifyLedger(d)).firstBroken).toMatchObject({ segment: segmentName(1), offset: validLength, problem: 'unparseable' });
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.size()).toBe(5);
      expect(ledger.recovery.tornTail).toMatchObject({ segment: segmentName(1), offset: validLength, problem: 'unparseable' });
      expect(ledger.safeMode).toBe(false);
      const [next] = await ledger.append([{ type: 'after', payload: {} }], { durable: true });
      expect(next!.seq).toBe(6);
    } finally {
      await ledger.close();
    }
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 6 });
    expect(recordBytesOf(seg).toString('utf8')).not.toContain('forged');
  });

  it('a record zeroed out in the middle of the log is corruption: reported, preserved, safe start', async () => {
    const d = dir();
    await writeLedger(d, 6);
    const seg = join(d, segmentName(1));
    const bytes = readFileSync(seg);
    const starts = lineStarts(recordBytesOf(seg));
    const tampered = Buffer.from(bytes);
    tampered.fill(0, starts[2]!, starts[3]!); // record seq 3, newline included
    writeFileSync(seg, tampered);
    expect((await verifyLedger(d)).firstBroken).toMatchObject({ segment: segmentName(1), offset: starts[2] });
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.safeMode).toBe(true);
      expect(ledger.recovery.tornTail).toBeNull();
      expect(ledger.recovery.breaks).toHaveLength(1);
      expect(ledger.recovery.breaks[0]).toMatchObject({ offset: starts[2], length: starts[3]! - starts[2]!, problem: 'unparseable' });
      expect((await recordsOf(ledger)).map((r) => r.seq)).toEqual([1, 2, 4, 5, 6]);
      expect(readFileSync(join(d, ledger.recovery.breaks[0]!.preservedCopy!)).equals(tampered)).toBe(true);
    } finally {
      await ledger.close();
    }
  });

  it('zeros inserted between intact records are corruption too, even though the chain still links', async () => {
    const d = dir();
    await writeLedger(d, 4, 0);
    const seg = join(d, segmentName(1));
    const bytes = readFileSync(seg);
    const starts = lineStarts(bytes);
    writeFileSync(seg, Buffer.concat([bytes.subarray(0, starts[2]), Buffer.alloc(64), bytes.subarray(starts[2]!)]));
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.safeMode).toBe(true);
      expect(ledger.recovery.breaks.map((b) => ({ offset: b.offset, length: b.length }))).toEqual([{ offset: starts[2], length: 64 }]);
      expect((await recordsOf(ledger)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    } finally {
      await ledger.close();
    }
  });

  it('a NUL byte inside a record in the middle of the log is one bad record, not a torn tail', async () => {
    const d = dir();
    await writeLedger(d, 5);
    const seg = join(d, segmentName(1));
    const bytes = readFileSync(seg);
    const starts = lineStarts(recordBytesOf(seg));
    bytes[starts[1]! + 30] = 0;
    writeFileSync(seg, bytes);
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.safeMode).toBe(true);
      expect(ledger.recovery.tornTail).toBeNull();
      expect(ledger.recovery.breaks.map((b) => ({ offset: b.offset, length: b.length, problem: b.problem }))).toEqual([
        { offset: starts[1], length: starts[2]! - starts[1]!, problem: 'unparseable' },
      ]);
      expect((await recordsOf(ledger)).map((r) => r.seq)).toEqual([1, 3, 4, 5]);
    } finally {
      await ledger.close();
    }
  });

  it('rotation counts record bytes, not the preallocated length, and gives old segments their unused space back', async () => {
    const d = dir();
    // Every segment file is at least 1 MiB long; with a 4,000-byte threshold a ledger that looked
    // at file length would rotate on every append.
    const ledger = await Ledger.open({ dir: d, rotateBytes: 4_000 });
    try {
      for (let i = 0; i < 60; i++) await ledger.append([{ type: 't', payload: { i, pad: 'x'.repeat(100) } }], { durable: true });
      await ledger.flush();
      // ~60 × 190 bytes past a 4,000-byte threshold: about 3 rotations.
      expect(ledger.stats.rotations).toBeGreaterThanOrEqual(2);
      expect(ledger.stats.rotations).toBeLessThan(5);
    } finally {
      await ledger.close();
    }
    const segments = readdirSync(d).filter((n) => /^ledger\.\d+\.log$/.test(n)).sort();
    for (const s of segments.slice(0, -1)) expect(statSync(join(d, s)).size).toBe(recordBytesOf(join(d, s)).length);
    expect(statSync(join(d, segments.at(-1)!)).size).toBe(1024 * 1024);
    expect(await verifyLedger(d)).toMatchObject({ ok: true, segments });
    // Reopening a preallocated segment does not count its zeros toward the threshold either.
    const reopened = await Ledger.open({ dir: d, rotateBytes: 4_000 });
    try {
      await reopened.append([{ type: 't', payload: {} }], { durable: true });
      await reopened.flush();
      expect(reopened.stats.rotations).toBe(0);
    } finally {
      await reopened.close();
    }
  });

  it('a disk too full for a preallocation chunk still takes the records: they are written without preallocation', async () => {
    const d = dir();
    let full = false;
    let refused = 0;
    const nearlyFull: LedgerFs = {
      ...nodeLedgerFs,
      write: async (fd, data, pos) => {
        if (full && data.length >= 1024 && data.every((b) => b === 0)) {
          refused++;
          // Part of the chunk lands before the disk runs out, as a short write would.
          await nodeLedgerFs.write(fd, data.subarray(0, 300), pos);
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        return nodeLedgerFs.write(fd, data, pos);
      },
    };
    const ledger = await Ledger.open({ dir: d, fs: nearlyFull, preallocateBytes: 1024 });
    try {
      await ledger.append([{ type: 't', payload: { i: -1 } }], { durable: true });
      full = true;
      for (let i = 0; i < 20; i++) await ledger.append([{ type: 't', payload: { i, pad: 'x'.repeat(200) } }], { durable: true });
      expect(refused).toBe(1); // refused once, then no more attempts in this segment
      expect(ledger.size()).toBe(21);
    } finally {
      await ledger.close();
    }
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 21 });
    const reopened = await Ledger.open({ dir: d });
    try {
      expect(reopened.size()).toBe(21);
      expect(reopened.recovery.tornTail).toBeNull();
    } finally {
      await reopened.close();
    }
  });

  it('preallocateBytes is validated', async () => {
    const d = dir();
    await expect(Ledger.open({ dir: d, preallocateBytes: -1 })).rejects.toThrow(/preallocateBytes/);
    await expect(Ledger.open({ dir: d, preallocateBytes: 1.5 })).rejects.toThrow(/preallocateBytes/);
  });
});
