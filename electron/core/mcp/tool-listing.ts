/**
 * The tools one connection lists, and whether that listing can be trusted now.
 *
 * Lists every page (following `nextCursor`), holds the listing against the pinned contracts
 * (contract-diff.ts) and reports changes. A listing is only trusted while it is current: from the
 * moment a server says its tools changed until a re-list succeeds, and while a re-list has failed
 * or timed out, `problem` says why the listing cannot be relied on and the policy holds Always
 * Allow at Ask. A listing older than `relistAfterMs` is re-listed before the next call
 * (`whenListed`), so a tool changed without any notice is caught too.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { visibleName } from '../../../shared/display';
import { instructionsHash } from '../canonical';
import type { Clock } from '../ports';
import { displayText } from '../text/sanitize';
import { compileInputSchema, schemaSizeProblem } from '../validation/schemas';
import { errorText, TEXT_LIMITS, withTimeout } from './connection-common';
import { compareListing, type DiscoveredTool, type ListingTrigger, type Pins, type ToolsChange } from './contract-diff';
import type { LogRing } from './log-ring';

/** What a listing needs from its connection. */
export interface ToolListingDeps {
  serverId: string;
  accountId: string;
  /** The server's name as the person gave it, for `problem`. */
  serverName: string;
  log: LogRing;
  clock: Clock;
  /** Bound on one page of tools/list. */
  pageTimeoutMs: number;
  /** Bound on one re-list (all pages) after the first discovery; a re-list that takes longer has failed. */
  relistTimeoutMs: number;
  /** A listing older than this is re-listed before the next call (see `whenListed`). */
  relistAfterMs: () => number;
  /** Hashes pinned before this connection existed (e.g. from the ledger), to compare the first discovery with. */
  pinned?: { tools: Record<string, string>; instructionsHash: string | null };
  onToolsChanged: (change: ToolsChange) => void;
  /** The SDK client of the live connection, if any. */
  client(): Client | undefined;
  /** The server's `instructions` on the live connection (raw). */
  instructions(): string | undefined;
  /** False once a newer connect or a disconnect has replaced `generation`. */
  isCurrent(generation: number): boolean;
}

export class ToolListing {
  private toolsByName = new Map<string, DiscoveredTool>();
  private pins: Pins | undefined;
  private instructionsHashValue: string | null = null;
  /** The chain of discoveries: a re-list starts only after the one before it settled. */
  private discovery: Promise<void> = Promise.resolve();
  private relistQueued = false;
  /** The newest re-list asked for, until it settles: what a call waits for (see `whenListed`). */
  private relisting: Promise<void> | undefined;
  /** Set from the moment a re-list is asked for until it settles: why it was asked for. */
  private pending: 'list_changed' | 'recheck' | undefined;
  /** Why the last re-list failed (refused, failed or timed out); cleared once one succeeds. */
  private failure: string | undefined;
  /** When the last listing that was applied was made (clock ms). */
  private listedAt = 0;
  /** Bumped per discovery started; only the newest one's answer is applied (a timed-out one may answer late). */
  private listSeq = 0;

  constructor(private readonly deps: ToolListingDeps) {
    if (deps.pinned) this.pins = { tools: new Map(Object.entries(deps.pinned.tools)), instructionsHash: deps.pinned.instructionsHash, fields: new Map() };
  }

  /** The tools the server currently lists. */
  tools(): DiscoveredTool[] {
    return [...this.toolsByName.values()];
  }

  /** One listed tool by its server-given name. */
  tool(name: string): DiscoveredTool | undefined {
    return this.toolsByName.get(name);
  }

  get instructionsHash(): string | null {
    return this.instructionsHashValue;
  }

  /** The re-list under way, if any (a connect waits for it: connected means listed as the server says now). */
  get relistUnderWay(): Promise<void> | undefined {
    return this.relisting;
  }

  /** A new connection lists from scratch: nothing left over from the last one's re-lists. */
  reset(): void {
    this.relistQueued = false;
    this.relisting = undefined;
    this.pending = undefined;
    this.failure = undefined;
  }

  /** The connection is gone: nothing is listed (the pins stay, to compare the next listing with). */
  clear(): void {
    this.toolsByName = new Map();
  }

  /**
   * Why the current listing cannot be relied on (the server announced a change and the re-list is
   * under way, or a re-list failed or timed out), in words; undefined when it is current.
   */
  get problem(): string | undefined {
    const name = this.deps.serverName;
    if (this.failure !== undefined) return `${name} could not re-list its tools (${this.failure}); Always Allow is held at Ask until it lists them again`;
    if (this.pending === 'list_changed') return `${name} said its tools changed and is being re-listed`;
    if (this.pending === 'recheck') return `${name} is re-listing its tools`;
    return undefined;
  }

  /**
   * For a connected server: undefined when the listing can be used as it is; otherwise a promise
   * that settles (never rejects) when the re-list it waits for has settled. A listing older than
   * `relistAfterMs` is re-listed now. After a failed re-list, calls are not held up: Always Allow
   * already asks, and each call has the server list its tools again in the background (a re-list
   * that starts after the call; calls in a burst share one).
   *
   * Why: a call must be decided against what the server lists now, never against a listing the
   * server abandoned or one nobody has checked for a long time.
   */
  whenListed(generation: number): Promise<void> | undefined {
    if (this.failure !== undefined) {
      // A re-list that starts after this call (queued behind one already running, at most one).
      void this.requestRelist(generation, 'recheck');
      return undefined;
    }
    if (this.relisting !== undefined) return this.relisting;
    if (this.deps.clock.now() - this.listedAt < this.deps.relistAfterMs()) return undefined;
    return this.requestRelist(generation, 'recheck');
  }

  /**
   * Asks for a re-list after the one running (a burst costs at most one more) and marks the
   * listing as not current until it settles. Resolves (never rejects) when it has: with the new
   * listing applied, or with `failure` saying why the server could not be re-listed.
   */
  requestRelist(generation: number, trigger: 'list_changed' | 'recheck'): Promise<void> {
    if (this.pending !== 'list_changed') this.pending = trigger;
    if (this.relistQueued && this.relisting !== undefined) return this.relisting;
    this.relistQueued = true;
    const timeoutMs = this.deps.relistTimeoutMs;
    const run: Promise<void> = this.discovery.then(async () => {
      this.relistQueued = false;
      if (!this.deps.isCurrent(generation)) return;
      let failure: string | undefined;
      try {
        await withTimeout(this.discover(generation, trigger), timeoutMs, 'tools/list timed out');
      } catch (error) {
        failure = displayText(errorText(error), TEXT_LIMITS.note);
        this.deps.log.note(`re-listing tools failed: ${failure}`);
      }
      // A notice that arrived meanwhile has queued another re-list: that one decides.
      if (!this.deps.isCurrent(generation) || this.relistQueued) return;
      this.pending = undefined;
      this.failure = failure;
    });
    this.discovery = run;
    this.relisting = run;
    void run.finally(() => {
      if (this.relisting === run) this.relisting = undefined;
    });
    return run;
  }

  /** Lists every tool (following nextCursor), holds the listing against the pins and reports changes. */
  async discover(generation: number, trigger: ListingTrigger): Promise<void> {
    const client = this.deps.client();
    if (!client) return;
    const seq = ++this.listSeq;
    const hiddenNames = new Set<string>();
    const listed = (await this.listAll(client)).map((tool) => {
      const visible = withVisibleNames(tool);
      if (visible !== tool) hiddenNames.add(visible.name);
      return visible;
    });
    if (!this.deps.isCurrent(generation)) return;
    // A listing overtaken by a newer one (a re-list given up on that answers late) changes nothing.
    if (seq !== this.listSeq) return;

    const { serverId, accountId, log } = this.deps;
    const compared = compareListing(listed, this.pins, { serverId, accountId, instructionsHash: instructionsHash(this.deps.instructions() ?? null), trigger });
    for (const name of compared.duplicates) log.note(`server listed tool ${JSON.stringify(displayText(name, TEXT_LIMITS.name))} twice; keeping the first`);
    for (const tool of compared.tools.values()) prepareSchemas(tool, log, hiddenNames.has(tool.name));
    this.toolsByName = compared.tools;
    this.listedAt = this.deps.clock.now();
    this.pins = compared.pins;
    this.instructionsHashValue = compared.change.instructionsHash;
    const change = compared.change;
    if (change.trigger === 'initial' || compared.isChange) {
      if (change.changed.length || change.instructionsChanged) {
        log.note(
          `tool contracts changed: ${change.changed.map((c) => `${displayText(c.name, TEXT_LIMITS.name)} (${c.fields.join(', ')})`).join('; ')}${change.instructionsChanged ? ' instructions changed' : ''}`,
        );
      }
      this.deps.onToolsChanged(change);
    }
  }

  /** Every page of tools/list, refusing a server that repeats a cursor or never stops. */
  private async listAll(client: Client): Promise<Tool[]> {
    const listed: Tool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    do {
      // A plain request, not `client.listTools`: the SDK would remember output schemas from the
      // last page only; Warden checks results itself against the listing it pinned (output-schema.ts).
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? undefined : { cursor } }, ListToolsResultSchema, { timeout: this.deps.pageTimeoutMs });
      listed.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined) {
        if (seenCursors.has(cursor)) throw new Error(`server repeated tools/list cursor ${JSON.stringify(cursor).slice(0, 80)}`);
        seenCursors.add(cursor);
        if (seenCursors.size > 1000) throw new Error('server returned more than 1000 pages of tools');
      }
    } while (cursor !== undefined);
    return listed;
  }
}

/** Deepest a listed schema's keys are looked at; a deeper schema cannot be shown and is refused. */
const MAX_KEY_DEPTH = 64;

/**
 * A listed tool with its name and every key of its schemas at any depth written by `visibleName`
 * (hidden characters, line breaks and tabs as escapes), or the same object when none needed it.
 *
 * Why here: this is where every tool a server lists enters Warden, and its names are identities
 * the window, dialogs, rules, the model and the activity log show and compare. A name with hidden
 * characters can pass for another one (`report\u202Egpj.sh` reads as `reporths.jpg`), or print a
 * line of its own in a dialog. Such a tool is listed under the visible name and never called
 * (`prepareSchemas` marks it unusable), so a name changed here never goes back to the server.
 */
function withVisibleNames(tool: Tool): Tool {
  let changed = false;
  const visibleKeys = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (depth > MAX_KEY_DEPTH) {
      changed = true;
      return {};
    }
    if (Array.isArray(value)) return value.map((v) => visibleKeys(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const shown = visibleName(key);
      if (shown !== key) changed = true;
      out[shown] = visibleKeys(v, depth + 1);
    }
    return out;
  };
  const name = visibleName(tool.name);
  const inputSchema = visibleKeys(tool.inputSchema, 0) as Tool['inputSchema'];
  const outputSchema = tool.outputSchema === undefined ? undefined : (visibleKeys(tool.outputSchema, 0) as Tool['outputSchema']);
  if (name === tool.name && !changed) return tool;
  return { ...tool, name, inputSchema, ...(outputSchema !== undefined ? { outputSchema } : {}) };
}

/**
 * Compiles a listed tool's input schema now, at listing time, so no call compiles one (each
 * contract is compiled once; validation/schemas.ts), and marks the tool unusable, with the reason
 * in the server's log, when a schema is too large or cannot be compiled, or when its name or a
 * key of its schemas had hidden characters (`withVisibleNames`).
 */
function prepareSchemas(tool: DiscoveredTool, log: LogRing, hiddenNames: boolean): void {
  const output = schemaSizeProblem(tool.outputSchema, 'outputSchema');
  const input = compileInputSchema(tool.contractHash, tool.inputSchema);
  const hidden = hiddenNames
    ? 'its name or a field name holds hidden characters or line breaks (shown as \\u codes), which can make it look like another tool or field'
    : undefined;
  const problem = hidden ?? output ?? (input.ok ? undefined : input.problem);
  if (problem === undefined) return;
  tool.unusable = problem;
  log.note(`tool ${displayText(tool.name, TEXT_LIMITS.name)} cannot be used: ${problem}`);
}
