/**
 * Journal order and retention. Records are appended in the order decisions were made, and a
 * finished operation is kept in memory only until its records are in the journal: from then on
 * the history answers for it, so memory does not grow with history and an id never looks unknown.
 */
import { TERMINAL_STATES } from '../../../shared/domain/operations';
import { WardenError } from '../../../shared/result';
import type { Journal, JournalEntry, OperationHistory } from '../ports';
import { settledRebuild, type Operation, type OperationNames } from './operation';

const DURABLE = Object.freeze({ durable: true });
const noop = (): void => undefined;

/** The gate's appends, chained so records land in decision order, and the retirement that waits for them. */
export class JournalOrder {
  /** Journal appends are chained so records land in the order decisions were made. */
  private journalTail: Promise<unknown> = Promise.resolve();
  /** Appends handed to the journal chain and not yet finished (0: the next one may go straight to the journal). */
  private appendsInFlight = 0;
  private readonly appendDone = (): void => {
    this.appendsInFlight--;
  };

  constructor(private readonly journal: Journal) {}

  /** Appends in decision order; `durable` waits for stable storage. */
  append(entries: JournalEntry[], durable = false): Promise<unknown> {
    const options = durable ? DURABLE : undefined;
    // Transition payloads are frozen where they are made; `op.proposed` is frozen here (its
    // expiresAt is filled in after it is built). Every nested part was frozen where it was made,
    // so the journal may keep them without copying.
    for (const e of entries) if (!Object.isFrozen(e.payload)) Object.freeze(e.payload);
    let next: Promise<unknown>;
    if (this.journal.ordersOnCall === true) {
      // The journal fixes record order when called: no chain to wait on or to maintain.
      try {
        return this.journal.append(entries, options);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (this.appendsInFlight === 0) {
      // Nothing queued ahead: hand it to the journal now (same order, one promise hop less).
      try {
        next = this.journal.append(entries, options);
      } catch (error) {
        next = Promise.reject(error);
      }
    } else {
      next = this.journalTail.then(() => this.journal.append(entries, options));
    }
    this.appendsInFlight++;
    this.journalTail = next.then(this.appendDone, this.appendDone);
    return next;
  }

  /**
   * A finished operation leaves memory once its records are in the journal; the history answers
   * for it from then on. It stays until then so that its id can never look unknown: a journal
   * that orders on call has them as soon as the append that follows this transition is made (a
   * microtask later); any other has them when every append queued before this one settled.
   */
  retire(live: Map<string, Operation>, op: Operation): void {
    const drop = (): void => {
      if (live.get(op.id) === op) live.delete(op.id);
    };
    queueMicrotask(() => {
      if (this.appendsInFlight === 0) drop();
      else void this.journalTail.then(drop, drop);
    });
  }
}

/**
 * The operations the gate holds (live ones only) and the lookups that make an id it does not
 * hold answer from the history rather than mean a new call.
 */
export class HeldOperations {
  /**
   * Operations not yet in a terminal state, by id: the only ones the gate holds. Policy changes,
   * expiry and revocation touch these; a finished one is dropped the moment it finishes and is
   * read back from the history when asked for (memory does not grow with history).
   */
  readonly live = new Map<string, Operation>();
  /**
   * Caller-chosen ids being looked up in the history before admission: anything else asking for
   * such an id (a duplicate request, `settled`, `approve`) waits for the admission first.
   */
  private readonly admitting = new Map<string, Promise<unknown>>();
  /**
   * Ids the gate made for callers that name them when they submit (`mint`), not yet submitted.
   * No record can hold one: the gate made it after the ledger was opened, and every record this
   * run appends for it comes from its admission.
   */
  private readonly minted = new Set<string>();

  constructor(
    private readonly history: OperationHistory,
    private readonly names: OperationNames | undefined,
  ) {}

  /** Remembers `id` as made by the gate for a caller that will submit it (see `minted`). */
  mint(id: string): string {
    this.minted.add(id);
    return id;
  }

  /**
   * Whether a request naming `id` is admitted at once, asking no history: no id (a new one is
   * made), an id the gate holds (the held operation answers), or the first submission of an id
   * the gate minted (nothing recorded can hold it). Any other id is looked up (`admitKnown`),
   * which right after a start that found the index out of date waits for its catch-up.
   */
  admitsAtOnce(id: string | undefined): boolean {
    return id === undefined || this.live.has(id) || this.minted.delete(id);
  }

  /**
   * A request naming an id the gate does not hold: the history is asked first, so an id that
   * already ran (however long ago) answers with its recorded outcome and is never sent again.
   */
  admitKnown<T>(id: string, admit: () => T, held: (op: Operation) => T): Promise<T> {
    // One lookup at a time per id, registered before anything awaits: a duplicate request,
    // `settled` or `approve` for this id waits for the admission instead of racing it.
    const before = this.admitting.get(id);
    const run = (before ? before.then(noop, noop) : Promise.resolve()).then(async (): Promise<T> => {
      if (this.live.has(id)) return admit();
      const recorded = await this.history.find(id);
      // Admitted by a concurrent request while the history was asked: that one is the operation.
      const live = this.live.get(id);
      if (live) return held(live);
      if (!recorded) return admit();
      if (!TERMINAL_STATES.has(recorded.state)) {
        throw new WardenError('CONFLICT', `Operation ${id} was recorded as ${recorded.state} but is not held by the gate (it was interrupted and is being recovered); try again`);
      }
      return held(settledRebuild(this.names, recorded));
    });
    this.admitting.set(id, run);
    const forget = (): void => {
      if (this.admitting.get(id) === run) this.admitting.delete(id);
    };
    run.then(forget, forget);
    return run;
  }

  /** Resolves once an admission of `id` that is looking up the history (if any) has happened. */
  async admitted(id: string): Promise<void> {
    const pending = this.admitting.get(id);
    if (pending) await pending.then(noop, noop);
  }

  /**
   * The live operation with this id. A finished one is refused (CONFLICT), never rebuilt:
   * approve, reject and cancel must only ever act on the one in-memory object per id, so nothing
   * can move a finished operation again.
   */
  async mustGet(operationId: string, action: 'approved' | 'rejected' | 'cancelled'): Promise<Operation> {
    const live = this.live.get(operationId);
    if (live) return live;
    await this.admitted(operationId);
    const admitted = this.live.get(operationId);
    if (admitted) return admitted;
    const recorded = await this.history.find(operationId);
    // Taken up by a concurrent request while the history was asked.
    const now = this.live.get(operationId);
    if (now) return now;
    if (recorded) throw new WardenError('CONFLICT', `Operation ${operationId} cannot be ${action}: it already finished (${recorded.state}); see the activity log`);
    throw new WardenError('NOT_FOUND', `No operation with id ${JSON.stringify(operationId)}`);
  }
}
