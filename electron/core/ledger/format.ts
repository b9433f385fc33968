/**
 * The on-disk record format of the ledger and the scanner that reads it back.
 *
 * One record per line (JSON has no raw newline inside, so `\n` frames records):
 *
 *   {"seq":7,"time":1700000000000,"type":"op.transition","payload":{...},"prevHash":"<64 hex>","checksum":"<64 hex>"}\n
 *
 * `checksum` is sha256 over the exact bytes of the line before `,"checksum":"`, so it covers
 * seq, time, type, payload and prevHash as written; `prevHash` is the previous record's checksum,
 * which chains every record to everything before it (across segments too). A line that lacks its
 * newline, does not parse, fails its checksum, or does not continue the chain is never guessed at:
 * the scanner reports where it is and what was wrong.
 *
 * Sealed records: once the ledger has a key (a random per-install secret kept in the OS keychain),
 * each record also names the key (`"keyId":"<16 hex>"`, after prevHash) and its `checksum` is
 * HMAC-SHA256 with that key over the same bytes. Without the key, a changed record cannot be given
 * a checksum that passes, so rewriting records and recomputing the chain is found, not only
 * accidents. Records written before the ledger had a key keep their plain sha256 and verify as
 * before; the first sealed record chains onto the last plain one. A plain record after a sealed
 * one is never accepted silently (`unkeyed`): it is what a rewrite with a recomputed plain chain
 * looks like.
 *
 * Segments are preallocated: the ledger extends a segment with zero bytes ahead of the records
 * and overwrites them in place (so a durable append needs only an fdatasync, no block
 * allocation). JSON text never contains a raw NUL byte, so zeros can never be part of a record:
 * a run of 0x00 bytes that reaches the end of the file is unused space; a record cut short by a
 * NUL is a torn record; and a zero run with anything non-zero after it is a bad region, judged
 * like any other bad line (at the tail it is dropped; valid records after it mean corruption).
 */
import { createHash, createHmac, createSecretKey, hash as oneShotHash, type KeyObject } from 'node:crypto';
import type { JournalRecord } from '../ports';

/** prevHash of the very first record of a ledger. */
export const GENESIS_HASH = '0'.repeat(64);

/** Record type of the first record of every segment after the first (live state snapshot). */
export const CHECKPOINT_TYPE = 'ledger.checkpoint';

const CHECKSUM_PREFIX = ',"checksum":"';
const CHECKSUM_PREFIX_BYTES = Buffer.from(CHECKSUM_PREFIX, 'latin1');
const QUOTE = 0x22;
const CLOSE_BRACE = 0x7d;
const TRAILER_LENGTH = CHECKSUM_PREFIX.length + 64 + 2; // ,"checksum":"<64>"}
const NEWLINE = 0x0a;
const NUL = 0x00;
/** Compared against in blocks to skip long zero runs without a byte-by-byte JS loop. */
const ZERO_BLOCK = Buffer.alloc(4096);
const HEX64 = /^[0-9a-f]{64}$/;
const KEY_ID = /^[0-9a-f]{16}$/;

/** A record as stored: the journal record plus its chain fields. */
export interface StoredRecord extends JournalRecord {
  prevHash: string;
  checksum: string;
  /** Set on sealed records: which key's HMAC `checksum` is (see `ChainKey`). */
  keyId?: string;
}

/**
 * The ledger's key: seals records with HMAC-SHA256. `id` is written beside each sealed record so
 * a record sealed with another key is told apart from a changed one; it is itself an HMAC of a
 * fixed label, so it says nothing about the secret.
 */
export interface ChainKey {
  readonly id: string;
  /** HMAC-SHA256 hex of `data` with the key. */
  mac(data: string | Uint8Array): string;
  /** The secret as hex (only to hand it to a verification worker; a function, so it is never serialized). */
  secretHex(): string;
}

/** Bytes of a ledger key: 32 random bytes, kept in the keychain as 64 hex characters. */
export const CHAIN_KEY_BYTES = 32;

/** The `ChainKey` of a 32-byte secret. */
export function chainKey(secret: Uint8Array): ChainKey {
  if (secret.length !== CHAIN_KEY_BYTES) throw new Error(`a ledger key is ${CHAIN_KEY_BYTES} bytes, got ${secret.length}`);
  const key: KeyObject = createSecretKey(Buffer.from(secret));
  const mac = (data: string | Uint8Array) => createHmac('sha256', key).update(data).digest('hex');
  return { id: mac('warden.ledger.key-id.v1').slice(0, 16), mac, secretHex: () => key.export().toString('hex') };
}

/**
 * How a decoded record's checksum was checked: `plain` sha256, `sealed` with the key given,
 * `unverified` (sealed, but no key was given: structure and chain only), or `other-key` (sealed
 * with a key that is not the one given: it cannot be checked).
 */
export type Seal = 'plain' | 'sealed' | 'unverified' | 'other-key';

/** sha256 hex of a byte range or string. */
export function sha256Hex(data: string | Uint8Array): string {
  // The one-shot form avoids a Hash object per record: recovery hashes every line.
  return typeof oneShotHash === 'function'
    ? oneShotHash('sha256', data as Buffer, 'hex')
    : createHash('sha256').update(data).digest('hex');
}

/**
 * Serializes one record to its line (with the trailing newline) and returns its checksum.
 *
 * `payload` must already be JSON-shaped (redacted, round-tripped); it is written as given.
 */
export function encodeRecord(
  seq: number,
  time: number,
  type: string,
  payload: Record<string, unknown>,
  prevHash: string,
  key: ChainKey | null = null,
): { line: Buffer; checksum: string } {
  const { text, checksum } = encodeRecordText(seq, time, type, JSON.stringify(payload), prevHash, key);
  return { line: Buffer.from(text, 'utf8'), checksum };
}

/**
 * Serializes one record to its line as text (with the trailing newline), from the payload's JSON.
 *
 * Why: the ledger already holds the payload's JSON (from redaction) and writes a whole batch as
 * one buffer, so it needs neither a second JSON pass nor a buffer per record. `payloadJson` must
 * be `JSON.stringify` of a JSON-shaped object. The body is well-formed UTF-16 (JSON.stringify
 * escapes lone surrogates), so hashing the string hashes exactly its UTF-8 bytes on disk.
 */
export function encodeRecordText(seq: number, time: number, type: string, payloadJson: string, prevHash: string, key: ChainKey | null = null): { text: string; checksum: string } {
  const plain = `{"seq":${seq},"time":${time},"type":${JSON.stringify(type)},"payload":${payloadJson},"prevHash":"${prevHash}"`;
  const body = key ? `${plain},"keyId":"${key.id}"` : plain;
  const checksum = key ? key.mac(body) : sha256Hex(body);
  return { text: `${body}${CHECKSUM_PREFIX}${checksum}"}\n`, checksum };
}

/** Why one line was rejected. */
export type LineProblem =
  | 'torn' // no trailing newline: the write never finished
  | 'unparseable' // not a JSON record of the expected shape
  | 'checksum' // bytes changed after writing
  | 'chain' // prevHash is not the previous record's checksum (a record removed, inserted or reordered)
  | 'sequence' // seq does not follow the previous record's seq
  | 'key' // sealed with a key Warden does not hold (wrong or missing key): it cannot be checked
  | 'unkeyed'; // a plain (unsealed) record after sealed ones: rewritten with a recomputed plain chain

/** One line the scanner could not accept. */
export interface BadLine {
  offset: number;
  length: number;
  problem: LineProblem;
  /** seq the line claims, when it could be read. */
  seq?: number;
}

/** A valid record and where it sits in its segment. */
export interface ScannedRecord {
  record: StoredRecord;
  offset: number;
  length: number;
}

/** Result of decoding one line on its own (no chain check). */
type Decoded = { ok: true; record: StoredRecord; seal: Seal } | { ok: false; problem: 'unparseable' | 'checksum'; seq?: number };

/**
 * Decodes and checksums one line (without its newline). A sealed record is checked with `key`;
 * without a key (null) it is read but not authenticated (`unverified`), and one sealed with
 * another key is returned as `other-key` (the caller decides: it is never a valid record).
 */
export function decodeLine(line: Buffer, key: ChainKey | null = null): Decoded {
  if (line.length <= TRAILER_LENGTH) return { ok: false, problem: 'unparseable' };
  const bodyEnd = line.length - TRAILER_LENGTH;
  const prefixEnd = bodyEnd + CHECKSUM_PREFIX_BYTES.length;
  if (
    line[line.length - 1] !== CLOSE_BRACE ||
    line[line.length - 2] !== QUOTE ||
    CHECKSUM_PREFIX_BYTES.compare(line, bodyEnd, prefixEnd) !== 0
  ) {
    return { ok: false, problem: 'unparseable' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.toString('utf8'));
  } catch {
    return { ok: false, problem: 'unparseable' };
  }
  if (!isRecordShape(parsed)) return { ok: false, problem: 'unparseable' };
  // `checksum` is the last key, so JSON.parse took it from the fixed-position trailer checked
  // above; the hash covers every byte before that trailer.
  const body = line.subarray(0, bodyEnd);
  if (parsed.keyId === undefined) {
    if (sha256Hex(body) !== parsed.checksum) return { ok: false, problem: 'checksum', seq: parsed.seq };
    return { ok: true, record: parsed, seal: 'plain' };
  }
  if (!key) return { ok: true, record: parsed, seal: 'unverified' };
  if (parsed.keyId !== key.id) return { ok: true, record: parsed, seal: 'other-key' };
  if (key.mac(body) !== parsed.checksum) return { ok: false, problem: 'checksum', seq: parsed.seq };
  return { ok: true, record: parsed, seal: 'sealed' };
}

function isRecordShape(value: unknown): value is StoredRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(r.seq) &&
    (r.seq as number) >= 1 &&
    Number.isFinite(r.time) &&
    typeof r.type === 'string' &&
    typeof r.payload === 'object' &&
    r.payload !== null &&
    !Array.isArray(r.payload) &&
    typeof r.prevHash === 'string' &&
    r.prevHash.length === 64 &&
    typeof r.checksum === 'string' &&
    r.checksum.length === 64 &&
    (r.keyId === undefined || (typeof r.keyId === 'string' && KEY_ID.test(r.keyId)))
  );
}

/** What the chain expects of the next record. `null` prevHash accepts any anchor (see scanSegment). */
export interface ChainCursor {
  prevHash: string | null;
  nextSeq: number | null;
  /** The key id of the previous record when it was sealed (a plain record may not follow it). */
  sealedBy?: string | null;
}

/** Everything found in one segment. */
export interface SegmentScan {
  records: ScannedRecord[];
  bad: BadLine[];
  /** Byte length up to and including the last line that was accepted. */
  validLength: number;
  /**
   * Where the trailing run of zero bytes (preallocated, unused space) starts; `bytes.length` when
   * the segment does not end in zeros. Everything between `validLength` and here was rejected.
   */
  unusedFrom: number;
  /** Where the chain stands after this segment (for the next one). */
  cursor: ChainCursor;
}

/**
 * Index of the first non-zero byte at or after `from`, or `bytes.length` if there is none.
 *
 * Why: a preallocated segment ends in up to a chunk of zeros that recovery must skip on every
 * start; comparing 4 KiB blocks natively keeps that to microseconds.
 */
export function firstNonZero(bytes: Uint8Array, from: number): number {
  let i = from;
  // Byte steps up to a block boundary, then whole blocks, then bytes again.
  while (i < bytes.length && (i & 4095) !== 0) {
    if (bytes[i] !== NUL) return i;
    i++;
  }
  while (i + ZERO_BLOCK.length <= bytes.length && ZERO_BLOCK.compare(bytes, i, i + ZERO_BLOCK.length) === 0) i += ZERO_BLOCK.length;
  while (i < bytes.length) {
    if (bytes[i] !== NUL) return i;
    i++;
  }
  return bytes.length;
}

/**
 * Scans one segment's bytes line by line from `start` (a record boundary), checking each record
 * and the chain, up to the first record boundary at or past `end` (then `unusedFrom` is where it
 * stopped: a slice of a longer scan). Offsets in the result are offsets in `bytes`.
 *
 * After the first bad line, later lines are still checked on their own (checksum) so that a bad
 * record in the middle (valid records after it) can be told apart from a torn tail; records after
 * a break are reported in `records` with the chain re-anchored on them, so a single flipped byte
 * yields exactly one bad line. The caller decides what a bad line means.
 *
 * Zero bytes (see the file comment): a zero run reaching the end of `bytes` is unused space and
 * ends the scan; a line cut short by zeros that run to the end is `torn` up to the first NUL; a
 * zero run followed by anything else is one bad region (`unparseable`, with the newline right
 * after it if there is one), and a line with a NUL inside is one bad line (`unparseable`: NUL
 * never parses); the chain re-anchors after either.
 *
 * Sealed records are checked with `key` (see `decodeLine`). A record sealed with another key, or
 * a plain record after a sealed one, is kept in `records` (it is whole, never a torn tail to cut
 * off) and reported as a bad line, once per run.
 */
export function scanSegment(bytes: Buffer, cursor: ChainCursor, start = 0, end = bytes.length, key: ChainKey | null = null): SegmentScan {
  const records: ScannedRecord[] = [];
  const bad: BadLine[] = [];
  let { prevHash, nextSeq } = cursor;
  let sealedBy = cursor.sealedBy ?? null;
  let offset = start;
  let validLength = start;
  let unusedFrom = bytes.length;
  while (offset < bytes.length) {
    if (offset >= end) {
      // Stopped at a record boundary by the caller's limit (a slice of a longer scan).
      unusedFrom = offset;
      break;
    }
    if (bytes[offset] === NUL) {
      const end = firstNonZero(bytes, offset);
      if (end === bytes.length) {
        unusedFrom = offset;
        break;
      }
      // Zeros with data after them: whatever stood here is gone (or was never written). A newline
      // right after the zeros belongs to the lost record.
      const length = (bytes[end] === NEWLINE ? end + 1 : end) - offset;
      bad.push({ offset, length, problem: 'unparseable' });
      prevHash = null;
      nextSeq = null;
      offset += length;
      continue;
    }
    const nl = bytes.indexOf(NEWLINE, offset);
    const line = bytes.subarray(offset, nl === -1 ? bytes.length : nl);
    const nul = line.indexOf(NUL);
    if (nul !== -1 && firstNonZero(bytes, offset + nul) === bytes.length) {
      // A record that stops at zeros running to the end never finished (JSON has no raw NUL):
      // torn, and the zeros after it are unused space.
      bad.push({ offset, length: nul, problem: 'torn' });
      unusedFrom = offset + nul;
      break;
    }
    if (nl === -1) {
      bad.push({ offset, length: bytes.length - offset, problem: 'torn' });
      break;
    }
    const length = nl + 1 - offset;
    const decoded = decodeLine(line, key);
    if (!decoded.ok) {
      bad.push({ offset, length, problem: decoded.problem, ...(decoded.seq !== undefined ? { seq: decoded.seq } : {}) });
      // The lost record's checksum is unknown: re-anchor on whatever valid record comes next.
      prevHash = null;
      nextSeq = null;
    } else {
      const r = decoded.record;
      if ((prevHash !== null && r.prevHash !== prevHash) || (prevHash === null && !HEX64.test(r.prevHash))) {
        bad.push({ offset, length, problem: 'chain', seq: r.seq });
      } else if (nextSeq !== null && r.seq !== nextSeq) {
        bad.push({ offset, length, problem: 'sequence', seq: r.seq });
      } else if (decoded.seal === 'other-key' && sealedBy !== r.keyId) {
        // The first of a run sealed with a key we do not hold: reported once, not per record.
        bad.push({ offset, length, problem: 'key', seq: r.seq });
      } else if (r.keyId === undefined && sealedBy !== null) {
        bad.push({ offset, length, problem: 'unkeyed', seq: r.seq });
      }
      records.push({ record: r, offset, length });
      prevHash = r.checksum;
      nextSeq = r.seq + 1;
      sealedBy = r.keyId ?? null;
      validLength = nl + 1;
    }
    offset = nl + 1;
  }
  return { records, bad, validLength, unusedFrom, cursor: { prevHash, nextSeq, sealedBy } };
}
