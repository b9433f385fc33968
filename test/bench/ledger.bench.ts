/**
 * Ledger benchmarks, all on the same disk in one run:
 * (a) raw `write` + `fsync` of one record-sized buffer per iteration — the physical limit;
 * (b) ledger appends, one durable append (one fsync) at a time;
 * (c) 64 concurrent operations appending durably, sharing fsyncs (group commit);
 * plus recovery time of a 100,000-record log.
 * Targets: (b) ≥ 0.8 × (a); (c) ≥ 5 × (b); recovery < 1 s.
 *
 * The disk is shared with other work and its fsync latency swings by 10×, so (a), (b) and (c)
 * run interleaved in short slices (a, b, c, b, c, a, …) and each rate is total operations over
 * total time of its slices: all three see the same interference. Recovery is best of 3.
 */
import * as fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../electron/core/ledger/ledger';
import { encodeRecord, GENESIS_HASH } from '../../electron/core/ledger/format';
import type { BenchModule } from './harness';

const SLICE_MS = Number(process.env.WARDEN_BENCH_SLICE_MS ?? 100);
const SLICES = Number(process.env.WARDEN_BENCH_SLICES ?? 30);
const RECOVERY_RECORDS = 100_000;

/** A typical `executing` transition payload. */
function payload(i: number): Record<string, unknown> {
  return { operationId: `op-${i.toString(36).padStart(8, '0')}`, from: 'approved', to: 'executing', reason: 'approved by policy', actor: 'gate', fingerprint: 'f'.repeat(64) };
}

const recordSize = encodeRecord(1, Date.now(), 'op.transition', payload(1), GENESIS_HASH).line.length;

function cbp<T>(run: (done: (err: NodeJS.ErrnoException | null, v?: T) => void) => void): Promise<T> {
  return new Promise((res, rej) => run((e, v) => (e ? rej(e) : res(v as T))));
}

interface Tally {
  ops: number;
  ms: number;
}

async function recovery(dir: string): Promise<number> {
  const d = join(dir, 'recovery');
  const writer = await Ledger.open({ dir: d, rotateBytes: 1024 * 1024 * 1024 });
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < RECOVERY_RECORDS; i++) pending.push(writer.append([{ type: 'op.transition', payload: payload(i) }]));
  await Promise.all(pending);
  await writer.close();
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const start = performance.now();
    const reader = await Ledger.open({ dir: d });
    const ms = performance.now() - start;
    if (reader.size() !== RECOVERY_RECORDS) throw new Error(`recovered ${reader.size()} records, expected ${RECOVERY_RECORDS}`);
    await reader.close();
    best = Math.min(best, ms);
  }
  return best;
}

const bench: BenchModule = {
  title: `Ledger durability and recovery (record ${recordSize} bytes, ${SLICES} interleaved slices of ${SLICE_MS} ms per mode)`,
  async run(report) {
    const dir = mkdtempSync(join(tmpdir(), 'warden-bench-ledger-'));
    const rawFd = fs.openSync(join(dir, 'raw.bin'), 'w');
    const seqLedger = await Ledger.open({ dir: join(dir, 'seq') });
    const concLedger = await Ledger.open({ dir: join(dir, 'conc') });
    try {
      const buf = Buffer.alloc(recordSize, 0x61);
      let rawPos = 0;
      let n = 0;
      const tallies = { raw: { ops: 0, ms: 0 }, seq: { ops: 0, ms: 0 }, conc: { ops: 0, ms: 0 } } satisfies Record<string, Tally>;
      const phases: Array<[keyof typeof tallies, (until: number) => Promise<number>]> = [
        [
          'raw',
          async (until) => {
            let ops = 0;
            while (performance.now() < until) {
              await cbp<number>((d) => fs.write(rawFd, buf, 0, buf.length, rawPos, d));
              await cbp<void>((d) => fs.fsync(rawFd, d));
              rawPos += buf.length;
              ops++;
            }
            return ops;
          },
        ],
        [
          'seq',
          async (until) => {
            let ops = 0;
            while (performance.now() < until) {
              await seqLedger.append([{ type: 'op.transition', payload: payload(n++) }], { durable: true });
              ops++;
            }
            return ops;
          },
        ],
        [
          'conc',
          async (until) => {
            let ops = 0;
            const worker = async (): Promise<void> => {
              while (performance.now() < until) {
                await concLedger.append([{ type: 'op.transition', payload: payload(n++) }], { durable: true });
                ops++;
              }
            };
            await Promise.all(Array.from({ length: 64 }, worker));
            return ops;
          },
        ],
      ];
      for (let slice = 0; slice < SLICES; slice++) {
        for (let k = 0; k < phases.length; k++) {
          const [name, run] = phases[(slice + k) % phases.length]!;
          const start = performance.now();
          const ops = await run(start + SLICE_MS);
          tallies[name].ops += ops;
          tallies[name].ms += performance.now() - start;
        }
      }
      const rate = (t: Tally): number => t.ops / (t.ms / 1000);
      const raw = rate(tallies.raw);
      const seq = rate(tallies.seq);
      const conc = rate(tallies.conc);
      report({ name: 'ledger.raw-write-fsync', value: raw, unit: 'ops/s' });
      report({ name: 'ledger.append-durable-sequential', value: seq, unit: 'ops/s', baseline: 'ledger.raw-write-fsync', ratio: seq / raw, target: 'ratio >= 0.8', met: seq / raw >= 0.8 });
      report({ name: 'ledger.append-durable-64-concurrent', value: conc, unit: 'ops/s', baseline: 'ledger.raw-write-fsync', ratio: conc / raw });
      report({ name: 'ledger.group-commit-vs-sequential', value: conc / seq, unit: 'x', baseline: 'ledger.append-durable-sequential', ratio: conc / seq, target: 'ratio >= 5', met: conc / seq >= 5 });
      report({ name: 'ledger.group-commit-appends-per-fsync', value: concLedger.stats.appendCalls / Math.max(1, concLedger.stats.fsyncs), unit: 'appends/fsync' });
      const ms = await recovery(dir);
      report({ name: 'ledger.recovery-100k', value: ms, unit: 'ms', target: '< 1000 ms', met: ms < 1000 });
      report({ name: 'ledger.recovery-100k-throughput', value: RECOVERY_RECORDS / (ms / 1000), unit: 'records/s' });
    } finally {
      fs.closeSync(rawFd);
      await seqLedger.close();
      await concLedger.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
