/**
 * An in-memory Journal for unit tests and the offline demo. Not durable: `durable: true` is
 * accepted and means nothing here; the file-backed ledger is the durable implementation.
 *
 * Stored records are deep copies taken at append time and frozen at every level, so neither the
 * writer (editing its entry afterwards) nor a reader (editing a returned record) can change what
 * was recorded. Because they are frozen, `append` and `read` hand out the stored records
 * themselves instead of copying them again.
 */
import { plainCopy } from './canonical/canonical-json';
import type { Clock, Journal, JournalEntry, JournalRecord } from './ports';

export class MemoryJournal implements Journal {
  readonly kind = 'memory' as const;
  private readonly records: JournalRecord[] = [];

  constructor(private readonly clock: Clock) {}

  async append(entries: JournalEntry[]): Promise<JournalRecord[]> {
    const time = this.clock.now();
    const first = this.records.length + 1;
    // Copy everything before storing anything: a payload that cannot be copied rejects the whole group.
    const added: JournalRecord[] = entries.map((e, i) => Object.freeze({ seq: first + i, time, type: e.type, payload: plainCopy(e.payload, true) }));
    for (const r of added) this.records.push(r);
    return added;
  }

  read(): readonly JournalRecord[] {
    return this.records;
  }

  size(): number {
    return this.records.length;
  }

  async close(): Promise<void> {}
}
