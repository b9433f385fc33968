/**
 * An in-memory Journal for unit tests and the offline demo. Not durable: `durable: true` is
 * accepted and means nothing here; the file-backed ledger is the durable implementation.
 *
 * Stored records are frozen at every level, so neither the writer (editing its entry afterwards)
 * nor a reader (editing a returned record) can change what was recorded: a payload that is already
 * deep-frozen plain data (the gate freezes what it journals) is kept as is, anything else is
 * stored as a frozen deep copy taken at append time. Because records are frozen, `append` and
 * `read` hand out the stored records themselves instead of copying them again.
 */
import { plainCopy } from './canonical/canonical-json';
import type { Clock, Journal, JournalEntry, JournalRecord } from './ports';

export class MemoryJournal implements Journal {
  readonly kind = 'memory' as const;
  /** Records are stored synchronously inside `append`, so call order is record order. */
  readonly ordersOnCall = true;
  private readonly records: JournalRecord[] = [];

  constructor(private readonly clock: Clock) {}

  async append(entries: JournalEntry[]): Promise<JournalRecord[]> {
    const time = this.clock.now();
    const first = this.records.length + 1;
    // Copy everything before storing anything: a payload that cannot be copied rejects the whole group.
    const added: JournalRecord[] = entries.map((e, i) => Object.freeze({ seq: first + i, time, type: e.type, payload: isFrozenPlainData(e.payload, 0) ? e.payload : plainCopy(e.payload, true) }));
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

/**
 * True if nothing reachable from `value` can change: primitives, and frozen arrays and plain
 * objects whose members are all the same (bounded depth; anything else counts as changeable).
 */
function isFrozenPlainData(value: unknown, depth: number): boolean {
  if (value === null) return true;
  const t = typeof value;
  if (t !== 'object') return t !== 'function' && t !== 'symbol';
  if (depth > 64 || !Object.isFrozen(value)) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isFrozenPlainData(value[i], depth + 1)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in value) {
    if (Object.prototype.hasOwnProperty.call(value, k) && !isFrozenPlainData((value as Record<string, unknown>)[k], depth + 1)) return false;
  }
  return true;
}
