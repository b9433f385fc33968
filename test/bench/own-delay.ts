/**
 * Event-loop delay that the process itself caused, told apart from delay the operating system
 * caused by not running it.
 *
 * `monitorEventLoopDelay` measures wall time: on a machine where other processes want the cores
 * (the shared bench machine often has a load of 10 on 2 cores), a timer also fires late whenever
 * the kernel keeps the main thread waiting for a core, however short the main thread's tasks are.
 * This sampler runs a 1 ms timer and counts each firing's lateness only up to the time the main
 * thread actually ran on a core in the meantime (Linux's per-thread `schedstat`, in nanoseconds):
 * what remains is the time the loop was busy with the process's own work, the part code can fix.
 * Elsewhere than Linux it reports nothing.
 */
import { readFileSync } from 'node:fs';
import { percentiles } from './harness';

const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;

/** Nanoseconds the main thread has run on a core and waited on a run queue so far, or null where unknown. */
function schedstat(): { run: number; wait: number } | null {
  try {
    const [run, wait] = readFileSync(SCHEDSTAT, 'utf8').split(' ').map(Number);
    return { run: run!, wait: wait! };
  } catch {
    return null;
  }
}

export interface OwnDelay {
  /** p99 and max of the lateness of a 1 ms timer, counting only time the main thread ran, in ms. */
  p99: number;
  max: number;
  /** p99 of the same lateness in wall time (what `monitorEventLoopDelay` sees), in ms. */
  wallP99: number;
  /** Share of the run the main thread spent waiting for a core. */
  waitShare: number;
}

/** Starts sampling; `stop()` returns the figures (null where the kernel does not tell). */
export function sampleOwnDelay(): { stop(): OwnDelay | null } {
  const atStart = schedstat();
  if (atStart === null) return { stop: () => null };
  const own: number[] = [];
  const wall: number[] = [];
  const startedAt = performance.now();
  let last = performance.now();
  let before = atStart;
  let timer: NodeJS.Timeout;
  const tick = (): void => {
    const now = performance.now();
    const stat = schedstat()!;
    const late = Math.max(0, now - last - 1);
    wall.push(late);
    // Late by no more than the main thread actually ran in the meantime: the rest it spent
    // waiting for a core (or blocked in the kernel), which no code of ours can shorten.
    own.push(Math.min(late, (stat.run - before.run) / 1e6));
    last = performance.now();
    before = schedstat()!;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return {
    stop() {
      clearTimeout(timer);
      const elapsed = performance.now() - startedAt;
      const [p99] = percentiles(own, [99]);
      const [wallP99] = percentiles(wall, [99]);
      return { p99: p99 ?? 0, max: Math.max(0, ...own), wallP99: wallP99 ?? 0, waitShare: (schedstat()!.wait - atStart.wait) / 1e6 / elapsed };
    },
  };
}
