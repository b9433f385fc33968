/**
 * What each (server, account) listed the last time it was connected, and the earlier versions of
 * each tool's contract.
 *
 * Two things need it. The permission matrix lists every configured account, connected or not, so
 * a person can set up "Work" and "Personal" before connecting them; a disconnected account shows
 * the tools it listed last time, marked as such. And a tool that changed (a rug pull) is shown as
 * before and after: description, input schema, annotations and the server's instructions of the
 * version the person allowed, next to the one listed now.
 *
 * Discovery never grants anything: this store only remembers what was listed. Every text in it is
 * the server's, already sanitized for display, and is shown labelled as the server's claim.
 *
 * One JSON file per server in the given folder, written asynchronously and atomically (temporary
 * file, fsync, rename), saves of one server coalesced. Without a folder it lives in memory.
 */
import { JsonFileFolder, keepAsIs, type Scrub } from '../storage/json-file-folder';
import { z } from 'zod';

/** One tool as listed, with the server's text sanitized for display. */
export const ListedTool = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
  contractHash: z.string(),
});
export type ListedTool = z.infer<typeof ListedTool>;

/** One version of a tool's contract, with the server's instructions it was listed under. */
export const ContractVersion = z.object({
  tool: ListedTool,
  instructions: z.string().nullable(),
  /** When this version was first listed. */
  firstSeenAt: z.number(),
});
export type ContractVersion = z.infer<typeof ContractVersion>;

const AccountListing = z.object({
  listedAt: z.number(),
  endpointHash: z.string(),
  instructions: z.string().nullable(),
  tools: z.array(ListedTool),
  /** Tool name → versions, oldest first (the last one is the current). */
  history: z.record(z.string(), z.array(ContractVersion)),
  /** Tool name → the contract hash a person last reviewed (kept asking, allowed or disabled). */
  reviewed: z.record(z.string(), z.string()).default({}),
});
export type AccountListing = z.infer<typeof AccountListing>;

const ServerFile = z.object({ version: z.literal(1), serverId: z.string(), accounts: z.record(z.string(), AccountListing) });
type ServerFile = z.infer<typeof ServerFile>;

/** How many versions of one tool are kept (the pinned one is usually among the last few). */
export const MAX_VERSIONS = 6;

const FILE = /^([a-z0-9-]{1,80})\.json$/;

/** A tool whose contract changed after an earlier listing, not yet reviewed by the person. */
export interface UnreviewedChange {
  serverId: string;
  accountId: string;
  toolName: string;
  before: ContractVersion;
  after: ContractVersion;
}

/** Remembers listings per (server, account); see the file comment. */
export class ListingStore {
  private readonly servers = new Map<string, ServerFile>();
  /** Files that could not be read at load (left alone, reported). */
  readonly problems: string[] = [];
  private readonly files: JsonFileFolder;

  /**
   * `scrub` (the app's redactor) runs over every file written: a server can put a token it was
   * given into a description, and listings are kept on disk.
   */
  constructor(dir: string | null, scrub: Scrub = keepAsIs) {
    this.files = new JsonFileFolder(dir, (serverId) => this.servers.get(serverId), scrub);
  }

  /** Reads every server's file; an unreadable one is reported and ignored, never overwritten until the next listing. */
  async load(): Promise<void> {
    await this.files.readAll(
      FILE,
      (serverId, value) => {
        const parsed = ServerFile.safeParse(value);
        if (!parsed.success || parsed.data.serverId !== serverId) throw new Error(parsed.success ? 'its server id does not match the file name' : (parsed.error.issues[0]?.message ?? 'invalid'));
        // A listing recorded while loading is newer than the file: keep it.
        if (!this.servers.has(serverId)) this.servers.set(serverId, parsed.data);
      },
      this.problems,
    );
  }

  /**
   * Records what a (server, account) lists now. A tool whose contract hash differs from its last
   * version gets a new version (the earlier ones are kept, up to {@link MAX_VERSIONS}).
   */
  record(input: { serverId: string; accountId: string; listedAt: number; endpointHash: string; instructions: string | null; tools: ListedTool[] }): void {
    const file = this.servers.get(input.serverId) ?? { version: 1 as const, serverId: input.serverId, accounts: {} };
    const prior = file.accounts[input.accountId];
    const history: Record<string, ContractVersion[]> = prior ? { ...prior.history } : {};
    for (const tool of input.tools) {
      const versions = history[tool.name] ?? [];
      const last = versions.at(-1);
      if (last && last.tool.contractHash === tool.contractHash) {
        // Same contract: refresh the stored text (sanitizing may have improved), keep the date.
        history[tool.name] = [...versions.slice(0, -1), { ...last, tool, instructions: input.instructions }];
        continue;
      }
      // A version seen before (a server flipping back) moves to the end instead of repeating.
      const kept = versions.filter((v) => v.tool.contractHash !== tool.contractHash);
      history[tool.name] = [...kept, { tool, instructions: input.instructions, firstSeenAt: input.listedAt }].slice(-MAX_VERSIONS);
    }
    file.accounts[input.accountId] = {
      listedAt: input.listedAt,
      endpointHash: input.endpointHash,
      instructions: input.instructions,
      tools: input.tools,
      history,
      reviewed: prior?.reviewed ?? {},
    };
    this.servers.set(input.serverId, file);
    void this.save(input.serverId).catch((error: unknown) => console.error(`listings: saving ${input.serverId} failed`, error));
  }

  /** The last listing of a (server, account), or undefined if it never listed. */
  last(serverId: string, accountId: string): AccountListing | undefined {
    return this.servers.get(serverId)?.accounts[accountId];
  }

  /** Every account of a server that ever listed, by id. */
  accountsOf(serverId: string): string[] {
    return Object.keys(this.servers.get(serverId)?.accounts ?? {});
  }

  /** The version of a tool with this contract hash, if still kept. */
  version(serverId: string, accountId: string, toolName: string, contractHash: string): ContractVersion | undefined {
    return this.last(serverId, accountId)?.history[toolName]?.find((v) => v.tool.contractHash === contractHash);
  }

  /** The tool's versions, oldest first (the last is the one listed most recently). */
  versions(serverId: string, accountId: string, toolName: string): readonly ContractVersion[] {
    return this.last(serverId, accountId)?.history[toolName] ?? [];
  }

  /**
   * Tools whose current version differs from an earlier one and whose current version the person
   * has not reviewed yet; `before` is the version they last reviewed, or the one before.
   */
  unreviewed(serverId: string, accountId: string): UnreviewedChange[] {
    const listing = this.last(serverId, accountId);
    if (!listing) return [];
    const out: UnreviewedChange[] = [];
    for (const [toolName, versions] of Object.entries(listing.history)) {
      const after = versions.at(-1);
      if (!after || versions.length < 2 || !listing.tools.some((t) => t.name === toolName)) continue;
      const reviewed = listing.reviewed[toolName];
      if (reviewed === after.tool.contractHash) continue;
      const before = (reviewed !== undefined ? versions.find((v) => v.tool.contractHash === reviewed) : undefined) ?? versions.at(-2)!;
      out.push({ serverId, accountId, toolName, before, after });
    }
    return out;
  }

  /** Marks the tool's current version as reviewed by the person (it leaves the changed list). */
  markReviewed(serverId: string, accountId: string, toolName: string, contractHash: string): void {
    const listing = this.last(serverId, accountId);
    if (!listing) return;
    listing.reviewed = { ...listing.reviewed, [toolName]: contractHash };
    void this.save(serverId).catch((error: unknown) => console.error(`listings: saving ${serverId} failed`, error));
  }

  /** Forgets a removed server, or one removed account of it. */
  async forget(serverId: string, accountId?: string): Promise<void> {
    const file = this.servers.get(serverId);
    if (!file) return;
    if (accountId !== undefined) {
      delete file.accounts[accountId];
      if (Object.keys(file.accounts).length > 0) return this.save(serverId);
    }
    this.servers.delete(serverId);
    await this.files.remove(serverId);
  }

  /** Waits for every write in flight (shutdown). */
  flush(): Promise<void> {
    return this.files.flush();
  }

  private save(serverId: string): Promise<void> {
    return this.files.save(serverId);
  }
}
