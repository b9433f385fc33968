/**
 * One unit of work per turn of the event loop.
 *
 * The core runs in Electron's main process, which also runs every window's input and IPC. Work
 * arrives in bursts there: one read of a server's stdout can hold dozens of answers, and one
 * group-committed sync finishes dozens of durable appends at once. Each unit is small (an answer
 * settles a tool call, which lets its caller send the next one), but dozens of them in one task
 * are a pause a person notices. `later` queues a unit; units run first in, first out, one per
 * turn (each in its own `setImmediate`, so timers, input and IPC get their turn in between), and
 * the promise reactions a unit starts run before the next unit does.
 *
 * Units share one queue across the process, so a burst from one source cannot starve another.
 */

const queue: Array<() => void> = [];
let head = 0;
let scheduled = false;

function runOne(): void {
  const unit = queue[head]!;
  queue[head++] = undefined as unknown as () => void;
  if (head === queue.length) {
    queue.length = 0;
    head = 0;
    scheduled = false;
  } else setImmediate(runOne);
  unit();
}

/**
 * Runs `unit` in a later turn of the event loop, after every unit queued before it. A unit that
 * throws does not stop the ones after it (the error is reported as uncaught, as from a timer).
 */
export function later(unit: () => void): void {
  queue.push(unit);
  if (!scheduled) {
    scheduled = true;
    setImmediate(runOne);
  }
}

/** Resolves in a later turn of the event loop (see `later`): `await nextTurn()` yields one turn. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => later(resolve));
}

/** How many units are waiting (for tests and benchmarks). */
export function waitingUnits(): number {
  return queue.length - head;
}
