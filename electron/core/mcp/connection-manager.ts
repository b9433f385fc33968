/**
 * The connection layer: one `Connection` (one SDK Client) per (server, account), and the two
 * ports the gate uses — `ToolRegistry` (what tools exist right now, with their pinned hashes) and
 * `ToolExecutor` (the only way a `tools/call` is made).
 *
 * Tool identity is the triple (serverId, accountId, toolName) where serverId is Warden's own id
 * for the server, never anything the server says about itself (serverInfo.name).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { RegistryChange, ToolCallResult, ToolDescriptor, ToolExecutor, ToolRegistry } from '../gate/ports';
import type { ServerDefinition } from '../../../shared/domain/servers';
import { WardenError } from '../../../shared/result';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { BrowserOpener, Clock, SecretStore } from '../ports';
import type { Elicitor } from '../elicitation/elicitation';
import type { SamplingAnswer } from './sampling-handler';
import { Connection, type ConnectionDeps, type ConnectionStatus, type ReconnectPolicy, type ServerNoticeMethod } from './connection';
import type { DiscoveredTool, ToolsChange } from './contract-diff';
import type { CallProgress } from './tool-call';
import { LogRing, type LogLine } from './log-ring';
import type { ServerDirectory } from './ports';
import { CallNotSentError } from '../gate/call-outcome';
import { serverKindOf, serverLocationOf } from '../preview/trusted-preview';
import { spawnedWorkingFolder } from '../paths/resolve';
import { displayStrings, displayText } from '../text/sanitize';

export interface ConnectionManagerOptions {
  directory: ServerDirectory;
  secrets: SecretStore;
  clientInfo?: { name: string; version: string };
  /** The OAuth provider for one (server, account), if it is signed in or signing in. */
  authProviderFor?: (definition: ServerDefinition, accountId: string) => OAuthClientProvider | undefined;
  /** The fetch HTTP transports of OAuth servers use when their provider brings none (Warden's brings its own). */
  authFetch?: FetchLike;
  /** Answers servers' elicitation requests (absent = elicitation not offered to servers). */
  elicitation?: { elicitor: Elicitor; browser: BrowserOpener };
  /** The folders given to (server, account) as roots (absent = roots not offered to servers). */
  roots?: (serverId: string, accountId: string) => Array<{ uri: string; name: string }>;
  /** Answers (server, account)'s sampling requests (absent = sampling not offered to servers). */
  sampling?: (serverId: string, accountId: string, params: Parameters<SamplingAnswer>[0], signal: AbortSignal) => ReturnType<SamplingAnswer>;
  /** Per-call timeout when neither the call nor the server sets one (default 60 s). */
  defaultCallTimeoutMs?: number;
  /** Bound on connecting + first discovery (default 30 s). */
  connectTimeoutMs?: number;
  reconnect?: Partial<ReconnectPolicy>;
  /** Bound on one re-list after a server said its tools changed (default 5 s); longer counts as failed. */
  relistTimeoutMs?: number;
  /**
   * A listing older than this is re-listed before the next call is decided (default 10 minutes).
   * A function is read at each check, so a changed preference applies without reconnecting.
   */
  relistAfterMs?: number | (() => number);
  /** Time source for the age of listings (default: the system clock). */
  clock?: Clock;
  /** Hashes pinned earlier (e.g. from the ledger), so the first discovery after start compares with them. */
  pinnedFor?: (serverId: string, accountId: string) => { tools: Record<string, string>; instructionsHash: string | null } | undefined;
  logLimits?: { maxLines?: number; maxBytes?: number };
  /** Opens the in-memory transport of a built-in server (electron/core/demo); absent = built-ins cannot connect. */
  builtinTransport?: ConnectionDeps['builtinTransport'];
}

/** A snapshot of one connection for the status channel. */
export interface ConnectionSnapshot {
  serverId: string;
  accountId: string;
  status: ConnectionStatus;
  toolCount: number;
  /** Sanitized, untrusted server instructions (labelled as the server's claim in the UI). */
  instructions?: string;
  instructionsHash: string | null;
  endpointHash: string;
}

/** Events the manager emits; the integrator forwards them to contract events, the ledger and the policy. */
export interface ConnectionManagerEvents {
  status: (serverId: string, accountId: string, status: ConnectionStatus) => void;
  toolsChanged: (change: ToolsChange) => void;
  progress: (operationId: string, target: { serverId: string; accountId: string; toolName: string }, progress: CallProgress) => void;
  /** A server's log message or resource/prompt notice (server-data.ts reads and checks `params`). */
  notice: (serverId: string, accountId: string, method: ServerNoticeMethod, params: unknown) => void;
}

/** Default bound on a re-list the server asked for: past it, Always Allow on that server asks. */
export const DEFAULT_RELIST_TIMEOUT_MS = 5_000;
/** Default age after which a listing is re-checked before the next call is decided. */
export const DEFAULT_RELIST_AFTER_MS = 10 * 60 * 1000;

/** The re-list interval as the connection reads it: read at each check, so a changed preference applies at once. */
function relistAfter(option: ConnectionManagerOptions['relistAfterMs']): () => number {
  if (typeof option === 'function') return option;
  const ms = option ?? DEFAULT_RELIST_AFTER_MS;
  return () => ms;
}

type Key = string;
// Ids never contain NUL (EntityId is [a-z0-9-]), so this is unambiguous and cheaper than JSON.
const keyOf = (serverId: string, accountId: string): Key => `${serverId}\u0000${accountId}`;

/** Owns every MCP connection; implements the gate's ToolRegistry and ToolExecutor. */
export class ConnectionManager implements ToolRegistry, ToolExecutor {
  private readonly connections = new Map<Key, Connection>();
  private readonly logs = new Map<Key, LogRing>();
  private readonly registryListeners = new Set<(change: RegistryChange) => void>();
  private readonly listeners: { [K in keyof ConnectionManagerEvents]: Set<ConnectionManagerEvents[K]> } = {
    status: new Set(),
    toolsChanged: new Set(),
    progress: new Set(),
    notice: new Set(),
  };
  private closed = false;
  /** Descriptors by discovered tool object (a re-discovery makes new objects, so no stale entry is ever hit). */
  private readonly descriptors = new WeakMap<DiscoveredTool, ToolDescriptor>();

  constructor(private readonly options: ConnectionManagerOptions) {}

  /** Subscribes to one kind of manager event; returns an unsubscribe function. */
  on<K extends keyof ConnectionManagerEvents>(event: K, listener: ConnectionManagerEvents[K]): () => void {
    const set = this.listeners[event] as Set<ConnectionManagerEvents[K]>;
    set.add(listener);
    return () => set.delete(listener);
  }

  /** ToolRegistry change feed: the gate re-validates everything not yet executing. */
  subscribe(listener: (change: RegistryChange) => void): () => void {
    this.registryListeners.add(listener);
    return () => this.registryListeners.delete(listener);
  }

  private emitRegistry(change: RegistryChange): void {
    for (const l of this.registryListeners) l(change);
  }

  /** The log ring of one (server, account), created on first use. */
  private logFor(serverId: string, accountId: string): LogRing {
    const key = keyOf(serverId, accountId);
    let ring = this.logs.get(key);
    if (!ring) {
      ring = new LogRing(this.options.logLimits);
      this.logs.set(key, ring);
    }
    return ring;
  }

  /**
   * Connects one (server, account) and discovers its tools. Resolves with the resulting status
   * (connected, error with reason, auth_required); never leaves a half-open connection.
   */
  async connect(serverId: string, accountId: string): Promise<ConnectionStatus> {
    if (this.closed) throw new WardenError('CONFLICT', 'the connection manager is shut down');
    const definition = this.options.directory.server(serverId);
    if (!definition) throw new WardenError('NOT_FOUND', `serverId: no server "${serverId}"`);
    if (this.options.directory.accountLabel(serverId, accountId) === undefined) {
      throw new WardenError('NOT_FOUND', `accountId: server "${serverId}" has no account "${accountId}"`);
    }
    const key = keyOf(serverId, accountId);
    let connection = this.connections.get(key);
    if (connection && definitionChanged(connection.definition, definition)) {
      await connection.disconnect();
      this.connections.delete(key);
      connection = undefined;
      this.emitRegistry({ kind: 'endpoint-changed', serverId });
    }
    if (!connection) {
      connection = this.createConnection(definition, accountId);
      this.connections.set(key, connection);
    }
    await connection.connect().catch(() => {});
    return connection.status;
  }

  private createConnection(definition: ServerDefinition, accountId: string): Connection {
    const serverId = definition.id;
    const reconnect: ReconnectPolicy = { baseDelayMs: 500, maxDelayMs: 30_000, maxAttempts: 6, ...this.options.reconnect };
    return new Connection({
      definition,
      endpointHash: this.options.directory.endpointHash(definition),
      accountId,
      secrets: this.options.secrets,
      log: this.logFor(serverId, accountId),
      clientInfo: this.options.clientInfo ?? { name: 'warden', version: '0.1.0' },
      authProviderFor: this.options.authProviderFor,
      authFetch: this.options.authFetch,
      elicitation: this.options.elicitation && {
        ...this.options.elicitation,
        serverLabel: definition.name,
      },
      ...(this.options.roots ? { roots: () => this.options.roots!(serverId, accountId) } : {}),
      ...(this.options.sampling ? { sampling: (params, signal) => this.options.sampling!(serverId, accountId, params, signal) } : {}),
      defaultCallTimeoutMs: this.options.defaultCallTimeoutMs ?? 60_000,
      connectTimeoutMs: this.options.connectTimeoutMs ?? 30_000,
      relistTimeoutMs: this.options.relistTimeoutMs ?? DEFAULT_RELIST_TIMEOUT_MS,
      relistAfterMs: relistAfter(this.options.relistAfterMs),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      reconnect,
      pinned: this.options.pinnedFor?.(serverId, accountId),
      builtinTransport: this.options.builtinTransport,
      onStatus: (status) => {
        for (const l of this.listeners.status) l(serverId, accountId, status);
        if (status.state !== 'connected' && status.state !== 'connecting') {
          this.emitRegistry({ kind: 'disconnected', serverId, accountId });
        }
      },
      onToolsChanged: (change) => {
        for (const l of this.listeners.toolsChanged) l(change);
        this.emitRegistry({ kind: 'tools-changed', serverId, accountId });
      },
      onServerNotice: (method, params) => {
        for (const l of this.listeners.notice) {
          try {
            l(serverId, accountId, method, params);
          } catch (error) {
            console.error(`connections: a notice listener failed for ${serverId}`, error);
          }
        }
      },
    });
  }

  /** Disconnects one account of a server, or every account of it; kills stdio process trees. */
  async disconnect(serverId: string, accountId?: string): Promise<void> {
    const targets = [...this.connections.values()].filter((c) => c.serverId === serverId && (accountId === undefined || c.accountId === accountId));
    await Promise.all(targets.map((c) => c.disconnect()));
  }

  /**
   * Disconnects and forgets every connection (and its log) of a server, or only those whose
   * account no longer exists in the directory: for a removed server or account.
   */
  async forget(serverId: string, options: { onlyMissingAccounts?: boolean } = {}): Promise<void> {
    const doomed = [...this.connections.entries()].filter(
      ([, c]) => c.serverId === serverId && (!options.onlyMissingAccounts || this.options.directory.accountLabel(serverId, c.accountId) === undefined),
    );
    await Promise.all(doomed.map(([, c]) => c.disconnect()));
    for (const [key] of doomed) {
      this.connections.delete(key);
      this.logs.delete(key);
    }
  }

  /** The connection object of one (server, account), if one was ever opened. */
  connection(serverId: string, accountId: string): Connection | undefined {
    return this.connections.get(keyOf(serverId, accountId));
  }

  /** Tells a connected (server, account) that its roots changed (`notifications/roots/list_changed`). */
  rootsChanged(serverId: string, accountId: string): void {
    this.connection(serverId, accountId)?.rootsChanged();
  }

  /** Status snapshots of every known connection (optionally of one server). */
  snapshot(serverId?: string): ConnectionSnapshot[] {
    return [...this.connections.values()]
      .filter((c) => serverId === undefined || c.serverId === serverId)
      .map((c) => ({
        serverId: c.serverId,
        accountId: c.accountId,
        status: c.status,
        toolCount: c.tools().length,
        ...(c.instructions !== undefined ? { instructions: c.instructions } : {}),
        instructionsHash: c.instructionsHash,
        endpointHash: c.endpointHash,
      }));
  }

  /** Captured log lines (stderr + Warden's notes) of one (server, account), raw: sanitize before display. */
  logLines(serverId: string, accountId: string, afterSeq = 0, limit?: number): { lines: LogLine[]; dropped: number } {
    const ring = this.logs.get(keyOf(serverId, accountId));
    return ring ? { lines: ring.read(afterSeq, limit), dropped: ring.dropped } : { lines: [], dropped: 0 };
  }

  /** Stores one line the server sent as a log message (`notifications/message`) in its log. */
  serverLogLine(serverId: string, accountId: string, text: string): void {
    if (!this.connections.has(keyOf(serverId, accountId))) return;
    this.logFor(serverId, accountId).server(text);
  }

  /** Discovered tools with their display descriptions and field hashes, for the UI. */
  discoveredTools(serverId: string, accountId: string): DiscoveredTool[] {
    return this.connections.get(keyOf(serverId, accountId))?.tools() ?? [];
  }

  // ---- ToolRegistry -------------------------------------------------------------------------

  /** The tool as currently listed by a connected (server, account); undefined otherwise. */
  getTool(serverId: string, accountId: string, toolName: string): ToolDescriptor | undefined {
    const connection = this.connections.get(keyOf(serverId, accountId));
    if (!connection || connection.status.state !== 'connected') return undefined;
    const tool = connection.tool(toolName);
    return tool ? this.descriptor(connection, tool) : undefined;
  }

  /**
   * Undefined when the (server, account)'s listing can be used as it is; otherwise a promise that
   * settles once the re-list it waits for has (see `Connection.whenListed`).
   */
  whenListed(serverId: string, accountId: string): Promise<void> | undefined {
    return this.connections.get(keyOf(serverId, accountId))?.whenListed();
  }

  /** Every tool of every connected (server, account), optionally filtered. */
  listTools(filter: { serverId?: string; accountId?: string } = {}): ToolDescriptor[] {
    const out: ToolDescriptor[] = [];
    for (const c of this.connections.values()) {
      if (c.status.state !== 'connected') continue;
      if (filter.serverId !== undefined && c.serverId !== filter.serverId) continue;
      if (filter.accountId !== undefined && c.accountId !== filter.accountId) continue;
      for (const t of c.tools()) out.push(this.descriptor(c, t));
    }
    return out;
  }

  /**
   * The descriptor of a discovered tool, built once per discovery (the gate asks for it twice per
   * call) and rebuilt when a label changes. Frozen, because every caller gets the same object.
   */
  private descriptor(connection: Connection, tool: DiscoveredTool): ToolDescriptor {
    const serverLabel = connection.definition.name;
    const accountLabel = this.options.directory.accountLabel(connection.serverId, connection.accountId);
    const problem = connection.listingProblem;
    const cached = this.descriptors.get(tool);
    if (cached !== undefined && cached.serverLabel === serverLabel && cached.accountLabel === accountLabel && cached.unverifiedListing === problem) return cached;
    const built = this.buildDescriptor(connection, tool, serverLabel, accountLabel, problem);
    this.descriptors.set(tool, built);
    return built;
  }

  /**
   * The server's words in a descriptor (title, description, string annotations) are already
   * sanitized: everything that shows or forwards them (approval previews, the matrix, the tools
   * offered to a model) reads them from here. The raw text only ever fed the contract hash.
   */
  private buildDescriptor(connection: Connection, tool: DiscoveredTool, serverLabel: string, accountLabel: string | undefined, problem: string | undefined): ToolDescriptor {
    return Object.freeze({
      serverId: tool.serverId,
      accountId: tool.accountId,
      name: tool.name,
      ...(tool.title !== undefined ? { title: displayText(tool.title, 256) } : {}),
      ...(tool.displayDescription !== undefined ? { description: tool.displayDescription } : {}),
      ...(tool.descriptionFlags !== undefined ? { descriptionFlags: tool.descriptionFlags } : {}),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.annotations ? { annotations: Object.freeze(displayStrings(tool.annotations, 256)) } : {}),
      // A built-in server is Warden's own code: its annotations are Warden's words, not a claim.
      ...(connection.definition.transport === 'builtin' ? { annotationsTrusted: true as const } : {}),
      contractHash: tool.contractHash,
      endpointHash: connection.endpointHash,
      serverLabel,
      serverKind: serverKindOf(connection.definition),
      serverLocation: serverLocationOf(connection.definition),
      ...(accountLabel !== undefined ? { accountLabel } : {}),
      // The process was spawned with this cwd (relative to ours, or ours when unset).
      ...(connection.definition.transport === 'stdio' ? { workingFolder: spawnedWorkingFolder(connection.definition.cwd) } : {}),
      ...(problem !== undefined ? { unverifiedListing: problem } : {}),
      ...(tool.unusable !== undefined ? { unusable: tool.unusable } : {}),
    });
  }

  // ---- ToolExecutor -------------------------------------------------------------------------

  /**
   * The gate's executor: sends `tools/call` on the (server, account) connection.
   *
   * Rejections carry the outcome (see gate/call-outcome.ts): CallNotSentError (`notSent`) → failed,
   * ToolCallFailedError (`callFailed`) → failed, anything else → outcome_unknown. Progress is
   * emitted as a `progress` event tagged with the operation id; it is requested from the server
   * only for calls that start while a `progress` listener is subscribed.
   */
  call(
    target: { serverId: string; accountId: string; toolName: string },
    args: Readonly<Record<string, unknown>>,
    options: { signal: AbortSignal; operationId: string; timeoutMs?: number },
  ): Promise<ToolCallResult> {
    const connection = this.connections.get(keyOf(target.serverId, target.accountId));
    if (!connection) return Promise.reject(new CallNotSentError(`${target.serverId}/${target.accountId} is not connected`));
    // Progress is asked of the server only while someone listens for it (the UI subscribes once,
    // at start): a progressToken makes the server parse and send more for nothing otherwise.
    const operationId = options.operationId;
    return connection.callTool(target.toolName, args, {
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      ...(this.listeners.progress.size === 0 ? {} : { onProgress: (progress: CallProgress) => this.forwardProgress(operationId, target, progress) }),
    });
  }

  private forwardProgress(operationId: string, target: { serverId: string; accountId: string; toolName: string }, progress: CallProgress): void {
    for (const l of this.listeners.progress) {
      try {
        l(operationId, target, progress);
      } catch (error) {
        // A listener's failure (e.g. the UI event contract refusing a value) must not reach the
        // server's stdout handler.
        console.error(`connections: a progress listener failed for operation ${operationId}`, error);
      }
    }
  }

  /** Disconnects everything (app shutdown); no child process outlives this. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.connections.values()].map((c) => c.disconnect()));
  }
}

/** True when the definition changed in a way that needs a new connection (anything but the name). */
function definitionChanged(a: ServerDefinition, b: ServerDefinition): boolean {
  return JSON.stringify({ ...a, name: '' }) !== JSON.stringify({ ...b, name: '' });
}
