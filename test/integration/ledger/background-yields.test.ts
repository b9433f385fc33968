/**
 * Long background work on the history never holds the main thread (Electron's main process also
 * runs every window's input and IPC): the full verification of the chain and the exports of the
 * Activity rows and of the audit log hand the event loop back every few dozen records, however
 * long the history.
 *
 * Through the code the app runs: `LedgerService.verify` and `LedgerService.exportAudit` reading
 * through the ledger's file-system port (wrapped here to see each read), and the
 * `activity:export-calls` handler on the real indexed history, its rows named through the
 * `CallNames` port (counted here). A ticker
 * re-queued with `setImmediate` runs once per turn of the event loop, so what happens between two
 * of its runs happened without yielding. Counting records and rows, not milliseconds: the shared
 * machine's load stretches any timing, a count it cannot.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityCallHandlers, type CallNames } from '../../../electron/core/ledger/activity-calls';
import { nodeLedgerFs, type LedgerFs } from '../../../electron/core/ledger/ledger-fs';
import { LedgerService } from '../../../electron/core/ledger/service';
import { ensureHistory } from '../../bench/activity-history';
import { recordBytesOf, tempDir } from '../../unit/ledger/helpers';

const CALLS = 2000;
const t = tempDir('warden-yields-');
const ledgerDir = join(t.dir, 'ledger');
let service: LedgerService;
/** The turn of the event loop we are in (advanced by the ticker), and what the ledger read in which turn. */
let turn = 0;
let reads: Array<{ turn: number; bytes: number; whole?: string }> = [];
const seenFs: LedgerFs = {
  ...nodeLedgerFs,
  read: async (fd, length, position) => {
    const got = await nodeLedgerFs.read(fd, length, position);
    reads.push({ turn, bytes: got.length });
    return got;
  },
  readFile: async (path) => {
    const got = await nodeLedgerFs.readFile(path);
    reads.push({ turn, bytes: got.length, whole: path });
    return got;
  },
};

beforeAll(async () => {
  await ensureHistory(ledgerDir, CALLS, () => undefined);
  service = await LedgerService.open({ dir: ledgerDir, fs: seenFs, verifyInBackground: false });
  await service.history.operationCount();
}, 120_000);

afterAll(async () => {
  await service?.close();
  t.cleanup();
});

/** Runs `work` while a ticker advances `turn` once per turn of the event loop. */
async function ticking<T>(work: () => Promise<T>, onTurn: () => void = () => undefined): Promise<T> {
  let running = true;
  const tick = () => {
    onTurn();
    turn++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return await work();
  } finally {
    running = false;
  }
}

describe('background work on the history yields to the window', () => {
  it('the full verification reads and checks the ledger 32 KiB at a time, a turn of the event loop apart, never a whole segment', async () => {
    const recordBytes = readdirSync(ledgerDir)
      .filter((n) => n.endsWith('.log'))
      .reduce((sum, n) => sum + recordBytesOf(join(ledgerDir, n)).length, 0);
    reads = [];
    const result = await ticking(() => service.verify());
    expect(result.breaks).toBe(0);
    expect(result.records).toBeGreaterThan(CALLS * 3);
    const whole = reads.filter((r) => r.whole);
    expect(whole, `read whole: ${whole.map((r) => `${r.whole} (${(r.bytes / 1e6).toFixed(1)} MB)`).join(', ')}`).toEqual([]);
    expect(Math.max(...reads.map((r) => r.bytes))).toBeLessThanOrEqual(32 * 1024);
    expect(reads.reduce((sum, r) => sum + r.bytes, 0)).toBeGreaterThanOrEqual(recordBytes);
    // Each read's records are checked before the next read is asked for, in a later turn.
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.turn).toBeGreaterThan(reads[i - 1]!.turn);
  });

  it('an export of every call names and writes at most 25 calls between two turns of the event loop', async () => {
    let named = 0;
    let most = 0;
    const names: CallNames = {
      server: () => {
        named++;
        return undefined;
      },
      account: () => undefined,
      inputSchema: () => undefined,
      conversation: () => undefined,
    };
    const handlers = activityCallHandlers({ history: service.history, names, fileDialogs: { openFile: async () => null, saveFile: async () => join(t.dir, 'export.jsonl') } });
    const r = await ticking(
      async () => handlers['activity:export-calls']({ format: 'jsonl', filter: {} }),
      () => {
        most = Math.max(most, named);
        named = 0;
      },
    );
    expect(r.rows).toBe(CALLS);
    expect(most, `${most} calls were named in one turn`).toBeLessThanOrEqual(25);
  });

  it('an export of the audit log reads and writes at most about 100 records between two turns of the event loop', async () => {
    reads = [];
    const r = await ticking(() => service.exportAudit('jsonl', {}, join(t.dir, 'audit.jsonl')));
    expect(r.rows).toBeGreaterThan(CALLS * 3);
    // Records decoded in one turn are at most what the reads completing in it brought.
    const perTurn = new Map<number, number>();
    for (const x of reads) perTurn.set(x.turn, (perTurn.get(x.turn) ?? 0) + x.bytes);
    const most = Math.max(...perTurn.values());
    const recordSize = reads.reduce((sum, x) => sum + x.bytes, 0) / r.rows;
    expect(most / recordSize, `${(most / 1024).toFixed(0)} KiB of records (about ${(most / recordSize).toFixed(0)}) read in one turn`).toBeLessThan(150);
  });
});
