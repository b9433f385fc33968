/**
 * Ledger benchmarks (issue 4), all on the same disk in one run:
 * (a) raw `write` + `fsync` of one record-sized buffer per iteration — the physical limit;
 * (b) ledger appends, one durable append (one fsync) at a time;
 * (c) 64 concurrent operations appending durably, sharing fsyncs (group commit);
 * plus recovery time of a 100,000-record log.
 * Targets: (b) ≥ 0.8 × (a); (c) ≥ 5 × (b); recovery < 1 s.
 */
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../electron/core/ledger/ledger';
import { encodeRecord, GENESIS_HASH } from '../../electron/core/ledger/format';
import type { BenchModule } from './harness';

const PHASE_MS = Number(process.env.WARDEN_BENCH_PHASE_MS ?? 500);
/** Phases alternate (a, b, c, a, b, c, …) and medians are reported: the disk is shared and noisy. */
const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 7);
const RECOVERY_RECORDS = 100_000;

/** A typical `executing` transition payload. */
function payload(i: number): Record<string, unknown> {
  return { operationId: `op-${i.toString(36).padStart(8, '0')}`, from: 'approved', to: 'executing', reason: 'approved by policy', actor: 'gate', fingerprint: 'f'.repeat(64) };
}

const recordSize = encodeRecord(1, Date.now(), 'op.transition', payload(1), GENESIS_HASH).line.length;

function cbp<T>(run: (done: (err: NodeJS.ErrnoException | null, v?: T) => void) => void): Promise<T> {
  return new Promise((res, rej) => run((e, v) => (e ? rej(e) : res(v as T))));
}

async function rawLoop(dir: string, round: number): Promise<number> {
  const fd = fs.openSync(join(dir, `raw-${round}.bin`), 'w');
  const buf = Buffer.alloc(recordSize, 0x61);
  let n = 0;
  let pos = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < PHASE_MS) {
      await cbp<number>((d) => fs.write(fd, buf, 0, buf.length, pos, d));
      await cbp<void>((d) => fs.fsync(fd, d));
      pos += buf.length;
      n++;
    }
  } finally {
    fs.closeSync(fd);
  }
  return n / ((performance.now() - start) / 1000);
}

async function sequentialLedger(dir: string, round: number): Promise<number> {
  const ledger = await Ledger.open({ dir: join(dir, `seq-${round}`) });
  let n = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < PHASE_MS) {
      await ledger.append([{ type: 'op.transition', payload: payload(n) }], { durable: true });
      n++;
    }
  } finally {
    await ledger.close();
  }
  return n / ((performance.now() - start) / 1000);
}

async function concurrentLedger(dir: string, round: number): Promise<{ opsPerSec: number; appendsPerFsync: number }> {
  const ledger = await Ledger.open({ dir: join(dir, `conc-${round}`) });
  let n = 0;
  const start = performance.now();
  const worker = async (w: number): Promise<void> => {
    while (performance.now() - start < PHASE_MS) {
      await ledger.append([{ type: 'op.transition', payload: payload(w * 1_000_000 + n) }], { durable: true });
      n++;
    }
  };
  try {
    await Promise.all(Array.from({ length: 64 }, (_, w) => worker(w)));
  } finally {
    await ledger.close();
  }
  const opsPerSec = n / ((performance.now() - start) / 1000);
  return { opsPerSec, appendsPerFsync: n / Math.max(1, ledger.stats.fsyncs) };
}

async function recovery(dir: string): Promise<number> {
  const d = join(dir, 'recovery');
  const writer = await Ledger.open({ dir: d, rotateBytes: 1024 * 1024 * 1024 });
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < RECOVERY_RECORDS; i++) pending.push(writer.append([{ type: 'op.transition', payload: payload(i) }]));
  await Promise.all(pending);
  await writer.close();
  const start = performance.now();
  const reader = await Ledger.open({ dir: d });
  const ms = performance.now() - start;
  if (reader.size() !== RECOVERY_RECORDS) throw new Error(`recovered ${reader.size()} records, expected ${RECOVERY_RECORDS}`);
  await reader.close();
  return ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const bench: BenchModule = {
  title: `Ledger durability and recovery (record ${recordSize} bytes, medians of ${ROUNDS} alternating rounds of ${PHASE_MS} ms)`,
  async run(report) {
    const dir = mkdtempSync(join(tmpdir(), 'warden-bench-ledger-'));
    try {
      const raws: number[] = [];
      const seqs: number[] = [];
      const concs: Array<{ opsPerSec: number; appendsPerFsync: number }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        raws.push(await rawLoop(dir, round));
        seqs.push(await sequentialLedger(dir, round));
        concs.push(await concurrentLedger(dir, round));
      }
      const raw = median(raws);
      const seq = median(seqs);
      const conc = { opsPerSec: median(concs.map((c) => c.opsPerSec)), appendsPerFsync: median(concs.map((c) => c.appendsPerFsync)) };
      report({ name: 'ledger.raw-write-fsync', value: raw, unit: 'ops/s' });
      report({ name: 'ledger.append-durable-sequential', value: seq, unit: 'ops/s', baseline: 'ledger.raw-write-fsync', ratio: seq / raw, target: 'ratio >= 0.8', met: seq / raw >= 0.8 });
      report({ name: 'ledger.append-durable-64-concurrent', value: conc.opsPerSec, unit: 'ops/s', baseline: 'ledger.raw-write-fsync', ratio: conc.opsPerSec / raw });
      report({
        name: 'ledger.group-commit-vs-sequential',
        value: conc.opsPerSec / seq,
        unit: 'x',
        baseline: 'ledger.append-durable-sequential',
        ratio: conc.opsPerSec / seq,
        target: 'ratio >= 5',
        met: conc.opsPerSec / seq >= 5,
      });
      report({ name: 'ledger.group-commit-appends-per-fsync', value: conc.appendsPerFsync, unit: 'appends/fsync' });
      const ms = await recovery(dir);
      report({ name: 'ledger.recovery-100k', value: ms, unit: 'ms', target: '< 1000 ms', met: ms < 1000 });
      report({ name: 'ledger.recovery-100k-throughput', value: RECOVERY_RECORDS / (ms / 1000), unit: 'records/s' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
