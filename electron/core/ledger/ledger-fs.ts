/**
 * The file operations the ledger needs, behind a small interface so tests can count fsyncs or
 * inject failures while still writing real files. The default implementation is plain node:fs
 * (callback API: lower overhead per call than FileHandle, which matters when fsync is the cost
 * being measured).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';

/** What the ledger does to the disk. Every method works on real paths/descriptors. */
export interface LedgerFs {
  mkdirp(dir: string): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  readFile(path: string): Promise<Buffer>;
  /** Opens for read+write without truncating (`r+`), or creates exclusively (`wx`). */
  open(path: string, mode: 'r+' | 'wx' | 'w'): Promise<number>;
  /** Writes the whole buffer at `position` (loops over short writes). May complete synchronously. */
  write(fd: number, data: Buffer, position: number): Promise<void>;
  /** Full fsync: data and every piece of metadata (used where a file's size or existence changes). */
  fsync(fd: number): Promise<void>;
  /**
   * fdatasync: the data, plus only the metadata needed to read it back (a changed size
   * included). The durable-append path uses it: records overwrite preallocated zeros in place, so
   * no block allocation has to be committed and the barrier costs about one device flush. The
   * real implementation runs it on the calling thread while flushes are fast (`adaptiveSync`).
   */
  fdatasync(fd: number): Promise<void>;
  ftruncate(fd: number, length: number): Promise<void>;
  close(fd: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  copyFile(from: string, to: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  /** fsync of a directory, so a create/rename/unlink inside it is durable. */
  fsyncDir(dir: string): Promise<void>;
}

function cb<T>(run: (done: (err: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value as T))));
}

const RESOLVED: Promise<void> = Promise.resolve();

/** A sync that took at most this long may run on the calling thread (see `adaptiveSync`). */
export const INLINE_SYNC_LIMIT_MS = 2;

/** The two ways to make one fdatasync: blocking the calling thread, or on libuv's thread pool. */
export interface SyncCalls {
  inline(fd: number): void;
  pooled(fd: number, done: (err: NodeJS.ErrnoException | null) => void): void;
}

/**
 * fdatasync that runs on the calling thread while the disk answers fast, and on the thread pool
 * otherwise.
 *
 * Why: a durable append is one device flush on the path of every tool call. Handed to the thread
 * pool it costs two extra cross-thread wake-ups (to the worker, and back to the event loop),
 * which on these machines is tens of microseconds on top of a ~150 µs flush; made inline, the
 * thread sleeps in the syscall and wakes once. Blocking the event loop is only acceptable while
 * it is short, so the last sync's duration decides: the first sync, any sync after one that took
 * longer than `limitMs`, and any after a failure go to the thread pool (timed too, so a disk that
 * is fast again brings syncs back inline). The worst case is one slow flush blocking the loop
 * once, the same as any synchronous file API (SQLite's, for instance) would.
 */
export function adaptiveSync(calls: SyncCalls = { inline: fs.fdatasyncSync, pooled: fs.fdatasync }, limitMs = INLINE_SYNC_LIMIT_MS, now: () => number = () => performance.now()): (fd: number) => Promise<void> {
  let lastMs = Number.POSITIVE_INFINITY;
  return (fd) => {
    const started = now();
    if (lastMs <= limitMs) {
      try {
        calls.inline(fd);
      } catch (error) {
        lastMs = Number.POSITIVE_INFINITY;
        return Promise.reject(error);
      }
      lastMs = now() - started;
      return RESOLVED;
    }
    return new Promise<void>((resolve, reject) =>
      calls.pooled(fd, (err) => {
        lastMs = err ? Number.POSITIVE_INFINITY : now() - started;
        if (err) reject(err);
        else resolve();
      }),
    );
  };
}

/** The real filesystem. */
export const nodeLedgerFs: LedgerFs = {
  mkdirp: async (dir) => {
    await fs.promises.mkdir(dir, { recursive: true });
  },
  readdir: (dir) => fs.promises.readdir(dir),
  readFile: (path) => fs.promises.readFile(path),
  open: (path, mode) => cb<number>((done) => fs.open(path, mode, 0o600, done)),
  write: (fd, data, position) => {
    // A synchronous pwrite: the bytes go to the page cache in microseconds, far less than a
    // threadpool round trip (two event-loop wake-ups), and the ledger's single writer already
    // serializes writes. Durability is the fsync's job, which stays asynchronous.
    try {
      let written = 0;
      while (written < data.length) {
        const n = fs.writeSync(fd, data, written, data.length - written, position + written);
        if (n <= 0) throw new Error(`ledger: write returned ${n}`);
        written += n;
      }
      return RESOLVED;
    } catch (error) {
      return Promise.reject(error);
    }
  },
  fsync: (fd) => cb<void>((done) => fs.fsync(fd, done)),
  fdatasync: adaptiveSync(),
  ftruncate: (fd, length) => cb<void>((done) => fs.ftruncate(fd, length, done)),
  close: (fd) => cb<void>((done) => fs.close(fd, done)),
  rename: (from, to) => fs.promises.rename(from, to),
  unlink: (path) => fs.promises.unlink(path),
  copyFile: (from, to) => fs.promises.copyFile(from, to),
  exists: async (path) => {
    try {
      await fs.promises.access(path);
      return true;
    } catch {
      return false;
    }
  },
  fsyncDir: async (dir) => {
    // Windows cannot open a directory for fsync; its rename is durable enough through the
    // metadata journal, so this is a POSIX-only step.
    if (process.platform === 'win32') return;
    const fd = await cb<number>((done) => fs.open(dir, 'r', done));
    try {
      await cb<void>((done) => fs.fsync(fd, done));
    } finally {
      await cb<void>((done) => fs.close(fd, done));
    }
  },
};

/** Counts calls per operation while delegating to a real LedgerFs (for group-commit tests). */
export function countingFs(base: LedgerFs = nodeLedgerFs): { fs: LedgerFs; counts: Record<keyof LedgerFs, number> } {
  const counts = Object.fromEntries(Object.keys(base).map((k) => [k, 0])) as Record<keyof LedgerFs, number>;
  const wrapped = {} as Record<string, unknown>;
  for (const key of Object.keys(base) as (keyof LedgerFs)[]) {
    const fn = base[key] as (...args: unknown[]) => unknown;
    wrapped[key] = (...args: unknown[]) => {
      counts[key]++;
      return fn(...args);
    };
  }
  return { fs: wrapped as unknown as LedgerFs, counts };
}

/** `dir/name`, kept here so path handling of the ledger lives in one place. */
export function inDir(dir: string, name: string): string {
  return join(dir, name);
}
