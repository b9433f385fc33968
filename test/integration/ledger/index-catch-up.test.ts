/**
 * A start without a current index: the app must not wait for the index to be rebuilt. Start
 * reads the last segment only; the index catches up in the background while calls go on; every
 * history read waits for it, so recovery and idempotency answer exactly as with a current index.
 *
 * Each test holds back every read of the earlier segments (the file-system port the ledger is
 * given) and proves that start finishes while they are held: it cannot have read them.
 */
import { rmSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../electron/core/ledger/ledger';
import { nodeLedgerFs, type LedgerFs } from '../../../electron/core/ledger/ledger-fs';
import { LedgerProjections } from '../../../electron/core/ledger/projections';
import { LedgerService } from '../../../electron/core/ledger/service';
import { segmentName, segmentNumbers } from '../../../electron/core/ledger/segments';
import { projectionsOf, recordsIn, tempDir } from '../../unit/ledger/helpers';
import { allowingGate, callEntries, callTemplates } from './call-records';

type Shapes = Awaited<ReturnType<typeof callTemplates>>;
let shapes: Shapes;
let cleanup: (() => void) | null = null;

beforeAll(async () => {
  shapes = await callTemplates();
});

afterEach(() => {
  cleanup?.();
  cleanup = null;
});

const ROTATE = 64 * 1024;

/** Writes `before`, then `count` finished calls, then `after` into a ledger of `rotate`-byte segments. */
async function writeHistory(dir: string, count: number, before: Shapes = [], after: Shapes = [], rotate = ROTATE): Promise<void> {
  const ledger = await Ledger.open({ dir, rotateBytes: rotate });
  if (before.length) await ledger.append(before, { durable: true });
  for (let i = 0; i < count; i += 50) {
    const entries = [];
    for (let k = i; k < Math.min(count, i + 50); k++) entries.push(...callEntries(shapes, `op-${k}`));
    await ledger.append(entries, { durable: true });
  }
  if (after.length) await ledger.append(after, { durable: true });
  await ledger.close();
  for (const name of readdirSync(dir)) if (name.startsWith('index.sqlite')) rmSync(join(dir, name));
}

/** The file-system port, with every read of a segment before the last (whole, or opened to read) held until `release`. */
function holdingEarlierSegments(dir: string): { fs: LedgerFs; release: () => void; heldReads: () => number } {
  const last = segmentName(segmentNumbers(readdirSync(dir)).at(-1)!);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held = 0;
  const fs: LedgerFs = {
    ...nodeLedgerFs,
    readFile: async (path) => {
      if (/ledger\.\d+\.log$/.test(path) && !path.endsWith(last)) {
        held++;
        await released;
      }
      return nodeLedgerFs.readFile(path);
    },
    open: async (path, mode) => {
      if (mode === 'r' && /ledger\.\d+\.log$/.test(path) && !path.endsWith(last)) {
        held++;
        await released;
      }
      return nodeLedgerFs.open(path, mode);
    },
  };
  return { fs, release, heldReads: () => held };
}

/**
 * The file-system port, with every opening of a segment to read it held until `release` (what
 * the catch-up reads a segment through; start reads the end of the log whole, and appends
 * through the segment it opened to write).
 */
function holdingSegmentReads(): { fs: LedgerFs; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const fs: LedgerFs = {
    ...nodeLedgerFs,
    open: async (path, mode) => {
      if (mode === 'r' && /ledger\.\d+\.log$/.test(path)) await released;
      return nodeLedgerFs.open(path, mode);
    },
  };
  return { fs, release };
}

describe('start without a current index', () => {
  it('a history in one segment is not indexed inside open: start reads its end, calls are decided at once, and the index catches up in the background to exactly what the records say', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    // About 1.5 MiB in one segment: more than start reads of it.
    await writeHistory(t.dir, 1500, [], [], 32 * 1024 * 1024);
    expect(segmentNumbers(readdirSync(t.dir))).toEqual([1]);
    // Start's own read of the segment goes through; the catch-up's reads of it are held.
    const hold = holdingSegmentReads();
    const service = await LedgerService.open({ dir: t.dir, fs: hold.fs, verifyInBackground: false });
    const sent: string[] = [];
    const gate = allowingGate(service.ledger, service.history, sent);
    try {
      expect(service.indexing).toBe(0);
      await service.recoverOperations(gate);
      const op = await gate.request({ source: 'user', serverId: 'effects', accountId: 'work', toolName: 'perform', arguments: { n: 2 }, operationId: gate.newOperationId() });
      expect(op.state).toBe('succeeded');
      expect(service.indexing).not.toBeNull();
      const early = service.history.operation('op-0');
      hold.release();
      expect((await early)?.state).toBe('succeeded');
      await service.whenIndexed();
      const oracle = LedgerProjections.fromRecords(await recordsIn(t.dir));
      expect(oracle.operationCount()).toBe(1501);
      const byId = <T extends { operationId: string }>(xs: T[]) => [...xs].sort((a, b) => (a.operationId < b.operationId ? -1 : 1));
      expect(byId(await projectionsOf(service).operations())).toEqual(byId(oracle.operations()));
      expect(await projectionsOf(service).audit()).toEqual(oracle.audit());
      expect(sent).toEqual([op.operationId]);
    } finally {
      hold.release();
      gate.close();
      await service.close();
    }
  });


  it('opens while every earlier segment is unread, shows indexing progress, and once caught up answers exactly what the records say, records appended meanwhile included', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    await writeHistory(t.dir, 600);
    expect(segmentNumbers(readdirSync(t.dir)).length).toBeGreaterThan(5);
    const hold = holdingEarlierSegments(t.dir);
    const service = await LedgerService.open({ dir: t.dir, fs: hold.fs, verifyInBackground: false });
    try {
      // Start is done, and the earlier segments were not read (their reads are still held).
      expect(service.indexing).toBe(0);
      expect(service.status().indexing).toBe(0);
      expect(hold.heldReads()).toBeLessThanOrEqual(1);
      const early = service.history.operation('op-0');
      // Calls go on while the index catches up.
      for (let i = 0; i < 40; i++) await service.ledger.append(callEntries(shapes, `new-${i}`), { durable: i % 2 === 0 });
      hold.release();
      expect((await early)?.state).toBe('succeeded');
      await service.whenIndexed();
      expect(service.indexing).toBeNull();
      expect(service.status().indexing).toBeUndefined();
      for (let i = 40; i < 60; i++) await service.ledger.append(callEntries(shapes, `new-${i}`), { durable: true });
      const oracle = LedgerProjections.fromRecords(await recordsIn(t.dir));
      expect(oracle.operationCount()).toBe(660);
      const byId = <T extends { operationId: string }>(xs: T[]) => [...xs].sort((a, b) => (a.operationId < b.operationId ? -1 : 1));
      expect(byId(await projectionsOf(service).operations())).toEqual(byId(oracle.operations()));
      // Every record indexed once: the audit view (one row per record) equals the fold's.
      expect(await projectionsOf(service).audit()).toEqual(oracle.audit());
    } finally {
      hold.release();
      await service.close();
    }
    // And the next start finds the index current: nothing to catch up.
    const again = await LedgerService.open({ dir: t.dir, verifyInBackground: false });
    try {
      expect(again.indexing).toBeNull();
      expect(await again.history.operationCount()).toBe(660);
    } finally {
      await again.close();
    }
  });

  it('settles an interrupted call in the last segment at start and one whose records are all in earlier segments once caught up (outcome unknown); neither, nor a finished id asked again, is ever sent', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    await writeHistory(t.dir, 500, callEntries(shapes, 'old-executing', 'executing'), callEntries(shapes, 'new-executing', 'executing'));
    const hold = holdingEarlierSegments(t.dir);
    const service = await LedgerService.open({ dir: t.dir, fs: hold.fs, verifyInBackground: false });
    const sent: string[] = [];
    const gate = allowingGate(service.ledger, service.history, sent);
    try {
      const report = await service.recoverOperations(gate);
      expect(report.outcomeUnknown).toEqual(['new-executing']);
      expect(service.indexing).not.toBeNull();
      // The same ids asked for again while the index catches up: they wait for it.
      const request = (id: string) => gate.request({ source: 'user', serverId: 'effects', accountId: 'work', toolName: 'perform', arguments: { n: 1 }, operationId: id }).then((op) => op.state, (e: Error) => `refused: ${e.message}`);
      const asked = ['op-3', 'new-executing', 'old-executing'].map(request);
      hold.release();
      const [finished, newer, older] = await Promise.all(asked);
      expect(finished).toBe('succeeded');
      expect(newer).toBe('outcome_unknown');
      // Still executing in the records until recovery settles it, which refuses; or settled already.
      expect(older === 'outcome_unknown' || /being recovered/.test(older!)).toBe(true);
      await service.whenRecovered();
      expect((await service.history.operation('old-executing'))?.state).toBe('outcome_unknown');
      expect((await service.history.operation('new-executing'))?.state).toBe('outcome_unknown');
      expect(service.lastRecoveryReport?.outcomeUnknown.sort()).toEqual(['new-executing', 'old-executing']);
      expect(await request('old-executing')).toBe('outcome_unknown');
      expect(sent).toEqual([]);
      // Settled once each: one outcome_unknown transition per operation in the records.
      const settlements = (await recordsIn(t.dir)).filter((r) => r.type === 'op.transition' && r.payload.to === 'outcome_unknown');
      expect(settlements.map((r) => r.payload.operationId).sort()).toEqual(['new-executing', 'old-executing']);
    } finally {
      hold.release();
      gate.close();
      await service.close();
    }
  });
  it('reads only the end of the log at start: a call interrupted before that end (even in the last segment) is settled once caught up, exactly once, and never sent', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const after = [...callEntries(shapes, 'mid-executing', 'executing'), ...callEntries(shapes, 'late-1'), ...callEntries(shapes, 'late-2'), ...callEntries(shapes, 'late-3')];
    await writeHistory(t.dir, 300, [], after);
    const hold = holdingEarlierSegments(t.dir);
    const service = await LedgerService.open({ dir: t.dir, fs: hold.fs, verifyInBackground: false, startTailBytes: 2048 });
    const sent: string[] = [];
    const gate = allowingGate(service.ledger, service.history, sent);
    try {
      const report = await service.recoverOperations(gate);
      expect(report.outcomeUnknown).toEqual([]);
      hold.release();
      await service.whenRecovered();
      expect((await service.history.operation('mid-executing'))?.state).toBe('outcome_unknown');
      expect(service.lastRecoveryReport?.outcomeUnknown).toEqual(['mid-executing']);
      expect((await service.history.operation('late-3'))?.state).toBe('succeeded');
      expect(sent).toEqual([]);
      const settlements = (await recordsIn(t.dir)).filter((r) => r.type === 'op.transition' && r.payload.to === 'outcome_unknown');
      expect(settlements.map((r) => r.payload.operationId)).toEqual(['mid-executing']);
    } finally {
      hold.release();
      gate.close();
      await service.close();
    }
  });
});
