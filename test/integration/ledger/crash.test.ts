/**
 * The crash test: a child process runs tool calls through the REAL gate on the durable
 * ledger against a real stdio MCP server that records every side effect in its own fsync'd file.
 * The parent SIGKILLs the child's whole process group (child + server) at random moments — at
 * least 200 times — and after every kill runs recovery and checks:
 *   - no operation produced more than one side effect;
 *   - every side effect belongs to an operation that reached `executing`;
 *   - no operation is `succeeded` without its side effect;
 *   - every operation left in `executing` is now `outcome_unknown`;
 *   - the hash chain verifies, and no kill ever causes a safe start (kills only tear the tail);
 *   - the persistent index, reopened after the kill, answers exactly what a fold of every record
 *     on disk answers (operations, states, the whole audit view): a kill in the middle of an index
 *     commit or of a rotation loses nothing and invents nothing.
 * Lanes use different preallocation chunks (the 1 MiB default, 4 KiB, and 1,000 bytes, which is
 * not page-aligned), so kills also land while a segment is being extended with zeros, and rotate
 * at different sizes (one lane every few calls), so kills also land during rotations. The index
 * commits what was appended every 100 ms, so kills land during index updates too.
 *
 * The seed is printed; `WARDEN_CRASH_SEED=<n>` reproduces a run's choices (actions, kill delays),
 * `WARDEN_CRASH_KILLS=<n>` changes the number of kills, `WARDEN_CRASH_LANES=<n>` the number of
 * independent data folders killed in parallel (restarts are mostly process start-up, so lanes
 * overlap it). The child and the server are bundled once with esbuild so each restart
 * costs a plain `node` start, which keeps 200+ kills well inside the time budget.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerService } from '../../../electron/core/ledger/service';
import { LedgerProjections } from '../../../electron/core/ledger/projections';
import { projectionsOf, recordsIn } from '../../unit/ledger/helpers';
import { verifyLedger } from '../../../electron/core/ledger/verify';
import { prng } from '../../helpers/prng';

const root = resolve(import.meta.dirname, '../../..');
const KILLS = Number(process.env.WARDEN_CRASH_KILLS ?? 200);
/** Independent data folders killed in parallel (each its own ledger and server file). */
const LANES = Number(process.env.WARDEN_CRASH_LANES ?? 3);
/** Preallocation chunk per lane (cycled): default, one page, and an odd size that straddles pages. */
const LANE_PREALLOCATE = [1024 * 1024, 4096, 1000];
/** Rotation size per lane (cycled): the crash child's default, and small enough to rotate every few calls. */
const LANE_ROTATE = [256 * 1024, 12 * 1024, 40 * 1024];
const SEED = Number(process.env.WARDEN_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

let work: string;
let childBundle: string;
let serverBundle: string;
const live = new Set<ChildProcess>();

/** Kills a child's whole process group (the child and its server), ignoring "already gone". */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

/** True while `pid` is a live process (a zombie waiting for its reaper counts as dead). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function waitDead(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return !alive(pid);
}

/** Side effects the server recorded, by operation id. */
function sideEffects(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const { operationId } = JSON.parse(line) as { operationId: string };
    counts.set(operationId, (counts.get(operationId) ?? 0) + 1);
  }
  return counts;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'warden-crash-'));
  const banner = { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" };
  childBundle = join(work, 'crash-child.mjs');
  serverBundle = join(work, 'side-effect-server.mjs');
  await build({ entryPoints: [join(root, 'test/integration/ledger/crash-child.ts')], outfile: childBundle, bundle: true, platform: 'node', format: 'esm', target: 'node20', banner, minify: true, logLevel: 'error' });
  await build({ entryPoints: [join(root, 'test/fixtures/side-effect-server.ts')], outfile: serverBundle, bundle: true, platform: 'node', format: 'esm', target: 'node20', banner, minify: true, logLevel: 'error' });
});

afterAll(() => {
  for (const child of live) killGroup(child);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('crash test', () => {
  it(`after ${KILLS} SIGKILLs at random moments no call ran twice, none ran unrecorded, and executing became outcome_unknown`, async () => {
    console.log(`crash test seed: ${SEED} (reproduce with WARDEN_CRASH_SEED=${SEED})`);
    let kills = 0;
    let completedRuns = 0;
    let outcomeUnknown = 0;
    let tornTails = 0;
    const started = Date.now();

    const lane = async (laneNo: number): Promise<void> => {
      const random = prng(SEED + laneNo * 7919);
      const laneDir = join(work, `lane-${laneNo}`);
      const preallocateBytes = LANE_PREALLOCATE[laneNo % LANE_PREALLOCATE.length]!;
      const rotateBytes = LANE_ROTATE[laneNo % LANE_ROTATE.length]!;
      mkdirSync(laneDir);
      const ledgerDir = join(laneDir, 'ledger');
      const effectsFile = join(laneDir, 'side-effects.jsonl');
      for (let run = 0; kills < KILLS; run++) {
        if (run > KILLS * 3) throw new Error(`seed ${SEED} lane ${laneNo}: only ${kills} kills after ${run} runs`);
        const where = `seed ${SEED} lane ${laneNo} run ${run}`;
        const earlyKill = random() < 0.15;
        const delay = earlyKill ? random() * 400 : random() * 150;
        const child = spawn(process.execPath, [childBundle], {
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            ...process.env,
            WARDEN_LEDGER_DIR: ledgerDir,
            SIDE_EFFECT_FILE: effectsFile,
            SERVER_COMMAND: process.execPath,
            SERVER_ARGS: JSON.stringify([serverBundle]),
            RUN: String(run),
            SEED: String(Math.floor(random() * 2 ** 31)),
            MAX_OPS: '40',
            PREALLOCATE_BYTES: String(preallocateBytes),
            ROTATE_BYTES: String(rotateBytes),
            // The bundle runs from a temp folder: the index's native SQLite module is found here.
            NODE_PATH: join(root, 'node_modules'),
          },
        });
        live.add(child);
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
        let serverPid = 0;
        const ready = new Promise<void>((res) => {
          const check = (): void => {
            const m = /ready (\d+)/.exec(stdout);
            if (m) {
              serverPid = Number(m[1]);
              res();
            }
          };
          child.stdout!.on('data', check);
          void exited.then(() => res());
        });
        const t0 = Date.now();
        if (!earlyKill) await ready;
        const t1 = Date.now();
        const timer = new Promise<void>((res) => setTimeout(res, delay));
        await Promise.race([timer.then(() => killGroup(child)), exited]);
        const { code, signal } = await exited;
        live.delete(child);
        if (signal === 'SIGKILL') kills++;
        else if (code === 0) completedRuns++;
        else throw new Error(`${where}: child failed (code ${code}, signal ${signal}):\n${stderr.slice(-3000)}`);
        // Whatever happened, nothing of that run may outlive it: kill the group, then check.
        killGroup(child);
        if (serverPid) expect(await waitDead(serverPid, 5_000), `${where}: server ${serverPid} outlived its client`).toBe(true);

        const t2 = Date.now();
        // Recovery, as the next start would run it, then the invariants.
        const service = await LedgerService.open({ dir: ledgerDir, rotateBytes, preallocateBytes });
        try {
          if (service.ledger.recovery.tornTail) tornTails++;
          expect(service.ledger.safeMode, `${where}: a kill must never look like tampering`).toBe(false);
          const wasExecuting = (await projectionsOf(service).operations({ state: 'executing' })).map((o) => o.operationId);
          const report = await service.recoverOperations();
          outcomeUnknown += report.outcomeUnknown.length;
          expect(report.outcomeUnknown.sort()).toEqual([...wasExecuting].sort());
          for (const id of wasExecuting) expect((await projectionsOf(service).operation(id))!.state, `${where}: ${id}`).toBe('outcome_unknown');
          expect((await projectionsOf(service).operations({ state: 'executing' }))).toEqual([]);

          const effects = sideEffects(effectsFile);
          for (const [id, n] of effects) {
            expect(n, `${where}: operation ${id} produced ${n} side effects`).toBe(1);
            const op = (await projectionsOf(service).operation(id));
            expect(op?.reachedExecuting, `${where}: side effect of ${id} without an executing record`).toBe(true);
          }
          for (const op of (await projectionsOf(service).operations({ state: 'succeeded' }))) {
            expect(effects.has(op.operationId), `${where}: ${op.operationId} succeeded without its side effect`).toBe(true);
          }
          // The index after the kill equals a fold of every record on disk.
          await service.ledger.flush();
          const oracle = LedgerProjections.fromRecords(await recordsIn(ledgerDir));
          const byId = <T extends { operationId: string }>(xs: T[]): T[] => [...xs].sort((x, y) => (x.operationId < y.operationId ? -1 : 1));
          expect(byId(await projectionsOf(service).operations()), `${where}: indexed operations`).toEqual(byId(oracle.operations()));
          expect(await projectionsOf(service).audit(), `${where}: indexed audit view`).toEqual(oracle.audit());
        } finally {
          await service.close();
        }
        const verdict = await verifyLedger(ledgerDir);
        expect(verdict.firstBroken, `${where}: chain broken`).toBeNull();
        if (process.env.CRASH_DEBUG) console.log(`${where}: ready ${t1 - t0} ms, kill+reap ${t2 - t1} ms, check ${Date.now() - t2} ms`);
      }
    };
    await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));

    let ops = 0;
    let effectCount = 0;
    const segments: string[] = [];
    for (let i = 0; i < LANES; i++) {
      const final = await LedgerService.open({ dir: join(work, `lane-${i}`, 'ledger') });
      ops += (await projectionsOf(final).operationCount());
      segments.push(final.ledger.segments().join('+'));
      await final.close();
      effectCount += sideEffects(join(work, `lane-${i}`, 'side-effects.jsonl')).size;
    }
    console.log(
      `crash test seed ${SEED}: ${kills} kills, ${completedRuns} runs finished on their own, ${ops} operations, ${effectCount} side effects, ` +
        `${outcomeUnknown} outcome_unknown, ${tornTails} torn tails dropped, segments ${segments.join(' ')}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(effectCount).toBeGreaterThan(KILLS); // the workload really ran between kills
  }, 600_000);
});
