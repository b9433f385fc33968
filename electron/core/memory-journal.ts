/**
 * An in-memory Journal for unit tests and the offline demo. Not durable: `durable: true` is
 * accepted and means nothing here; the file-backed ledger is the durable implementation.
 */
import type { Clock, Journal, JournalEntry, JournalRecord } from './ports';

export class MemoryJournal implements Journal {
  readonly kind = 'memory' as const;
  private readonly records: JournalRecord[] = [];

  constructor(private readonly clock: Clock) {}

  async append(entries: JournalEntry[]): Promise<JournalRecord[]> {
    const time = this.clock.now();
    const added = entries.map((e, i) => ({
      seq: this.records.length + 1 + i,
      time,
      type: e.type,
      payload: structuredClone(e.payload),
    }));
    this.records.push(...added);
    return added.map((r) => structuredClone(r));
  }

  read(): readonly JournalRecord[] {
    return this.records;
  }

  size(): number {
    return this.records.length;
  }

  async close(): Promise<void> {}
}
