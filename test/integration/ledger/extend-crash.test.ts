/**
 * SIGKILL while a preallocated segment is being extended: a child appends durably in a loop with
 * a preallocation chunk smaller than its records (so almost every append first writes zeros past
 * the end of the file) and the parent kills it at random moments. After every kill, recovery must
 * keep every record the child saw acknowledged as durable, never start in safe mode (a kill only
 * tears the tail), and leave a chain that verifies. The seed is printed;
 * `WARDEN_EXTEND_CRASH_SEED=<n>` reproduces a run's kill delays.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../electron/core/ledger/ledger';
import { verifyLedger } from '../../../electron/core/ledger/verify';
import { prng } from '../../helpers/prng';
import { recordsOf } from '../../unit/ledger/helpers';

const root = resolve(import.meta.dirname, '../../..');
const KILLS = Number(process.env.WARDEN_EXTEND_CRASH_KILLS ?? 40);
const SEED = Number(process.env.WARDEN_EXTEND_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** Chunks smaller than most records (every append extends) and one that straddles pages. */
const CHUNKS = [700, 4096 + 13];

let work: string;
let bundle: string;
const live = new Set<ChildProcess>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'warden-extend-crash-'));
  bundle = join(work, 'append-child.mjs');
  await build({ entryPoints: [join(root, 'test/integration/ledger/append-child.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' });
});

afterAll(() => {
  for (const child of live) child.kill('SIGKILL');
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('extension crash test', () => {
  it(`after ${KILLS} SIGKILLs during appends that extend the segment, every acknowledged record survives and no kill looks like tampering`, async () => {
    console.log(`extension crash test seed: ${SEED} (reproduce with WARDEN_EXTEND_CRASH_SEED=${SEED})`);
    const random = prng(SEED);
    let kills = 0;
    let tornTails = 0;
    let acknowledged = 0;
    for (const [laneNo, chunk] of CHUNKS.entries()) {
      const ledgerDir = join(work, `lane-${laneNo}`);
      let maxAcked = 0;
      for (let run = 0; run < KILLS / CHUNKS.length; run++) {
        const where = `seed ${SEED} chunk ${chunk} run ${run}`;
        const child = spawn(process.execPath, [bundle], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, WARDEN_LEDGER_DIR: ledgerDir, PREALLOCATE_BYTES: String(chunk), SEED: String(Math.floor(random() * 2 ** 31)) },
        });
        live.add(child);
        let stdout = '';
        let stderr = '';
        child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
        const ready = new Promise<void>((res) => {
          child.stdout!.on('data', (d: Buffer) => {
            stdout += d.toString();
            if (stdout.includes('ready\n')) res();
          });
          void exited.then(() => res());
        });
        await ready;
        await Promise.race([new Promise((r) => setTimeout(r, 20 + random() * 120)), exited]);
        child.kill('SIGKILL');
        const { signal, code } = await exited;
        live.delete(child);
        expect(signal, `${where}: child ended on its own (code ${code}):\n${stderr.slice(-2000)}`).toBe('SIGKILL');
        kills++;
        // Only complete lines: the kill may cut the last one.
        for (const m of stdout.matchAll(/^acked (\d+)$/gm)) maxAcked = Math.max(maxAcked, Number(m[1]));
        acknowledged += (stdout.match(/^acked \d+$/gm) ?? []).length;

        const ledger = await Ledger.open({ dir: ledgerDir, preallocateBytes: chunk, rotateBytes: 512 * 1024 });
        try {
          if (ledger.recovery.tornTail) tornTails++;
          expect(ledger.safeMode, `${where}: a kill must never look like tampering: ${JSON.stringify(ledger.recovery.breaks)}`).toBe(false);
          const seqs = (await recordsOf(ledger)).map((r) => r.seq);
          expect(seqs.at(-1) ?? 0, `${where}: acknowledged seq ${maxAcked} was lost`).toBeGreaterThanOrEqual(maxAcked);
          expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i));
        } finally {
          await ledger.close();
        }
        expect((await verifyLedger(ledgerDir)).firstBroken, `${where}: chain broken after recovery`).toBeNull();
      }
    }
    console.log(`extension crash test seed ${SEED}: ${kills} kills, ${acknowledged} durable appends acknowledged, ${tornTails} torn tails dropped`);
    expect(kills).toBe(KILLS);
    expect(acknowledged).toBeGreaterThan(KILLS); // the workload really ran between kills
  }, 300_000);
});
