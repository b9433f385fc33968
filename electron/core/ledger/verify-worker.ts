/**
 * Worker-thread entry: verifies one ledger folder with `verifyLedger` and posts the result back.
 *
 * Why a worker: checking every record's checksum and the hash chain of a long history is CPU work
 * the main thread must not do while the window waits on it (GUIDE: no stalls on the main thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AnchoredEnds } from './anchor';
import { chainKey } from './format';
import { verifyLedger } from './verify';

const { dir, keyHex, anchor } = workerData as { dir: string; keyHex: string | null; anchor: AnchoredEnds | null };
verifyLedger(dir, { key: keyHex ? chainKey(Buffer.from(keyHex, 'hex')) : null, anchor }).then(
  (result) => parentPort?.postMessage({ ok: true, result }),
  (error: unknown) => parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) }),
);
