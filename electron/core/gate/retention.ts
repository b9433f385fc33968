/**
 * Journal order and retention. Records are appended in the order decisions were made, and a
 * finished operation is kept in memory only until its records are in the journal: from then on
 * the history answers for it, so memory does not grow with history and an id never looks unknown.
 */
import type { Journal, JournalEntry } from '../ports';
import type { Operation } from './operation';

const DURABLE = Object.freeze({ durable: true });

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
