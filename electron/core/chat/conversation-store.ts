/**
 * Conversations on disk: one JSON file per conversation in the user-data folder, written
 * atomically (temporary file, fsync, rename, fsync of the folder) so a crash leaves either the
 * old or the new version, never half of one. All I/O is asynchronous; the main thread never
 * waits on the disk. Saves of one conversation are coalesced: while one write is in flight, the
 * next keeps only the latest state.
 *
 * Without a folder (tests, the browser host) conversations live in memory only.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Conversation, type ConversationSummary } from '../../../shared/contract/chat';

const FILE = /^(c-[a-z0-9-]{1,80})\.json$/;

/** Keeps every conversation in memory and mirrors each to its own file. */
export class ConversationStore {
  private readonly conversations = new Map<string, Conversation>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly dirty = new Set<string>();
  /** Files that could not be read at load, with why (shown in logs; the files are left alone). */
  readonly problems: string[] = [];

  constructor(private readonly dir: string | null) {}

  /** Reads every conversation file. Unreadable ones are reported and skipped, never overwritten. */
  async load(): Promise<void> {
    if (!this.dir) return;
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir)) {
      const m = FILE.exec(name);
      if (!m) continue;
      try {
        const parsed = Conversation.safeParse(JSON.parse(await readFile(join(this.dir, name), 'utf8')));
        if (!parsed.success || parsed.data.id !== m[1]) throw new Error(parsed.success ? 'its id does not match the file name' : parsed.error.issues[0]?.message ?? 'invalid');
        this.conversations.set(parsed.data.id, parsed.data);
      } catch (error) {
        this.problems.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** Summaries, newest first; `search` keeps those whose title contains it (case-insensitive). */
  list(search?: string): ConversationSummary[] {
    const needle = search?.trim().toLowerCase();
    const out: ConversationSummary[] = [];
    for (const c of this.conversations.values()) {
      if (needle && !c.title.toLowerCase().includes(needle)) continue;
      out.push(summaryOf(c));
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
  }

  /** The live conversation object (callers change it, then `save`). */
  get(id: string): Conversation | undefined {
    return this.conversations.get(id);
  }

  all(): Conversation[] {
    return [...this.conversations.values()];
  }

  /** A new id that no conversation has. */
  newId(): string {
    return `c-${randomUUID()}`;
  }

  /** Adds or replaces a conversation and writes it. */
  async put(conversation: Conversation): Promise<void> {
    this.conversations.set(conversation.id, conversation);
    await this.save(conversation.id);
  }

  /**
   * Writes one conversation's current state. Resolves once a write that includes every change
   * made before this call is on disk.
   */
  save(id: string): Promise<void> {
    if (!this.dir) return Promise.resolve();
    const inFlight = this.writing.get(id);
    if (inFlight) {
      // One more write after the current one carries everything changed meanwhile.
      this.dirty.add(id);
      const next = () => (this.dirty.has(id) ? this.save(id) : (this.writing.get(id) ?? Promise.resolve()));
      return inFlight.then(next, next);
    }
    const write = this.writeNow(id).finally(() => {
      this.writing.delete(id);
    });
    this.writing.set(id, write);
    return write;
  }

  /** Removes a conversation and its file. */
  async delete(id: string): Promise<boolean> {
    const had = this.conversations.delete(id);
    await this.writing.get(id)?.catch(() => undefined);
    if (this.dir) await rm(join(this.dir, `${id}.json`), { force: true });
    return had;
  }

  /** Waits for every write in flight (shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.writing.values()].map((w) => w.catch(() => undefined)));
  }

  private async writeNow(id: string): Promise<void> {
    this.dirty.delete(id);
    const conversation = this.conversations.get(id);
    if (!conversation || !this.dir) return;
    const text = JSON.stringify(conversation);
    const final = join(this.dir, `${id}.json`);
    const temp = join(this.dir, `.${id}.${randomUUID().slice(0, 8)}.tmp`);
    const file = await open(temp, 'w');
    try {
      await file.writeFile(text, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    // Deleted while writing: drop the temporary file instead of resurrecting it.
    if (!this.conversations.has(id)) {
      await rm(temp, { force: true });
      return;
    }
    await rename(temp, final);
    await syncFolder(this.dir);
  }
}

/** The list entry of a conversation. */
export function summaryOf(c: Conversation): ConversationSummary {
  return { id: c.id, title: c.title, providerId: c.providerId, model: c.model, createdAt: c.createdAt, updatedAt: c.updatedAt, state: c.state };
}

/** Makes a rename durable (POSIX); folders cannot be opened for sync on Windows, where rename is durable enough. */
async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
