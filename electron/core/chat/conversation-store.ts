/**
 * Conversations on disk: one JSON file per conversation in the user-data folder, written
 * atomically (temporary file, fsync, rename, fsync of the folder) so a crash leaves either the
 * old or the new version, never half of one. All I/O is asynchronous; the main thread never
 * waits on the disk. Saves of one conversation are group-committed: those of one event-loop turn
 * share a write, and while one write is in flight the next keeps only the latest state.
 *
 * Without a folder (tests, the browser host) conversations live in memory only.
 */
import { randomUUID } from 'node:crypto';
import { JsonFileFolder, keepAsIs, type Scrub } from '../storage/json-file-folder';
import { Conversation, type ConversationSummary } from '../../../shared/contract/chat';

const FILE = /^(c-[a-z0-9-]{1,80})\.json$/;

/** Keeps every conversation in memory and mirrors each to its own file. */
export class ConversationStore {
  private readonly conversations = new Map<string, Conversation>();
  /** Files that could not be read at load, with why (shown in logs; the files are left alone). */
  readonly problems: string[] = [];
  private readonly files: JsonFileFolder;
  /** Saves asked for in this turn of the event loop, per conversation: one write will carry them all. */
  private readonly gathering = new Map<string, { done: Promise<void>; due: number; start: () => void; cancel: () => void }>();

  /** `scrub` (the app's redactor) runs over every conversation written. */
  constructor(dir: string | null, scrub: Scrub = keepAsIs) {
    this.files = new JsonFileFolder(dir, (id) => this.conversations.get(id), scrub);
  }

  /** Reads every conversation file. Unreadable ones are reported and skipped, never overwritten. */
  async load(): Promise<void> {
    await this.files.readAll(
      FILE,
      (id, value) => {
        const parsed = Conversation.safeParse(value);
        if (!parsed.success || parsed.data.id !== id) throw new Error(parsed.success ? 'its id does not match the file name' : (parsed.error.issues[0]?.message ?? 'invalid'));
        this.conversations.set(parsed.data.id, parsed.data);
      },
      this.problems,
    );
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
   *
   * Saves are group-committed: the write starts `withinMs` from now at the latest (next turn of
   * the event loop for 0), and every save asked for until then shares it and its two fsyncs; a
   * save asked for while a write is in flight shares the one write after it (JsonFileFolder).
   * A sooner save moves the shared write earlier, never later. What must be durable before
   * something else happens awaits the promise; nothing else does
   * (docs/decisions/0012-conversation-saves.md).
   */
  save(id: string, withinMs = 0): Promise<void> {
    const due = performance.now() + withinMs;
    const gathered = this.gathering.get(id);
    if (gathered) {
      if (due < gathered.due) {
        gathered.cancel();
        gathered.due = due;
        gathered.cancel = startAfter(withinMs, gathered.start);
      }
      return gathered.done;
    }
    let start!: () => void;
    const done = new Promise<void>((resolve) => (start = resolve)).then(() => {
      this.gathering.delete(id);
      return this.files.save(id);
    });
    this.gathering.set(id, { done, due, start, cancel: startAfter(withinMs, start) });
    return done;
  }


  /** Removes a conversation and its file. */
  async delete(id: string): Promise<boolean> {
    const had = this.conversations.delete(id);
    await this.files.remove(id);
    return had;
  }

  /** Conversation files written so far (each an atomic write: two fsyncs); tests count the syncs of a message with it. */
  get writes(): number {
    return this.files.stats.writes;
  }

  /** Waits for every write asked for or in flight (shutdown). */
  async flush(): Promise<void> {
    while (this.gathering.size > 0) {
      const waiting = [...this.gathering.values()];
      for (const g of waiting) {
        g.cancel();
        g.start();
      }
      await Promise.all(waiting.map((g) => g.done.catch(() => undefined)));
    }
    await this.files.flush();
  }
}

/** Calls `start` after `ms` (on the next turn of the event loop for 0); returns what cancels it. */
function startAfter(ms: number, start: () => void): () => void {
  if (ms <= 0) {
    const immediate = setImmediate(start);
    return () => clearImmediate(immediate);
  }
  const timer = setTimeout(start, ms);
  return () => clearTimeout(timer);
}

/** The list entry of a conversation. */
export function summaryOf(c: Conversation): ConversationSummary {
  return { id: c.id, title: c.title, providerId: c.providerId, model: c.model, createdAt: c.createdAt, updatedAt: c.updatedAt, state: c.state };
}
