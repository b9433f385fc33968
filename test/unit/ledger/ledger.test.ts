import { copyFileSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, segmentName } from '../../../electron/core/ledger/ledger';
import { countingFs, nodeLedgerFs, slowSyncFs, type LedgerFs } from '../../../electron/core/ledger/ledger-fs';
import { verifyLedger } from '../../../electron/core/ledger/verify';
import { lineStarts, recordBytesOf, steppingClock, tempDir, writeLedger as writeRecords, recordsOf } from './helpers';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function dir(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

/** The ledger tests' records carry text JSON must escape (quotes, newline) and non-ASCII. */
const writeLedger = (d: string, count: number, preallocateBytes?: number): Promise<void> => writeRecords(d, count, preallocateBytes, { text: 'é✓ "quoted"\nline' });

describe('ledger log', () => {
  it('records survive a reopen in order, with a chain that verifies', async () => {
    const d = dir();
    await writeLedger(d, 20);
    const reopened = await Ledger.open({ dir: d });
    try {
      expect(reopened.size()).toBe(20);
      expect((await recordsOf(reopened)).map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect((await recordsOf(reopened))[3]!.payload).toEqual({ operationId: 'op-3', n: 3, text: 'é✓ "quoted"\nline' });
      expect(reopened.recovery.tornTail).toBeNull();
      expect(reopened.safeMode).toBe(false);
      const [next] = await reopened.append([{ type: 'x', payload: {} }], { durable: true });
      expect(next!.seq).toBe(21);
    } finally {
      await reopened.close();
    }
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 21, firstBroken: null });
  });

  it('a log truncated at every byte offset inside its last record recovers to the previous record', async () => {
    const d = dir();
    await writeLedger(d, 3);
    const seg = join(d, segmentName(1));
    const original = recordBytesOf(seg);
    const lastStart = lineStarts(original).at(-1)!;
    for (let cut = lastStart; cut < original.length; cut++) {
      writeFileSync(join(d, segmentName(1)), original.subarray(0, cut));
      const ledger = await Ledger.open({ dir: d });
      try {
        expect(ledger.size()).toBe(2);
        expect((await recordsOf(ledger)).at(-1)!.seq).toBe(2);
        if (cut === lastStart) expect(ledger.recovery.tornTail).toBeNull();
        else expect(ledger.recovery.tornTail).toEqual({ segment: segmentName(1), offset: lastStart, droppedBytes: cut - lastStart, problem: 'torn' });
        expect(ledger.safeMode).toBe(false);
      } finally {
        await ledger.close();
      }
      expect(statSync(seg).size).toBe(lastStart);
      expect((await verifyLedger(d)).ok).toBe(true);
    }
  }, 60_000);

  it('a record torn inside the preallocated area (a partial record, then zeros) recovers to the previous record at every cut', async () => {
    const d = dir();
    // Small chunks keep ~200 rewrites of the file fast; the layout is the same as with 1 MiB.
    await writeLedger(d, 3, 4096);
    const seg = join(d, segmentName(1));
    const fileLength = statSync(seg).size;
    expect(fileLength).toBe(4096);
    const original = recordBytesOf(seg);
    expect(fileLength).toBeGreaterThan(original.length); // the segment really is preallocated
    const lastStart = lineStarts(original).at(-1)!;
    for (let cut = lastStart; cut < original.length; cut++) {
      // What a crash leaves when a write into preallocated space stops early: the rest stays zero.
      const torn = Buffer.alloc(fileLength);
      original.copy(torn, 0, 0, cut);
      writeFileSync(seg, torn);
      expect((await verifyLedger(d)).ok).toBe(cut === lastStart);
      const ledger = await Ledger.open({ dir: d, preallocateBytes: 4096 });
      try {
        expect((await recordsOf(ledger)).map((r) => r.seq)).toEqual([1, 2]);
        if (cut === lastStart) expect(ledger.recovery.tornTail).toBeNull();
        else expect(ledger.recovery.tornTail).toEqual({ segment: segmentName(1), offset: lastStart, droppedBytes: cut - lastStart, problem: 'torn' });
        expect(ledger.safeMode).toBe(false);
        const [next] = await ledger.append([{ type: 'after', payload: { cut } }], { durable: true });
        expect(next!.seq).toBe(3);
      } finally {
        await ledger.close();
      }
      expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 3 });
      const reopened = await Ledger.open({ dir: d });
      try {
        expect((await recordsOf(reopened)).at(-1)!.payload).toEqual({ cut });
      } finally {
        await reopened.close();
      }
    }
  }, 60_000);

  it('garbage appended to the tail is dropped and reported, and appends continue the chain', async () => {
    const d = dir();
    await writeLedger(d, 5);
    const seg = join(d, segmentName(1));
    // Garbage right after the records (a file without preallocated space).
    const validLength = recordBytesOf(seg).length;
    truncateSync(seg, validLength);
    appendFileSync(seg, Buffer.from('{"seq":6,"time":1,"type":"forged","payload":{}}\n\x00\x00garbage\xff\n'));
    expect((await verifyLedger(d)).firstBroken).toMatchObject({ offset: validLength, segment: segmentName(1) });
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.size()).toBe(5);
      expect(ledger.recovery.tornTail).toMatchObject({ offset: validLength, problem: 'unparseable' });
      expect(ledger.safeMode).toBe(false);
      await ledger.append([{ type: 'after', payload: { ok: true } }], { durable: true });
    } finally {
      await ledger.close();
    }
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 6 });
  }, 60_000);

  it('a flipped byte in the middle is detected loudly, the file is preserved, and the start is safe until acknowledged', async () => {
    const d = dir();
    await writeLedger(d, 10);
    const seg = join(d, segmentName(1));
    const bytes = readFileSync(seg);
    const starts = lineStarts(bytes);
    const target = starts[4]! + 40; // inside record seq 5
    const tampered = Buffer.from(bytes);
    tampered[target] = tampered[target]! ^ 0x01;
    writeFileSync(seg, tampered);

    const verdict = await verifyLedger(d);
    expect(verdict.ok).toBe(false);
    expect(verdict.firstBroken).toMatchObject({ segment: segmentName(1), offset: starts[4], seq: 5 });

    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.safeMode).toBe(true);
      expect(ledger.recovery.breaks).toHaveLength(1);
      const brk = ledger.recovery.breaks[0]!;
      expect(brk).toMatchObject({ segment: segmentName(1), offset: starts[4], acknowledged: false });
      expect(['checksum', 'unparseable']).toContain(brk.problem);
      // The untouched bytes are kept for inspection.
      expect(readFileSync(join(d, brk.preservedCopy!)).equals(tampered)).toBe(true);
      // Valid records after the break are still known (nothing after it is silently lost).
      expect((await recordsOf(ledger)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 6, 7, 8, 9, 10]);
      await ledger.acknowledgeSafeMode('user', 'checked the preserved copy');
      expect(ledger.safeMode).toBe(false);
    } finally {
      await ledger.close();
    }
    const again = await Ledger.open({ dir: d });
    try {
      expect(again.recovery.breaks).toHaveLength(1);
      expect(again.recovery.breaks[0]!.acknowledged).toBe(true);
      expect(again.safeMode).toBe(false);
    } finally {
      await again.close();
    }
    // verify keeps telling the truth about the file.
    expect((await verifyLedger(d)).firstBroken?.offset).toBe(starts[4]);
  });

  it('a removed record in the middle breaks the chain and triggers the safe start', async () => {
    const d = dir();
    await writeLedger(d, 6);
    const seg = join(d, segmentName(1));
    const bytes = readFileSync(seg);
    const starts = lineStarts(bytes);
    writeFileSync(seg, Buffer.concat([bytes.subarray(0, starts[2]), bytes.subarray(starts[3]!)]));
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.safeMode).toBe(true);
      expect(ledger.recovery.breaks[0]).toMatchObject({ problem: 'chain', seq: 4, offset: starts[2] });
    } finally {
      await ledger.close();
    }
  });

  it('property: any append sequence cut at any byte recovers exactly the complete records before the cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.record({ k: fc.string(), v: fc.oneof(fc.integer(), fc.string(), fc.boolean()) }), { minLength: 1, maxLength: 3 }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (batches, cutFraction) => {
          const d = dir();
          const ledger = await Ledger.open({ dir: d, clock: steppingClock() });
          for (const batch of batches) await ledger.append(batch.map((p) => ({ type: 't', payload: p })), { durable: true });
          const expected = (await recordsOf(ledger)).map((r) => ({ seq: r.seq, payload: r.payload }));
          await ledger.close();
          const seg = join(d, segmentName(1));
          const bytes = readFileSync(seg);
          const cut = Math.floor(cutFraction * bytes.length);
          truncateSync(seg, cut);
          const complete = lineStarts(bytes).concat(bytes.length).filter((s) => s > 0 && s <= cut).length;
          const recovered = await Ledger.open({ dir: d });
          try {
            expect((await recordsOf(recovered)).map((r) => ({ seq: r.seq, payload: r.payload }))).toEqual(expected.slice(0, complete));
            expect(recovered.safeMode).toBe(false);
            await recovered.append([{ type: 'after', payload: {} }], { durable: true });
          } finally {
            await recovered.close();
          }
          expect((await verifyLedger(d)).ok).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);

  it('concurrent durable appends share fsyncs (group commit) and keep call order on disk', async () => {
    const d = dir();
    const { fs, counts } = countingFs();
    const ledger = await Ledger.open({ dir: d, fs });
    const before = counts.fdatasync;
    try {
      const n = 200;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => ledger.append([{ type: 'op.transition', payload: { i } }], { durable: true })),
      );
      expect(results.map((r) => r[0]!.payload.i)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(results.map((r) => r[0]!.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      const fsyncs = counts.fdatasync - before;
      expect(fsyncs).toBeGreaterThan(0);
      expect(fsyncs).toBeLessThan(n / 10);
      expect(ledger.stats.fsyncs).toBe(fsyncs);
    } finally {
      await ledger.close();
    }
    const reopened = await Ledger.open({ dir: d });
    try {
      expect((await recordsOf(reopened)).map((r) => r.payload.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    } finally {
      await reopened.close();
    }
  });

  it('the callers of appends sharing one sync go on one per turn of the event loop, never all in the sync\'s task', async () => {
    // Each caller goes on to its next step (the gate sends the request) when its append resolves:
    // 64 of them in one task were a stall of the main process as long as all 64 steps.
    const d = dir();
    const ledger = await Ledger.open({ dir: d, fs: slowSyncFs(20) });
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    try {
      const turns = await Promise.all(Array.from({ length: 64 }, (_, i) => ledger.append([{ type: 'op.transition', payload: { i } }], { durable: true }).then(() => turn)));
      expect(ledger.stats.fsyncs, 'the appends still share syncs').toBeLessThanOrEqual(3);
      expect(new Set(turns).size, `turns the callers went on in: ${turns.join(',')}`).toBe(64);
    } finally {
      ticking = false;
      await ledger.close();
    }
  });

  it('a record appended without durability just before a durable append shares its write and sync', async () => {
    // A call's outcome record, then at once the next call's durable records: one write, one sync.
    const ledger = await Ledger.open({ dir: dir() });
    try {
      await ledger.flush();
      const before = ledger.stats;
      const outcome = ledger.append([{ type: 'op.transition', payload: { to: 'succeeded' } }]);
      const next = ledger.append([{ type: 'op.transition', payload: { to: 'executing' } }], { durable: true });
      await Promise.all([outcome, next]);
      expect(ledger.stats.writes - before.writes).toBe(1);
      expect(ledger.stats.fsyncs - before.fsyncs).toBe(1);
      expect((await recordsOf(ledger)).map((r) => r.payload.to)).toEqual(['succeeded', 'executing']);
    } finally {
      await ledger.close();
    }
  });

  it('a durable append resolves only after the fsync covering it has completed', async () => {
    const d = dir();
    const events: string[] = [];
    const slowFs: LedgerFs = {
      ...nodeLedgerFs,
      fdatasync: async (fd) => {
        events.push('fsync-start');
        await new Promise((r) => setTimeout(r, 30));
        await nodeLedgerFs.fdatasync(fd);
        events.push('fsync-done');
      },
    };
    const ledger = await Ledger.open({ dir: d, fs: slowFs });
    try {
      events.length = 0;
      await ledger.append([{ type: 'op.transition', payload: { to: 'executing' } }], { durable: true }).then(() => events.push('resolved'));
      expect(events).toEqual(['fsync-start', 'fsync-done', 'resolved']);
      events.length = 0;
      await ledger.append([{ type: 'note', payload: {} }]).then(() => events.push('resolved'));
      expect(events).toEqual(['resolved']);
    } finally {
      await ledger.close();
    }
  });

  it('a failed write fails the ledger closed: later appends are refused', async () => {
    const d = dir();
    let fail = false;
    const flaky: LedgerFs = {
      ...nodeLedgerFs,
      write: async (fd, data, pos) => {
        if (fail) throw new Error('ENOSPC: no space left on device');
        return nodeLedgerFs.write(fd, data, pos);
      },
    };
    const ledger = await Ledger.open({ dir: d, fs: flaky });
    try {
      await ledger.append([{ type: 'a', payload: {} }], { durable: true });
      fail = true;
      await expect(ledger.append([{ type: 'b', payload: {} }], { durable: true })).rejects.toThrow(/ENOSPC/);
      fail = false;
      await expect(ledger.append([{ type: 'c', payload: {} }], { durable: true })).rejects.toThrow(/previous write failed/);
    } finally {
      await ledger.close();
    }
  });

  it('rotation starts new segments by durable replace, keeps the chain verifiable across them, and keeps every segment (the history)', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d, rotateBytes: 2_000 });
    try {
      for (let i = 0; i < 120; i++) await ledger.append([{ type: 'op.transition', payload: { i, pad: 'x'.repeat(40) } }], { durable: i % 3 === 0 });
      await ledger.flush();
      expect(ledger.stats.rotations).toBeGreaterThan(3);
      expect(ledger.segments()).toHaveLength(ledger.stats.rotations + 1);
      expect(ledger.size()).toBe(120 + ledger.stats.rotations);
    } finally {
      await ledger.close();
    }
    const names = readdirSync(d).sort();
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const segments = names.filter((n) => /^ledger\.\d+\.log$/.test(n));
    expect(segments[0]).toBe(segmentName(1));
    const verdict = await verifyLedger(d);
    expect(verdict).toMatchObject({ ok: true, segments });
    // Every segment after the first starts with a checkpoint chained to the previous segment; it
    // names the segments it joins and carries no state, so its size never grows with history.
    const firstLines = segments.slice(1).map((s2) => JSON.parse(readFileSync(join(d, s2), 'utf8').split('\n')[0]!));
    for (const l of firstLines) {
      expect(l.type).toBe('ledger.checkpoint');
      expect(Object.keys(l.payload).sort()).toEqual(['previousSegment', 'segment']);
    }
    for (let i = 1; i < segments.length; i++) {
      const prev = readFileSync(join(d, segments[i - 1]!), 'utf8').replace(/\0+$/, '').trimEnd().split('\n').at(-1)!;
      expect(firstLines[i - 1].prevHash).toBe(JSON.parse(prev).checksum);
    }
    const reopened = await Ledger.open({ dir: d });
    try {
      const seqs = (await recordsOf(reopened)).map((r) => r.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
      const [next] = await reopened.append([{ type: 'after', payload: {} }], { durable: true });
      expect(next!.seq).toBe(seqs.at(-1)! + 1);
    } finally {
      await reopened.close();
    }
    expect((await verifyLedger(d)).ok).toBe(true);
  });

  it('a batch with a payload that cannot be written is refused whole and leaves no hole in the chain', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d });
    try {
      await ledger.append([{ type: 'a', payload: { ok: 1 } }], { durable: true });
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      await expect(ledger.append([{ type: 'b', payload: { ok: 2 } }, { type: 'c', payload: circular }], { durable: true })).rejects.toThrow(/not JSON-serializable/);
      await expect(ledger.append([{ type: 'd', payload: { big: 10n as unknown as number } }])).rejects.toThrow(/not JSON-serializable/);
      expect(ledger.size()).toBe(1);
      const [next] = await ledger.append([{ type: 'e', payload: {} }], { durable: true });
      expect(next!.seq).toBe(2);
    } finally {
      await ledger.close();
    }
    expect(await verifyLedger(d)).toMatchObject({ ok: true, records: 2 });
  });

  it('a rotation that crashed before its rename leaves the old segment intact and the temp file is removed', async () => {
    const d = dir();
    await writeLedger(d, 4);
    writeFileSync(join(d, `${segmentName(2)}.tmp`), '{"half":');
    const ledger = await Ledger.open({ dir: d });
    try {
      expect(ledger.recovery.removedTempFiles).toEqual([`${segmentName(2)}.tmp`]);
      expect(ledger.size()).toBe(4);
    } finally {
      await ledger.close();
    }
    expect(readdirSync(d).sort()).toEqual([segmentName(1)]);
  });

  it('recovering the same bytes twice yields the same records', async () => {
    const d = dir();
    await writeLedger(d, 30);
    appendFileSync(join(d, segmentName(1)), '{"torn');
    const copy = dir();
    copyFileSync(join(d, segmentName(1)), join(copy, segmentName(1)));
    const a = await Ledger.open({ dir: d });
    const b = await Ledger.open({ dir: copy });
    try {
      expect((await recordsOf(b))).toEqual((await recordsOf(a)));
      expect(b.recovery.tornTail).toEqual(a.recovery.tornTail);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

/** Deep-freezes a JSON-shaped value, the way the gate freezes what it journals. */
function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFrozen(v);
    Object.freeze(value);
  }
  return value;
}

describe('ledger record copies', () => {
  it('records returned by append are frozen: editing them throws and changes nothing written', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d });
    try {
      const [returned] = await ledger.append([{ type: 'op.transition', payload: { operationId: 'op-1', nested: { to: 'executing' } } }], { durable: true });
      expect(() => {
        (returned!.payload as { nested: { to: string } }).nested.to = 'succeeded';
      }).toThrow(TypeError);
      expect(() => {
        returned!.payload.operationId = 'forged';
      }).toThrow(TypeError);
      expect(() => {
        (returned as { seq: number }).seq = 99;
      }).toThrow(TypeError);
      const stored = (await recordsOf(ledger)).at(-1)!;
      expect(stored.payload).toEqual({ operationId: 'op-1', nested: { to: 'executing' } });
      expect(stored.seq).toBe(1);
    } finally {
      await ledger.close();
    }
    const reopened = await Ledger.open({ dir: d });
    try {
      expect((await recordsOf(reopened)).at(-1)!.payload).toEqual({ operationId: 'op-1', nested: { to: 'executing' } });
    } finally {
      await reopened.close();
    }
  });

  it('a payload the caller can still change is stored as a frozen copy: later edits by the caller reach neither memory nor disk', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d });
    const payload = { operationId: 'op-1', nested: { to: 'executing' }, list: [1, 2] };
    // Frozen on the outside only: the inside can still change, so it must be copied.
    const shallow = Object.freeze({ inner: { to: 'executing' } });
    try {
      const [a, b] = await ledger.append([{ type: 't', payload }, { type: 't', payload: shallow }], { durable: true });
      payload.nested.to = 'succeeded';
      payload.list.push(3);
      shallow.inner.to = 'succeeded';
      expect(a!.payload).toEqual({ operationId: 'op-1', nested: { to: 'executing' }, list: [1, 2] });
      expect(b!.payload).toEqual({ inner: { to: 'executing' } });
      expect(Object.isFrozen(a!.payload.nested)).toBe(true);
      expect((await recordsOf(ledger)).map((r) => r.payload)).toEqual([a!.payload, b!.payload]);
    } finally {
      await ledger.close();
    }
    const reopened = await Ledger.open({ dir: d });
    try {
      expect((await recordsOf(reopened)).map((r) => r.payload)).toEqual([{ operationId: 'op-1', nested: { to: 'executing' }, list: [1, 2] }, { inner: { to: 'executing' } }]);
    } finally {
      await reopened.close();
    }
  });

  it('a deep-frozen JSON payload is returned as given (no copy), and what is written equals what recovery reads back', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d });
    const payload = deepFrozen({ operationId: 'op-1', decision: { mode: 'allow', configErrors: [] as string[] }, args: { text: 'é✓ "q"\n', n: 7, ok: true, none: null } });
    try {
      const [stored] = await ledger.append([{ type: 'op.transition', payload }], { durable: true });
      expect(stored!.payload).toBe(payload);
      expect((await recordsOf(ledger)).at(-1)!.payload).toEqual(payload);
    } finally {
      await ledger.close();
    }
    const reopened = await Ledger.open({ dir: d });
    try {
      expect((await recordsOf(reopened)).at(-1)!.payload).toEqual(payload);
    } finally {
      await reopened.close();
    }
  });

  it('frozen payloads JSON would not read back unchanged (getters, Dates, undefined, -0, NaN, holes) are stored as what was written', async () => {
    const d = dir();
    const ledger = await Ledger.open({ dir: d });
    let reads = 0;
    const withGetter = Object.freeze(
      Object.defineProperty({}, 'to', {
        enumerable: true,
        get: () => (reads++ === 0 ? 'executing' : 'succeeded'),
      }) as Record<string, unknown>,
    );
    const odd = [
      withGetter,
      deepFrozen({ when: new Date(0) as unknown }),
      deepFrozen({ gone: undefined as unknown, kept: 1 }),
      deepFrozen({ zero: -0 }),
      deepFrozen({ nan: Number.NaN }),
      deepFrozen({ list: [1, , 3] as unknown[] }), // eslint-disable-line no-sparse-arrays
    ];
    try {
      const stored = await ledger.append(odd.map((payload) => ({ type: 't', payload })), { durable: true });
      const written = stored.map((r) => r.payload);
      expect(written).toEqual([{ to: 'executing' }, { when: '1970-01-01T00:00:00.000Z' }, { kept: 1 }, { zero: 0 }, { nan: null }, { list: [1, null, 3] }]);
      expect(Object.is(written[3]!.zero, 0)).toBe(true);
      // The getter now answers differently; the stored record does not.
      expect(withGetter.to).toBe('succeeded');
      expect((await recordsOf(ledger)).at(-6)!.payload).toEqual({ to: 'executing' });
    } finally {
      await ledger.close();
    }
    const reopened = await Ledger.open({ dir: d });
    try {
      expect((await recordsOf(reopened)).map((r) => r.payload)).toEqual([{ to: 'executing' }, { when: '1970-01-01T00:00:00.000Z' }, { kept: 1 }, { zero: 0 }, { nan: null }, { list: [1, null, 3] }]);
    } finally {
      await reopened.close();
    }
  });
});
