/**
 * Helpers for ledger tests: temp folders that are always removed, and reading every byte of
 * every file under a folder.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../../electron/core/ledger/ledger';

/** A fresh temp folder; call the returned cleanup in afterEach/finally. */
export function tempDir(prefix = 'warden-ledger-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every file under `dir` (recursively) with its bytes. */
export function allFiles(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...allFiles(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

/** A clock that advances 1 ms per reading, deterministic across runs. */
export function steppingClock(start = 1_700_000_000_000): { now: () => number } {
  let t = start;
  return { now: () => t++ };
}

/**
 * The record bytes of a segment file: its bytes without the trailing run of preallocated zeros.
 *
 * Why: segments are preallocated, so the file's length is not where its records end; tests that
 * cut or extend the records need the real end.
 */
export function recordBytesOf(path: string): Buffer {
  const bytes = readFileSync(path);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return bytes.subarray(0, end);
}

/**
 * Writes `count` durable records (op.transition payloads numbered 0…count-1, plus `extra`
 * fields) into a ledger in `dir`, then closes it.
 */
export async function writeLedger(dir: string, count: number, preallocateBytes?: number, extra: Record<string, unknown> = {}): Promise<void> {
  const ledger = await Ledger.open({ dir, clock: steppingClock(), ...(preallocateBytes !== undefined ? { preallocateBytes } : {}) });
  for (let i = 0; i < count; i++) await ledger.append([{ type: 'op.transition', payload: { operationId: `op-${i}`, n: i, ...extra } }], { durable: true });
  await ledger.close();
}

/** Byte offsets where each line (record) of a segment's record bytes starts. */
export function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a && i + 1 < bytes.length) starts.push(i + 1);
  return starts;
}
