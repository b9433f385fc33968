/**
 * Helpers for ledger tests: temp folders that are always removed, and reading every byte of
 * every file under a folder.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger, readLedger, type StoredRecord } from '../../../electron/core/ledger/ledger';
import type { LedgerService } from '../../../electron/core/ledger/service';
import type { AuditFilter } from '../../../shared/domain/ledger';
import type { OperationState } from '../../../shared/domain/operations';

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

/** Every record in the ledger folder `dir`, read from its segments (what a restart reads). */
export async function recordsIn(dir: string): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  for await (const { record } of readLedger(dir)) out.push(record);
  return out;
}

/** Every record an open ledger holds on disk (after what was appended so far is written). */
export async function recordsOf(ledger: Ledger): Promise<StoredRecord[]> {
  await ledger.flush().catch(() => undefined);
  return recordsIn(ledger.dir);
}

/**
 * The service's indexed history asked the way the in-memory projections answer (everything,
 * oldest first), so a test can compare the two directly.
 */
export function projectionsOf(service: LedgerService) {
  const h = service.history;
  return {
    operation: (id: string) => h.operation(id),
    operations: async (filter: { state?: OperationState | 'reconciled'; conversationId?: string } = {}) => (await allPages((offset) => h.operations({ ...filter, limit: 1000, offset }))).reverse(),
    pendingApprovals: async () => (await h.operations({ state: 'awaiting_approval', limit: 1000 })).reverse(),
    audit: async (filter: AuditFilter = {}) => (await allPages(async (offset) => (await h.audit(filter, { limit: 1000, offset })).rows)).reverse(),
    history: (id: string) => h.history(id),
    unreconciled: async () => (await h.unreconciled()).reverse(),
    operationCount: () => h.operationCount(),
  };
}

/** Every page of a newest-first query, concatenated. */
async function allPages<T>(page: (offset: number) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (;;) {
    const rows = await page(out.length);
    out.push(...rows);
    if (rows.length < 1000) return out;
  }
}
