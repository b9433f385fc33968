/**
 * A folder of JSON files that mirror objects kept in memory, one file per id: `<id>.json`.
 *
 * Writes are asynchronous and atomic (temporary file, fsync, rename, fsync of the folder), so a
 * crash leaves either the old or the new version, never half of one, and the main thread never
 * waits on the disk. Saves of one id are coalesced: while a write is in flight, the next one
 * carries only the latest state. An object gone from memory when its write finishes is not
 * resurrected on disk.
 *
 * What is written passes `scrub` first (the app's redactor), so no store built on this folder can
 * write a secret Warden holds, whatever reached the object in memory. Files are created 0600 in
 * a 0700 folder (private-files.ts).
 *
 * Without a folder (tests, the browser host) nothing is read or written.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makePrivateFolder, openPrivate, syncFolder } from './private-files';

/** Replaces every secret Warden holds in a JSON-shaped value (the app's redactor), returning it or a clean copy. */
export type Scrub = <T>(value: T) => T;

/** For folders of a core without a redactor (it holds no registered secret): writes as is. */
export const keepAsIs: Scrub = (value) => value;

/** One JSON file per id, written atomically and scrubbed. */
export class JsonFileFolder {
  private readonly writing = new Map<string, Promise<void>>();
  private readonly dirty = new Set<string>();
  /**
   * Atomic writes that reached the disk (each is one fsync of the file and one of the folder):
   * what a test counts to prove a store does not sync more often than its rhythm says.
   */
  readonly stats = { writes: 0 };

  /**
   * `current(id)` is the object to write now, or undefined once it is gone from memory; `scrub`
   * is applied to it on every write.
   */
  constructor(
    private readonly dir: string | null,
    private readonly current: (id: string) => unknown,
    private readonly scrub: Scrub,
  ) {}

  /**
   * Hands every file whose name matches `name` (its first group is the id) to `accept`, parsed as
   * JSON. A file that does not parse or that `accept` throws on is reported in `problems` and left
   * alone, never overwritten until its id is saved again.
   */
  async readAll(name: RegExp, accept: (id: string, value: unknown) => void, problems: string[]): Promise<void> {
    if (!this.dir) return;
    await makePrivateFolder(this.dir);
    for (const file of await readdir(this.dir)) {
      const id = name.exec(file)?.[1];
      if (id === undefined) continue;
      try {
        accept(id, JSON.parse(await readFile(join(this.dir, file), 'utf8')));
      } catch (error) {
        problems.push(`${file}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** Writes one id's current state. Resolves once a write that includes every change made before this call is on disk. */
  save(id: string): Promise<void> {
    if (!this.dir) return Promise.resolve();
    const inFlight = this.writing.get(id);
    if (inFlight) {
      // One more write after the current one carries everything changed meanwhile.
      this.dirty.add(id);
      const next = () => (this.dirty.has(id) ? this.save(id) : (this.writing.get(id) ?? Promise.resolve()));
      return inFlight.then(next, next);
    }
    const write = this.writeNow(id).finally(() => this.writing.delete(id));
    this.writing.set(id, write);
    return write;
  }

  /** Deletes one id's file, after any write of it in flight. */
  async remove(id: string): Promise<void> {
    await this.writing.get(id)?.catch(() => undefined);
    if (this.dir) await rm(join(this.dir, `${id}.json`), { force: true });
  }

  /**
   * Waits for every write in flight (shutdown), and for the writes that were coalesced behind
   * them: a save made while another was in flight starts only when that one ends.
   */
  async flush(): Promise<void> {
    while (this.writing.size > 0) await Promise.all([...this.writing.values()].map((w) => w.catch(() => undefined)));
  }

  private async writeNow(id: string): Promise<void> {
    this.dirty.delete(id);
    const value = this.current(id);
    if (value === undefined || !this.dir) return;
    await makePrivateFolder(this.dir);
    const final = join(this.dir, `${id}.json`);
    const temp = join(this.dir, `.${id}.${randomUUID().slice(0, 8)}.tmp`);
    const handle = await openPrivate(temp, 'w');
    try {
      await handle.writeFile(JSON.stringify(this.scrub(value)), 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    // Removed while writing: drop the temporary file instead of resurrecting it.
    if (this.current(id) === undefined) {
      await rm(temp, { force: true });
      return;
    }
    await rename(temp, final);
    await syncFolder(this.dir);
    this.stats.writes += 1;
  }
}
