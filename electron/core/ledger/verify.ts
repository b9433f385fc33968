/**
 * `verify(dir)`: checks a ledger folder without changing it — every record's checksum, the hash
 * chain within and across segments, sequence numbers — and names the first broken record.
 *
 * Read-only on purpose: it is what a person runs on a copy they suspect was tampered with, and
 * what the crash test runs after every recovery.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerVerifyResult } from '../../../shared/domain/ledger';
import { GENESIS_HASH, scanSegment, type ChainCursor } from './format';
import { segmentName, segmentNumbers } from './ledger';

/**
 * Verifies the ledger in `dir`; `ok` is false at the first problem of any kind.
 *
 * The first retained segment may start from a deleted one (retention); its first record is then
 * accepted as the chain's anchor. A torn tail counts as broken: recovery has not run yet.
 */
export async function verifyLedger(dir: string): Promise<LedgerVerifyResult> {
  const numbers = segmentNumbers(await readdir(dir));
  let cursor: ChainCursor = numbers[0] === 1 ? { prevHash: GENESIS_HASH, nextSeq: 1 } : { prevHash: null, nextSeq: null };
  let records = 0;
  for (const n of numbers) {
    const name = segmentName(n);
    const bytes = await readFile(join(dir, name));
    const scan = scanSegment(bytes, cursor);
    const firstBad = scan.bad[0];
    if (firstBad) {
      const excerpt = bytes.subarray(firstBad.offset, firstBad.offset + Math.min(firstBad.length, 240)).toString('utf8');
      return {
        ok: false,
        segments: numbers.map(segmentName),
        records: records + scan.records.filter((r) => r.offset < firstBad.offset).length,
        firstBroken: {
          segment: name,
          offset: firstBad.offset,
          problem: firstBad.problem,
          ...(firstBad.seq !== undefined ? { seq: firstBad.seq } : {}),
          excerpt,
        },
      };
    }
    records += scan.records.length;
    cursor = scan.cursor;
  }
  return { ok: true, segments: numbers.map(segmentName), records, firstBroken: null };
}
