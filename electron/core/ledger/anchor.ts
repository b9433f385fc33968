/**
 * The ledger's key and its anchor, both kept outside the ledger's folder in the OS keychain
 * (through the SecretStore port; the core never touches the keychain any other way).
 *
 * - The key: 32 random bytes made on the first open with a keychain, stored as hex. Records are
 *   sealed with HMAC-SHA256 under it (format.ts), so someone who can change the ledger's files but
 *   not read the keychain cannot rewrite a record and recompute the chain.
 * - The anchor: both ends of the ledger, sealed with the key too. The last record known to be on
 *   disk (its seq, place and checksum), so removing the newest records, zeroing them, or putting
 *   an older copy of the folder back is found even though what is left is a valid chain; and the
 *   first record, so deleting the oldest segments is found too (segments are never deleted by
 *   design: a chain that no longer starts at its anchored first record lost its beginning).
 *   It is written after group commits, at most once per interval, and at a clean shutdown: never
 *   on a call's path, and only for records already synced (so a crash never leaves the anchor
 *   ahead of the disk). What it cannot see: records after its last update (docs/decisions/0009).
 *   `anchorMismatch` is the one check of a ledger against it: the app's start, Settings' check and
 *   `npm run ledger:verify` all go through it.
 *
 * Fail closed: when the keychain cannot be reached, or the key is missing while sealed records or
 * an anchor exist, the ledger is never given a new key silently; the service opens in safe mode
 * and says why.
 */
import { randomBytes } from 'node:crypto';
import type { SecretStore } from '../ports';
import { CHAIN_KEY_BYTES, chainKey, type ChainKey, type StoredRecord } from './format';
import type { RecordLocation } from './recovery';
import { segmentName } from './segments';

/** Keychain entry (under the app's service) holding the ledger's key. */
export const LEDGER_KEY_ENTRY = 'ledger-chain-key';
/** Keychain entry holding the ledger's anchor. */
export const LEDGER_ANCHOR_ENTRY = 'ledger-anchor';

/** Where the service finds its key and keeps its anchor. */
export interface LedgerKeychain {
  secrets: SecretStore;
  /** Entry names; the app uses the defaults (one ledger per install), tests their own. */
  keyEntry?: string;
  anchorEntry?: string;
  /** Least time between two anchor writes while records are appended. Default 1000 ms. */
  anchorIntervalMs?: number;
  /** Told the key's text when it is read or made, so the redactor keeps it out of every record. */
  onSecretValue?: (value: string) => void;
}

/** One record the anchor vouches for: its seq, where it starts, its length and its checksum. */
export interface AnchoredRecord {
  seq: number;
  /** Where that record is: its segment's number, where it starts and its length (0s for seq 0). */
  segment: number;
  offset: number;
  length: number;
  /** The record's checksum (its HMAC when sealed; seq 0 with the genesis hash for an empty ledger). */
  hash: string;
}

/** The two ends of the ledger the anchor vouches for: the last record (its own fields) and the first. */
export interface AnchoredEnds extends AnchoredRecord {
  /**
   * The ledger's first record; null while the ledger is empty, and in an anchor written before
   * Warden anchored the first record (it is added once a full verification found the chain whole).
   */
  first: AnchoredRecord | null;
}

/** The anchor as stored in the keychain. */
export interface Anchor extends AnchoredEnds {
  keyId: string;
  /** When it was written (ms since epoch). */
  at: number;
}

/** What the keychain held at open. */
export type KeyLookup =
  | { state: 'found'; key: ChainKey }
  | { state: 'missing' }
  | { state: 'unreadable'; why: string };

const HEX_KEY = /^[0-9a-f]{64}$/;

/** Reads the key and the anchor; `unreadable` when the keychain cannot be reached or holds junk. */
export async function readKeychain(k: LedgerKeychain): Promise<{ key: KeyLookup; anchorText: string | null }> {
  let keyText: string | null;
  let anchorText: string | null;
  try {
    [keyText, anchorText] = await Promise.all([k.secrets.get(k.keyEntry ?? LEDGER_KEY_ENTRY), k.secrets.get(k.anchorEntry ?? LEDGER_ANCHOR_ENTRY)]);
  } catch (error) {
    return { key: { state: 'unreadable', why: error instanceof Error ? error.message : String(error) }, anchorText: null };
  }
  if (keyText === null) return { key: { state: 'missing' }, anchorText };
  if (!HEX_KEY.test(keyText)) return { key: { state: 'unreadable', why: `the keychain entry ${k.keyEntry ?? LEDGER_KEY_ENTRY} does not hold a ledger key (64 hex characters)` }, anchorText };
  k.onSecretValue?.(keyText);
  return { key: { state: 'found', key: chainKey(Buffer.from(keyText, 'hex')) }, anchorText };
}

/** Makes a new random key and stores it; rejects (KEYCHAIN_UNAVAILABLE) when it cannot be stored. */
export async function createKey(k: LedgerKeychain): Promise<ChainKey> {
  const text = randomBytes(CHAIN_KEY_BYTES).toString('hex');
  k.onSecretValue?.(text);
  await k.secrets.set(k.keyEntry ?? LEDGER_KEY_ENTRY, text);
  return chainKey(Buffer.from(text, 'hex'));
}

function anchorMac(key: ChainKey, a: Anchor, version: 1 | 2): string {
  const last = `${a.seq}\n${a.segment}\n${a.offset}\n${a.length}\n${a.hash}\n${a.keyId}\n${a.at}`;
  if (version === 1) return key.mac(`warden.ledger.anchor.v1\n${last}`);
  const f = a.first;
  return key.mac(`warden.ledger.anchor.v2\n${last}\n${f ? `${f.seq}\n${f.segment}\n${f.offset}\n${f.length}\n${f.hash}` : '-'}`);
}

/** The anchor as stored: JSON with an HMAC over its fields (both ends). */
export function sealAnchor(key: ChainKey, a: Anchor): string {
  const first = a.first ? { seq: a.first.seq, segment: a.first.segment, offset: a.first.offset, length: a.first.length, hash: a.first.hash } : null;
  return JSON.stringify({ v: 2, seq: a.seq, segment: a.segment, offset: a.offset, length: a.length, hash: a.hash, first, keyId: a.keyId, at: a.at, mac: anchorMac(key, { ...a, first }, 2) });
}

function isPlace<T extends Partial<AnchoredRecord>>(p: T | null | undefined): p is T & AnchoredRecord {
  return !!p && [p.seq, p.segment, p.offset, p.length].every((n) => Number.isSafeInteger(n) && (n as number) >= 0) && typeof p.hash === 'string';
}

/**
 * The anchor in `text` if it is well-formed and sealed with `key`; otherwise why not, in words.
 * An anchor of format 1 (written before the first record was anchored) opens with `first: null`.
 */
export function openAnchor(key: ChainKey, text: string): Anchor | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'the anchor kept in the keychain is not readable';
  }
  const p = parsed as Partial<Anchor & { v: number; mac: string }> | null;
  const version = p?.v === 1 || p?.v === 2 ? p.v : null;
  const first = version === 2 ? p!.first : null;
  if (version === null || !isPlace(p) || (first !== null && !isPlace(first)) || typeof p.keyId !== 'string' || !Number.isFinite(p.at) || typeof p.mac !== 'string') {
    return 'the anchor kept in the keychain is not readable';
  }
  const a: Anchor = {
    seq: p.seq,
    segment: p.segment,
    offset: p.offset,
    length: p.length,
    hash: p.hash,
    first: first ? { seq: first.seq, segment: first.segment, offset: first.offset, length: first.length, hash: first.hash } : null,
    keyId: p.keyId,
    at: p.at!,
  };
  if (a.keyId !== key.id) return "the anchor kept in the keychain was sealed with another key than the ledger's key in the keychain";
  if (anchorMac(key, a, version) !== p.mac) return "the anchor kept in the keychain does not carry a valid seal of the ledger's key (it was changed)";
  return a;
}

/** What the check of a ledger against its anchor needs to know of the ledger. */
export interface AnchoredLog {
  /** The number of the oldest segment in the folder, or null when there is none. */
  firstSegment: number | null;
  /** The seq of the last valid record (0 for an empty ledger). */
  lastSeq: number;
  /** The valid record written exactly at `place` (checksum checked), or undefined when there is none. */
  readAt(place: RecordLocation): Promise<StoredRecord | undefined>;
}

/** Which end of the ledger does not match its anchor, and why, in words. */
export interface AnchorMismatch {
  end: 'first' | 'last';
  /** The seq of the anchored record that is missing or changed. */
  seq: number;
  detail: string;
}

/**
 * Whether the ledger still holds both records its anchor names, unchanged and where they were
 * written: the last (else its newest records were removed or blanked, or an older copy of the
 * folder was put back) and the first (else its oldest segments were deleted). Null when it does.
 *
 * Why reading at the anchored places is enough: records never move once written (the log is
 * append-only, and segments are never deleted), so anything else there, or nothing, is a change.
 */
export async function anchorMismatch(anchor: AnchoredEnds, log: AnchoredLog): Promise<AnchorMismatch | null> {
  const holds = async (r: AnchoredRecord): Promise<boolean> => {
    const record = await log.readAt({ segment: r.segment, offset: r.offset, length: r.length }).catch(() => undefined);
    return record?.seq === r.seq && record.checksum === r.hash;
  };
  if (anchor.seq > 0 && (log.lastSeq < anchor.seq || !(await holds(anchor)))) {
    return { end: 'last', seq: anchor.seq, detail: anchorDetail(log.lastSeq, anchor.seq) };
  }
  const first = anchor.first;
  if (first && (log.firstSegment !== first.segment || !(await holds(first)))) {
    const now = log.firstSegment === null ? 'has no segment left' : `now starts in ${segmentName(log.firstSegment)}`;
    const detail =
      log.firstSegment === null || log.firstSegment > first.segment
        ? `The ledger ${now}, but it began with record ${first.seq} in ${segmentName(first.segment)} (recorded outside the ledger, in the keychain): its oldest records were removed.`
        : `Record ${first.seq}, the ledger's first, is not the record Warden sealed (recorded outside the ledger, in the keychain): the oldest records were removed or rewritten, or other records were put before them.`;
    return { end: 'first', seq: first.seq, detail };
  }
  return null;
}

/**
 * Why the ledger cannot start at `first` when its anchor names no first record yet (an anchor
 * from before first records were anchored), or null when it can. Only versions without keys ever
 * deleted old segments, so a chain that starts at a sealed record other than record 1 lost its
 * oldest segments; a plain start is taken as such a version left it.
 */
export function unanchoredStartProblem(anchor: AnchoredEnds, first: { seq: number; segment: number; sealed: boolean }): string | null {
  if (anchor.first || !first.sealed || first.seq === 1) return null;
  return `The ledger starts at record ${first.seq} in ${segmentName(first.segment)}, a record sealed with its key: Warden never deleted segments once it sealed records, so its oldest records were removed.`;
}

/** Why the ledger does not reach its anchored last record, in words. */
function anchorDetail(lastSeq: number, anchoredSeq: number): string {
  return lastSeq < anchoredSeq
    ? `The ledger ends at record ${lastSeq}, but it had reached record ${anchoredSeq} (recorded outside the ledger, in the keychain): its newest records were removed or blanked, or an older copy of the folder was put back.`
    : `Record ${anchoredSeq} is not the record Warden sealed (recorded outside the ledger, in the keychain): it was rewritten, or an older copy of the folder was put back.`;
}

/** A synced record the anchor can name (a ledger position: `offset` is where the record ends). */
export interface AnchorPoint {
  seq: number;
  checksum: string;
  segment: number;
  offset: number;
  length: number;
}

/**
 * Keeps the anchor up to date: `advanced()` after records are synced schedules one keychain
 * write, at most one per interval and one at a time (keychain calls are asynchronous: the main
 * thread never waits on one, and no call's latency includes one). `finish()` writes the last
 * synced point at a clean shutdown. Every write carries the ledger's first record (`first`), once
 * it is known and synced: it never changes after that, so anchoring it costs no write of its own
 * (except the one that adds it to an anchor from before it was kept).
 */
export class AnchorKeeper {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private lastWritten = -1;
  private firstWritten: AnchoredRecord | null = null;
  private lastWriteAt = 0;
  private finished = false;
  /** The last failure to write the anchor (the keychain went away), if the last write failed. */
  lastError: string | null = null;
  /** Anchor writes done (for tests and benchmarks). */
  writes = 0;
  /** What the last write stored: both ends. */
  written: AnchoredEnds | null = null;
  /**
   * The ledger's first record, once known: carried from the anchor read at start, taken from the
   * first record appended to an empty ledger, or from a full verification that found the chain
   * whole (a ledger anchored before first records were). Written only once it is synced.
   */
  first: AnchoredRecord | null = null;

  constructor(
    private readonly k: LedgerKeychain,
    private readonly key: ChainKey,
    private readonly point: () => AnchorPoint | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records were synced: the anchor follows within one interval. */
  advanced(): void {
    if (this.finished || this.timer || this.writing) return;
    const interval = this.k.anchorIntervalMs ?? 1000;
    const wait = Math.max(0, this.lastWriteAt + interval - this.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.writing = this.write().finally(() => {
        this.writing = null;
        // Records synced while this write ran are anchored in the next one.
        const p = this.point();
        if (p && p.seq !== this.lastWritten) this.advanced();
      });
    }, wait);
    // An anchor write never keeps the process alive on its own.
    this.timer.unref?.();
  }

  /** Writes the anchor now (at open, and after a person acknowledged a problem). */
  async writeNow(): Promise<void> {
    await this.writing;
    await this.write();
  }

  /** Stops scheduling, waits for a write in flight, and writes the last synced point. */
  async finish(): Promise<void> {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.writing;
    await this.write();
  }

  private async write(): Promise<void> {
    const p = this.point();
    const seq = p?.seq ?? 0;
    // Like the last record, the first is named only once it is synced.
    const first = this.first && seq >= this.first.seq ? this.first : null;
    if (seq === this.lastWritten && first === this.firstWritten) return;
    this.lastWriteAt = this.now();
    const ends: AnchoredEnds = {
      seq,
      segment: p?.segment ?? 0,
      offset: p ? p.offset - p.length : 0,
      length: p?.length ?? 0,
      hash: p?.checksum ?? '0'.repeat(64),
      first,
    };
    const text = sealAnchor(this.key, { ...ends, keyId: this.key.id, at: this.lastWriteAt });
    try {
      await this.k.secrets.set(this.k.anchorEntry ?? LEDGER_ANCHOR_ENTRY, text);
      this.lastWritten = seq;
      this.firstWritten = first;
      this.written = ends;
      this.writes++;
      this.lastError = null;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
    }
  }
}
