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
import { JsonFileFolder, keepAsIs, type Scrub } from '../storage/json-file-folder';
import { Conversation, type ConversationSummary } from '../../../shared/contract/chat';

const FILE = /^(c-[a-z0-9-]{1,80})\.json$/;

/** Keeps every conversation in memory and mirrors each to its own file. */
export class ConversationStore {
  private readonly conversations = new Map<string, Conversation>();
  /** Files that could not be read at load, with why (shown in logs; the files are left alone). */
  readonly problems: string[] = [];
  private readonly files: JsonFileFolder;

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
   */
  save(id: string): Promise<void> {
    return this.files.save(id);
  }

  /** Removes a conversation and its file. */
  async delete(id: string): Promise<boolean> {
    const had = this.conversations.delete(id);
    await this.files.remove(id);
    return had;
  }

  /** Waits for every write in flight (shutdown). */
  flush(): Promise<void> {
    return this.files.flush();
  }
}

/** The list entry of a conversation. */
export function summaryOf(c: Conversation): ConversationSummary {
  return { id: c.id, title: c.title, providerId: c.providerId, model: c.model, createdAt: c.createdAt, updatedAt: c.updatedAt, state: c.state };
}
