/**
 * Timers for pending approvals' deadlines. A timer only triggers the gate's sweep: whether an
 * approval expired is decided there, against the clock, so a fake clock in tests needs no timers.
 */
import type { Clock } from '../ports';
import type { Operation } from './operation';

export class ApprovalExpiry {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly clock: Clock,
    /** False: no timers at all (tests with a fake clock call the sweep themselves). */
    private readonly enabled: boolean,
    /** Expires every approval whose time is up (the gate's `sweepExpired`). */
    private readonly sweep: () => Promise<void>,
  ) {}

  /** True while any timer is armed (most calls never ask, so this keeps the common path short). */
  get armed(): boolean {
    return this.timers.size !== 0;
  }

  /** Arms the timer for a pending approval's deadline (nothing if timers are off or it has none). */
  schedule(op: Operation): void {
    if (!this.enabled || op.expiresAt === null) return;
    const delay = Math.max(0, op.expiresAt - this.clock.now());
    const timer = setTimeout(() => {
      this.timers.delete(op.id);
      void this.sweep().then(() => {
        // Timers can fire a millisecond before the wall clock reaches the deadline (and long
        // delays are capped): an approval still pending is re-armed, never left waiting forever.
        if (op.state === 'awaiting_approval') this.schedule(op);
      }, (error: unknown) => console.error(`gate: expiring operation ${op.id} failed`, error));
    }, Math.min(delay, 2 ** 31 - 1));
    timer.unref?.();
    this.timers.set(op.id, timer);
  }

  /** Disarms an operation's timer, if it has one. */
  clear(op: Operation): void {
    const t = this.timers.get(op.id);
    if (t) {
      clearTimeout(t);
      this.timers.delete(op.id);
    }
  }

  /** Disarms every timer. */
  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
