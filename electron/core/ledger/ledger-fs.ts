/**
 * The file operations the ledger needs, behind a small interface so tests can count syncs, inject
 * failures or slow syncs while still writing real files. The default implementation is plain
 * node:fs with the callback API (lower overhead per call than FileHandle, which matters when the
 * sync is the cost being measured). Every call runs on libuv's thread pool: the ledger lives in
 * Electron's main process, which also runs every window's input and IPC, so a slow disk must make
 * calls wait for their sync, never the event loop.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { copyPrivate, makePrivateFolder, openPrivateFd, syncFolder } from '../storage/private-files';

/** What the ledger does to the disk. Every method works on real paths/descriptors. */
export interface LedgerFs {
  mkdirp(dir: string): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  readFile(path: string): Promise<Buffer>;
  /** Opens for reading (`r`), read+write without truncating (`r+`), or creates (`wx` exclusively, `w`). */
  open(path: string, mode: 'r' | 'r+' | 'wx' | 'w'): Promise<number>;
  /** Reads up to `length` bytes at `position` (fewer only at the end of the file). */
  read(fd: number, length: number, position: number): Promise<Buffer>;
  /** Writes the whole buffer at `position` (loops over short writes). */
  write(fd: number, data: Buffer, position: number): Promise<void>;
  /** Full fsync: data and every piece of metadata (used where a file's size or existence changes). */
  fsync(fd: number): Promise<void>;
  /**
   * fdatasync: the data, plus only the metadata needed to read it back (a changed size
   * included). The durable-append path uses it: records overwrite preallocated zeros in place, so
   * no block allocation has to be committed and the barrier costs about one device flush.
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

/** The real filesystem. */
export const nodeLedgerFs: LedgerFs = {
  // Created through the one storage helper: files 0600, folders 0700 (private-files.ts).
  mkdirp: (dir) => makePrivateFolder(dir),
  readdir: (dir) => fs.promises.readdir(dir),
  readFile: (path) => fs.promises.readFile(path),
  open: (path, mode) => openPrivateFd(path, mode),
  write: async (fd, data, position) => {
    let written = 0;
    while (written < data.length) {
      const n = await cb<number>((done) => fs.write(fd, data, written, data.length - written, position + written, done));
      if (n <= 0) throw new Error(`ledger: write returned ${n}`);
      written += n;
    }
  },
  read: async (fd, length, position) => {
    const buffer = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = await cb<number>((done) => fs.read(fd, buffer, got, length - got, position + got, done));
      if (n === 0) break;
      got += n;
    }
    return got === length ? buffer : buffer.subarray(0, got);
  },
  fsync: (fd) => cb<void>((done) => fs.fsync(fd, done)),
  fdatasync: (fd) => cb<void>((done) => fs.fdatasync(fd, done)),
  ftruncate: (fd, length) => cb<void>((done) => fs.ftruncate(fd, length, done)),
  close: (fd) => cb<void>((done) => fs.close(fd, done)),
  rename: (from, to) => fs.promises.rename(from, to),
  unlink: (path) => fs.promises.unlink(path),
  copyFile: (from, to) => copyPrivate(from, to),
  exists: async (path) => {
    try {
      await fs.promises.access(path);
      return true;
    } catch {
      return false;
    }
  },
  fsyncDir: (dir) => syncFolder(dir),
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

/**
 * A LedgerFs whose syncs (fsync and fdatasync) take `delayMs` longer, as on a slow or busy disk.
 * The delay is a timer, so the event loop stays free, exactly as with a real slow device.
 */
export function slowSyncFs(delayMs: number, base: LedgerFs = nodeLedgerFs): LedgerFs {
  const later = <T>(p: Promise<T>): Promise<T> => p.then((v) => new Promise<T>((resolve) => setTimeout(() => resolve(v), delayMs)));
  return { ...base, fsync: (fd) => later(base.fsync(fd)), fdatasync: (fd) => later(base.fdatasync(fd)) };
}

/** `dir/name`, kept here so path handling of the ledger lives in one place. */
export function inDir(dir: string, name: string): string {
  return join(dir, name);
}
