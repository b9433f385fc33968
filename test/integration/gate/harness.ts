/**
 * Test harness for the gate: a real MCP server (the SDK's McpServer) reached through a real SDK
 * Client over the SDK's InMemoryTransport, plus a ToolRegistry built from the client's
 * `tools/list` (hashes computed by the production canonical hasher) and a ToolExecutor that
 * performs `tools/call`. The server itself counts every call it receives, so tests assert on what
 * the server actually got, not on what the gate says it did.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { contractHash, endpointHash } from '../../../electron/core/canonical';
import { Gate, type GateDeps, type PolicySource } from '../../../electron/core/gate/gate';
import { MemoryHistory } from '../../../electron/core/ledger/history';
import type { RegistryChange, ToolCallResult, ToolDescriptor, ToolExecutor, ToolRegistry } from '../../../electron/core/gate/ports';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import type { Clock, Journal, JournalEntry, JournalRecord } from '../../../electron/core/ports';
import type { PolicyState } from '../../../shared/domain/policy';
import { validateJournalEntry } from '../../../shared/domain/journal-events';

/** A clock tests move by hand. */
export class FakeClock implements Clock {
  constructor(public t = 1_700_000_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** One call the server received. */
export interface ReceivedCall {
  server: string;
  tool: string;
  args: Record<string, unknown>;
}

/** A real MCP server + client pair over the in-memory transport. */
export class InMemoryMcp {
  readonly server: McpServer;
  readonly client: Client;
  readonly received: ReceivedCall[] = [];
  readonly tools = new Map<string, RegisteredTool>();
  /** Calls held open until `release()` (for in-flight cancellation tests). */
  private releaseHeld: Array<() => void> = [];
  hold = false;
  aborted = 0;

  constructor(readonly serverId: string) {
    this.server = new McpServer({ name: `fixture-${serverId}`, version: '1.0.0' });
    this.client = new Client({ name: 'warden-test', version: '1.0.0' });
  }

  /** Registers a tool that records every call, optionally holding it until released. */
  addTool(name: string, options: { description?: string; annotations?: Record<string, boolean>; shape?: z.ZodRawShape; reply?: (args: Record<string, unknown>) => string } = {}): RegisteredTool {
    const shape = options.shape ?? { path: z.string().optional(), text: z.string().optional(), n: z.number().optional() };
    const tool = this.server.registerTool(
      name,
      { description: options.description ?? `${name} tool`, inputSchema: shape, annotations: options.annotations },
      async (args: Record<string, unknown>, extra: { signal: AbortSignal }) => {
        this.received.push({ server: this.serverId, tool: name, args: structuredClone(args) });
        if (this.hold) {
          await new Promise<void>((resolve) => {
            this.releaseHeld.push(resolve);
            extra.signal.addEventListener('abort', () => {
              this.aborted++;
              resolve();
            });
          });
        }
        return { content: [{ type: 'text' as const, text: options.reply ? options.reply(args) : `${name} ok` }] };
      },
    );
    this.tools.set(name, tool);
    return tool;
  }

  async connect(): Promise<this> {
    const [a, b] = InMemoryTransport.createLinkedPair();
    await this.server.connect(a);
    await this.client.connect(b);
    return this;
  }

  release(): void {
    const held = this.releaseHeld;
    this.releaseHeld = [];
    for (const r of held) r();
  }

  count(tool?: string): number {
    return this.received.filter((c) => !tool || c.tool === tool).length;
  }

  async close(): Promise<void> {
    this.release();
    await this.client.close();
    await this.server.close();
  }
}

/** A registry over connected clients: `refresh()` re-lists tools and recomputes hashes. */
export class ClientRegistry implements ToolRegistry, ToolExecutor {
  private readonly servers = new Map<string, { mcp: { client: Client }; endpoint: string; accounts: string[]; label: string }>();
  private descriptors = new Map<string, ToolDescriptor>();
  private readonly listeners = new Set<(c: RegistryChange) => void>();
  sent = 0;

  add(serverId: string, mcp: { client: Client }, accounts: string[] = ['work'], endpoint = `node ${serverId}.js`): this {
    this.servers.set(serverId, { mcp, endpoint, accounts, label: serverId.toUpperCase() });
    return this;
  }

  /** Re-lists every server's tools (what the connection layer does on list_changed). */
  async refresh(): Promise<void> {
    const next = new Map<string, ToolDescriptor>();
    for (const [serverId, s] of this.servers) {
      const { tools } = await s.mcp.client.listTools();
      for (const accountId of s.accounts) {
        for (const t of tools) {
          next.set(key(serverId, accountId, t.name), {
            serverId,
            accountId,
            name: t.name,
            title: t.title,
            description: t.description,
            inputSchema: t.inputSchema as Record<string, unknown>,
            outputSchema: t.outputSchema as Record<string, unknown> | undefined,
            annotations: t.annotations as Record<string, unknown> | undefined,
            contractHash: contractHash(t),
            endpointHash: endpointHash({ kind: 'stdio', command: 'node', args: [s.endpoint] }),
            serverLabel: s.label,
            accountLabel: accountId,
          });
        }
      }
    }
    this.descriptors = next;
    this.emit({ kind: 'tools-changed', serverId: '*', accountId: null });
  }

  /** Simulates a changed command line for a server. */
  async setEndpoint(serverId: string, endpoint: string): Promise<void> {
    this.servers.get(serverId)!.endpoint = endpoint;
    await this.refresh();
    this.emit({ kind: 'endpoint-changed', serverId });
  }

  getTool(serverId: string, accountId: string, toolName: string): ToolDescriptor | undefined {
    return this.descriptors.get(key(serverId, accountId, toolName));
  }

  listTools(filter: { serverId?: string; accountId?: string } = {}): ToolDescriptor[] {
    return [...this.descriptors.values()].filter((d) => (!filter.serverId || d.serverId === filter.serverId) && (!filter.accountId || d.accountId === filter.accountId));
  }

  subscribe(listener: (c: RegistryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(c: RegistryChange): void {
    for (const l of this.listeners) l(c);
  }

  async call(target: { serverId: string; accountId: string; toolName: string }, args: Readonly<Record<string, unknown>>, options: { signal: AbortSignal }): Promise<ToolCallResult> {
    const s = this.servers.get(target.serverId);
    if (!s) throw new Error(`no server ${target.serverId}`);
    this.sent++;
    return (await s.mcp.client.callTool({ name: target.toolName, arguments: args as Record<string, unknown> }, undefined, { signal: options.signal })) as ToolCallResult;
  }
}

function key(s: string, a: string, t: string): string {
  return `${s}\u0000${a}\u0000${t}`;
}

/** A mutable policy holder for tests. */
export class TestPolicy implements PolicySource {
  state: PolicyState = { organization: [], conversation: [], user: [], safeMode: false };
  current(): PolicyState {
    return this.state;
  }
  set(update: Partial<PolicyState>): void {
    this.state = { ...this.state, ...update };
  }
}

/**
 * A journal that validates every entry against the journal event schemas, records the order of
 * appends and which were durable, and can hold durable appends (to observe ordering).
 */
export class RecordingJournal implements Journal {
  readonly kind = 'memory' as const;
  readonly inner: MemoryJournal;
  readonly appends: Array<{ types: string[]; durable: boolean; entries: JournalEntry[] }> = [];
  /** When set, durable appends wait for this promise (to observe ordering). */
  gate: Promise<void> | null = null;
  constructor(clock: Clock) {
    this.inner = new MemoryJournal(clock);
  }
  async append(entries: JournalEntry[], options?: { durable?: boolean }): Promise<JournalRecord[]> {
    // Every entry any gate test writes must match the documented event schemas.
    for (const e of entries) validateJournalEntry(e);
    this.appends.push({ types: entries.map((e) => (e.type === 'op.transition' ? `${String(e.payload.from)}→${String(e.payload.to)}` : e.type)), durable: options?.durable === true, entries });
    if (options?.durable && this.gate) await this.gate;
    return this.inner.append(entries);
  }
  read(): readonly JournalRecord[] {
    return this.inner.read();
  }
  size(): number {
    return this.inner.size();
  }
  async close(): Promise<void> {}
  transitions(operationId?: string): string[] {
    return this.read()
      .filter((r) => r.type === 'op.transition' && (!operationId || r.payload.operationId === operationId))
      .map((r) => `${String(r.payload.from)}→${String(r.payload.to)}`);
  }
}

/** Everything a gate test needs, over one or more in-memory MCP servers. */
export async function gateFixture(opts: { servers?: string[]; tools?: string[]; accounts?: string[]; gate?: Partial<GateDeps> } = {}) {
  const clock = new FakeClock();
  const journal = new RecordingJournal(clock);
  const policy = new TestPolicy();
  const registry = new ClientRegistry();
  const mcps = new Map<string, InMemoryMcp>();
  for (const serverId of opts.servers ?? ['gh']) {
    const mcp = new InMemoryMcp(serverId);
    for (const t of opts.tools ?? ['close_issue', 'read_file', 'delete_file']) mcp.addTool(t);
    await mcp.connect();
    mcps.set(serverId, mcp);
    registry.add(serverId, mcp, opts.accounts ?? ['work', 'personal']);
  }
  await registry.refresh();
  const gate = new Gate({ journal, history: historyOf(journal), executor: registry, registry, policy, clock, scheduleExpiry: false, ...opts.gate });
  const mcp = mcps.get((opts.servers ?? ['gh'])[0]!)!;
  return {
    clock,
    journal,
    policy,
    registry,
    gate,
    mcp,
    mcps,
    /** Allow a tool for an account, pinned to current hashes (what permissions:set does). */
    allow(toolName: string, serverId = 'gh', accountId: string | null = 'work') {
      const t = registry.getTool(serverId, accountId ?? 'work', toolName)!;
      policy.set({
        user: [...policy.state.user, { id: `allow-${serverId}-${toolName}-${accountId}`, scope: { kind: 'tool', serverId, accountId, toolName }, mode: 'allow', pin: { contractHash: t.contractHash, endpointHash: t.endpointHash } }],
      });
    },
    async close() {
      gate.close();
      for (const m of mcps.values()) await m.close();
    },
  };
}

/** What `gateFixture` returns. */
export type GateFixture = Awaited<ReturnType<typeof gateFixture>>;

/**
 * Another gate over a fixture's journal, registry (as executor too), policy and clock, with
 * `over` replacing any of them: a restart, or a gate over a failing journal or executor. The
 * caller closes it.
 */
export function gateOver(fx: GateFixture, over: Partial<GateDeps> = {}): Gate {
  const journal = over.journal && 'read' in over.journal ? (over.journal as Journal & { read(): readonly JournalRecord[] }) : fx.journal;
  return new Gate({ journal: fx.journal, history: historyOf(journal), executor: fx.registry, registry: fx.registry, policy: fx.policy, clock: fx.clock, scheduleExpiry: false, ...over });
}

/** The history of a journal that keeps its records (what the core builds over the in-memory journal). */
export function historyOf(journal: { read(): readonly JournalRecord[] }): MemoryHistory {
  return new MemoryHistory(() => journal.read());
}

/** Waits until `cond()` is true, polling on the event loop (no fixed sleeps racing real work). */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A model-sourced call to `close_issue` on gh/work in conv1; fields in `over` replace the defaults. */
export const gateCall = (over: Record<string, unknown> = {}) => ({
  source: 'model' as const,
  conversationId: 'conv1',
  serverId: 'gh',
  accountId: 'work',
  toolName: 'close_issue',
  arguments: { text: 'close #42' } as Record<string, unknown>,
  ...over,
});

/** Every operation a journal recorded (what crash recovery reads back), oldest first. */
export async function recordedIn(journal: { read(): readonly JournalRecord[] }) {
  return (await historyOf(journal).recordedOperations({ limit: 100_000 })).reverse();
}
