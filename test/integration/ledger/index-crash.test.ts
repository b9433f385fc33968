/**
 * Kills during index updates: a child brings the index of a ledger with thousands of operations up
 * to date (a rebuild: one index transaction after another) and is SIGKILLed at random moments of
 * it. After every kill the index is opened again as the app opens it, and what it answers
 * (operations, states, the whole audit view) must equal a fold of every record on disk. The
 * index's committed position is read before that open: kills that left it part-way prove the kill
 * landed while the index was being written.
 *
 * The second test does the same for the background catch-up (a ledger of many segments, so start
 * does not rebuild the index but catches it up afterwards), killing the child at a random point of
 * the catch-up while it keeps appending calls: the next start must resume it, lose no record
 * appended meanwhile and index none twice.
 *
 * `WARDEN_INDEX_CRASH_SEED=<n>` reproduces a run's kill moments.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../electron/core/ledger/ledger';
import { LedgerProjections } from '../../../electron/core/ledger/projections';
import { LedgerService } from '../../../electron/core/ledger/service';
import { openSqlite } from '../../../electron/core/ledger/sqlite';
import { prng } from '../../helpers/prng';
import { projectionsOf, recordsIn } from '../../unit/ledger/helpers';
import { callTemplates } from './call-records';

const root = resolve(import.meta.dirname, '../../..');
const OPERATIONS = 4000;
const KILLS = 8;
const SEED = Number(process.env.WARDEN_INDEX_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

let work: string;
let childBundle: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'warden-index-crash-'));
  childBundle = join(work, 'index-crash-child.mjs');
  const banner = { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" };
  await build({ entryPoints: [join(root, 'test/integration/ledger/index-crash-child.ts')], outfile: childBundle, bundle: true, platform: 'node', format: 'esm', target: 'node20', banner, logLevel: 'error' });
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Reads the index's committed position straight from its file (what the next start resumes after). */
async function committedSeq(dir: string): Promise<number> {
  if (!existsSync(join(dir, 'index.sqlite'))) return 0;
  const db = await openSqlite(join(dir, 'index.sqlite'));
  try {
    const row = await db.get<{ v: string }>("SELECT v FROM meta WHERE k = 'position'").catch(() => undefined);
    return row ? (JSON.parse(row.v) as { seq: number }).seq : 0;
  } finally {
    await db.close();
  }
}

/**
 * Starts the child on `dir`; resolves with how it ended and how long it ran. It is killed after
 * `killAfterMs`, or (`killAt`) as soon as its output matches.
 */
function runChild(dir: string, killAfterMs: number | null, killAt?: { when: (stdout: string) => boolean; env: Record<string, string> }): Promise<{ signal: NodeJS.Signals | null; code: number | null; ms: number; stderr: string }> {
  const started = Date.now();
  const child = spawn(process.execPath, [childBundle], { env: { ...process.env, ...killAt?.env, LEDGER_DIR: dir, NODE_PATH: join(root, 'node_modules') }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (killAt?.when(stdout)) child.kill('SIGKILL');
  });
  const timer = killAfterMs === null ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((res) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      res({ code, signal, ms: Date.now() - started, stderr });
    }),
  );
}

/** Writes OPERATIONS calls (every record shape a call leaves) into a new ledger at `dir`. */
async function seedLedger(dir: string, shapes: Awaited<ReturnType<typeof callTemplates>>, rotateBytes?: number): Promise<void> {
  const ledger = await Ledger.open({ dir, ...(rotateBytes !== undefined ? { rotateBytes } : {}) });
  for (let i = 0; i < OPERATIONS; i += 100) {
    const entries = [];
    for (let k = i; k < i + 100; k++) for (const s of shapes) entries.push({ type: s.type, payload: { ...s.payload, operationId: `op-${k}` } });
    await ledger.append(entries, { durable: true });
  }
  await ledger.close();
}

/** Deletes the index (and its journal files), as a lost or never-built one. */
function dropIndex(dir: string): void {
  for (const name of readdirSync(dir)) if (name.startsWith('index.sqlite')) rmSync(join(dir, name));
}

/**
 * Opens the ledger at `dir` as the app does (waiting for a background catch-up when asked) and
 * checks that its index answers what a fold of the records (`oracle`) says: no safe mode, the same
 * operations, the same audit view.
 */
async function expectIndexMatches(dir: string, oracle: LedgerProjections, where: string, waitForCatchUp: boolean): Promise<void> {
  const service = await LedgerService.open({ dir, verifyInBackground: false });
  try {
    if (waitForCatchUp) await service.whenIndexed();
    expect(service.ledger.safeMode, where).toBe(false);
    const byId = <T extends { operationId: string }>(xs: T[]) => [...xs].sort((a, b) => (a.operationId < b.operationId ? -1 : 1));
    expect(byId(await projectionsOf(service).operations()), `${where}: operations`).toEqual(byId(oracle.operations()));
    expect(await projectionsOf(service).audit(), `${where}: audit view`).toEqual(oracle.audit());
  } finally {
    await service.close();
  }
}

describe('index crash test', () => {
  it(`after ${KILLS} SIGKILLs while the index is being written, the reopened index answers exactly what the records on disk say`, async () => {
    const dir = join(work, 'ledger');
    const shapes = await callTemplates();
    await seedLedger(dir, shapes);
    const records = await recordsIn(dir);
    const last = records.at(-1)!.seq;
    const oracle = LedgerProjections.fromRecords(records);
    expect(oracle.operationCount()).toBe(OPERATIONS);

    // How long a whole rebuild takes here, so kills can be spread over it.
    dropIndex(dir);
    const whole = await runChild(dir, null);
    expect(whole.code, whole.stderr).toBe(0);
    const random = prng(SEED);
    const partial: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      dropIndex(dir);
      const delay = Math.round(whole.ms * (0.4 + 0.58 * random()));
      const run = await runChild(dir, delay);
      const at = await committedSeq(dir);
      if (run.signal === 'SIGKILL' && at > 0 && at < last) partial.push(at);
      await expectIndexMatches(dir, oracle, `seed ${SEED}, kill ${kill} after ${delay} ms (index committed up to seq ${at} of ${last})`, false);
    }
    console.log(`index crash test seed ${SEED}: rebuild ${whole.ms} ms; kills left the index part-way at seqs ${partial.join(', ')} of ${last}`);
    // Kills must land inside the rebuild, or the test proves nothing about index updates.
    expect(partial.length, `seed ${SEED}: kills that left the index part-way`).toBeGreaterThanOrEqual(2);
  });
  it(`after SIGKILLs while the index catches up in the background (calls appended all the while), the next start resumes it and the index answers exactly what the records on disk say`, async () => {
    const dir = join(work, 'catch-up');
    const shapes = await callTemplates();
    // Small segments: the index is then not rebuilt at start but caught up after it.
    await seedLedger(dir, shapes, 256 * 1024);
    const random = prng(SEED);
    const partial: number[] = [];
    const env = { CATCH_UP: '1', CALL_SHAPES: JSON.stringify(shapes) };
    for (let kill = 0; kill < KILLS; kill++) {
      // Half the kills start from no index, half resume one a kill left part-way.
      if (kill % 2 === 0) dropIndex(dir);
      const percent = 5 + Math.floor(random() * 90);
      // Killed at the first progress report at or past `percent` (reports come a slice apart).
      const reached = (out: string) => [...out.matchAll(/indexing (\d+)%/g)].some((m) => Number(m[1]) >= percent && Number(m[1]) < 100);
      const run = await runChild(dir, null, { when: reached, env });
      const at = await committedSeq(dir);
      const records = await recordsIn(dir);
      const last = records.at(-1)!.seq;
      if (run.signal === 'SIGKILL' && at > 0 && at < last) partial.push(at);
      const where = `seed ${SEED}, kill ${kill} at ${percent}% (index committed up to seq ${at} of ${last})`;
      // A kill that left the index in the last segment leaves nothing to catch up: that start just
      // resumes it (and the check below still holds); the next round starts from no index again.
      if (kill % 2 === 0) expect(run.signal, `${where}: ${run.stderr}`).toBe('SIGKILL');
      const oracle = LedgerProjections.fromRecords(records);
      await expectIndexMatches(dir, oracle, where, true);
    }
    console.log(`index catch-up crash test seed ${SEED}: kills left the index part-way at seqs ${partial.join(', ')}`);
    expect(partial.length, `seed ${SEED}: kills that left the index part-way`).toBeGreaterThanOrEqual(2);
  });
});
