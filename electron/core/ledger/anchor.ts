/**
 * The ledger's key and its anchor, both kept outside the ledger's folder in the OS keychain
 * (through the SecretStore port; the core never touches the keychain any other way).
 *
 * - The key: 32 random bytes made on the first open with a keychain, stored as hex. Records are
 *   sealed with HMAC-SHA256 under it (format.ts), so someone who can change the ledger's files but
 *   not read the keychain cannot rewrite a record and recompute the chain.
 * - The anchor: the last record known to be on disk (its seq and checksum), sealed with the key
 *   too. Opening compares the ledger with it, so removing the newest records, zeroing them, or
 *   putting an older copy of the folder back is found even though what is left is a valid chain.
 *   It is written after group commits, at most once per interval, and at a clean shutdown: never
 *   on a call's path, and only for records already synced (so a crash never leaves the anchor
 *   ahead of the disk). What it cannot see: records after its last update (docs/decisions/0009).
 *
 * Fail closed: when the keychain cannot be reached, or the key is missing while sealed records or
 * an anchor exist, the ledger is never given a new key silently; the service opens in safe mode
 * and says why.
 */
import { randomBytes } from 'node:crypto';
import type { SecretStore } from '../ports';
import { CHAIN_KEY_BYTES, chainKey, type ChainKey } from './format';

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

/** The last record the anchor vouches for. */
export interface Anchor {
  seq: number;
  /** Where that record is: its segment's number, where it starts and its length (0s for seq 0). */
  segment: number;
  offset: number;
  length: number;
  /** The record's checksum (its HMAC when sealed; seq 0 with the genesis hash for an empty ledger). */
  hash: string;
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

function anchorMac(key: ChainKey, a: Anchor): string {
  return key.mac(`warden.ledger.anchor.v1\n${a.seq}\n${a.segment}\n${a.offset}\n${a.length}\n${a.hash}\n${a.keyId}\n${a.at}`);
}

/** The anchor as stored: JSON with an HMAC over its fields. */
export function sealAnchor(key: ChainKey, a: Anchor): string {
  return JSON.stringify({ v: 1, seq: a.seq, segment: a.segment, offset: a.offset, length: a.length, hash: a.hash, keyId: a.keyId, at: a.at, mac: anchorMac(key, a) });
}

/** The anchor in `text` if it is well-formed and sealed with `key`; otherwise why not, in words. */
export function openAnchor(key: ChainKey, text: string): Anchor | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'the anchor kept in the keychain is not readable';
  }
  const p = parsed as Partial<Anchor & { v: number; mac: string }>;
  const counts = [p?.seq, p?.segment, p?.offset, p?.length].every((n) => Number.isSafeInteger(n) && (n as number) >= 0);
  if (p?.v !== 1 || !counts || typeof p.hash !== 'string' || typeof p.keyId !== 'string' || !Number.isFinite(p.at) || typeof p.mac !== 'string') {
    return 'the anchor kept in the keychain is not readable';
  }
  const a: Anchor = { seq: p.seq!, segment: p.segment!, offset: p.offset!, length: p.length!, hash: p.hash, keyId: p.keyId, at: p.at! };
  if (a.keyId !== key.id) return "the anchor kept in the keychain was sealed with another key than the ledger's key in the keychain";
  if (anchorMac(key, a) !== p.mac) return "the anchor kept in the keychain does not carry a valid seal of the ledger's key (it was changed)";
  return a;
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
 * synced point at a clean shutdown.
 */
export class AnchorKeeper {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private lastWritten = -1;
  private lastWriteAt = 0;
  private finished = false;
  /** The last failure to write the anchor (the keychain went away), if the last write failed. */
  lastError: string | null = null;
  /** Anchor writes done (for tests and benchmarks). */
  writes = 0;
  /** The point the last write stored. */
  written: { seq: number; hash: string } | null = null;

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
    if (seq === this.lastWritten) return;
    this.lastWriteAt = this.now();
    const text = sealAnchor(this.key, {
      seq,
      segment: p?.segment ?? 0,
      offset: p ? p.offset - p.length : 0,
      length: p?.length ?? 0,
      hash: p?.checksum ?? '0'.repeat(64),
      keyId: this.key.id,
      at: this.lastWriteAt,
    });
    try {
      await this.k.secrets.set(this.k.anchorEntry ?? LEDGER_ANCHOR_ENTRY, text);
      this.lastWritten = seq;
      this.written = { seq, hash: p?.checksum ?? '0'.repeat(64) };
      this.writes++;
      this.lastError = null;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
    }
  }
}
