/**
 * One live MCP connection: one SDK `Client` for one (server, account).
 *
 * Owns the transport (stdio process or Streamable HTTP with legacy SSE fallback), the status
 * (connecting | connected | error | auth_required | disconnected), reconnection with bounded
 * exponential backoff after unexpected drops, tool discovery with pagination and contract-hash
 * pinning, and `tools/call` with timeout, cancellation and progress.
 *
 * A listing is only trusted while it is current: from the moment a server says its tools changed
 * (seen synchronously, in arrival order, before any later answer is delivered) until a re-list
 * succeeds, and while a re-list has failed or timed out, `listingProblem` says why the listing
 * cannot be relied on and the policy holds Always Allow at Ask. A listing older than
 * `relistAfterMs` is re-listed before the next call (`whenListed`), so a tool changed without any
 * notice is caught too.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode as RpcErrorCode,
  ListToolsResultSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { contractHash, instructionsHash, sha256Hex, canonicalJson } from '../canonical';
import type { ToolCallResult } from '../gate/ports';
import {
  BEARER_SECRET,
  envSecretName,
  headerSecretName,
  secretKey,
  type BuiltinServerDefinition,
  type ServerDefinition,
} from '../../../shared/domain/servers';
import { systemClock, type BrowserOpener, type Clock, type SecretStore } from '../ports';
import { ELICITATION_CAPABILITIES, registerElicitation, type Elicitor } from '../elicitation/elicitation';
import { LogRing } from './log-ring';
import { SignInNeeded } from './oauth/network-scope';
import { guardedFetchOf } from './oauth/provider';
import type { ConnectFailure } from '../../../shared/domain/connect-failure';
import { classifyConnectFailure, ConnectTimeoutError, MissingSecretError } from './connect-failure';
import { CallNotSentError, ToolCallFailedError, ToolCallOutcomeUnknownError } from '../gate/call-outcome';
import { LOGGED, ProcessTransport } from './process-transport';
import { displayText } from '../text/sanitize';
import { LinearJsonSchemaValidator } from '../validation/schemas';
import { OutputSchemas } from './output-schema';
import { registerRoots, ROOTS_CAPABILITIES } from './roots-handler';
import { registerSampling, SAMPLING_CAPABILITIES, type SamplingAnswer } from './sampling-handler';

/** Most of a server's text kept for each use (names, descriptions, instructions, messages), in UTF-8 bytes. */
const TEXT_LIMITS = { name: 256, description: 8 * 1024, instructions: 16 * 1024, message: 8 * 1024, note: 1024 } as const;

/** The state of one connection, as the UI shows it. */
export type ConnectionStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'connected'; transport: 'stdio' | 'streamable-http' | 'sse' | 'in-process'; serverName?: string; serverVersion?: string }
  | { state: 'error'; reason: string; failure?: ConnectFailure; retryInMs?: number; attempt?: number }
  | { state: 'auth_required'; reason: string }
  | { state: 'disconnected' };

/** Which parts of a tool's contract changed between two discoveries. */
export type ContractField = 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations';
const CONTRACT_FIELDS: readonly ContractField[] = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'];
/** What a pin covers: the tool's contract fields plus the server's instructions. */
export type PinnedField = ContractField | 'instructions';
const PINNED_FIELDS: readonly PinnedField[] = [...CONTRACT_FIELDS, 'instructions'];

/** A tool as discovered on one (server, account), with its pinned hashes. */
export interface DiscoveredTool {
  serverId: string;
  accountId: string;
  name: string;
  title?: string;
  /**
   * The server's description through the sanitizer (and capped): the only form shown or
   * forwarded, to a person or a model. The raw text only feeds the contract hash.
   */
  displayDescription?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  contractHash: string;
  /** One hash per contract field, so a change can be reported as "description changed". */
  fieldHashes: Record<PinnedField, string>;
}

/** What changed between the pinned and the newly discovered tools of one (server, account). */
export interface ToolsChange {
  serverId: string;
  accountId: string;
  added: string[];
  removed: string[];
  /** `fields` is empty when the earlier contract's fields are unknown (pins from an earlier run). */
  changed: Array<{ name: string; fields: PinnedField[]; oldHash: string; newHash: string }>;
  instructionsChanged: { oldHash: string | null; newHash: string } | null;
  /** The server's instructions hash in force after this discovery (journaled so pins survive restarts). */
  instructionsHash: string;
  /** Contract hashes before (pinned) and after this discovery, by tool name. */
  oldHashes: Record<string, string>;
  newHashes: Record<string, string>;
  /**
   * 'initial' for the first discovery of this connection object, otherwise 'list_changed',
   * 'reconnect', or 'recheck' (a listing re-checked before a call: too old, or the last re-list failed).
   */
  trigger: 'initial' | 'list_changed' | 'reconnect' | 'recheck';
}

/** Progress of a running tool call, forwarded from `notifications/progress`. */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** How `Connection.callTool` is bounded, stopped and observed. */
export interface CallOptions {
  /** Aborting sends `notifications/cancelled` (once the request left) and ends the call outcome_unknown. */
  signal?: AbortSignal;
  /** Bounds the wait (default: the server's, then the manager's). */
  timeoutMs?: number;
  /** Told about each progress notification of this call. */
  onProgress?: (p: CallProgress) => void;
  /**
   * Alternative to `onProgress` with no per-call closure: progress goes to
   * `ConnectionDeps.onCallProgress(progressTag, p)`.
   */
  progressTag?: unknown;
}

/** Marks the params object of one tools/call, so the send hook can tell that *this* call left. */
const CALL_STATE = Symbol('warden.callState');
interface CallState {
  sent: boolean;
}
type CallParams = {
  name: string;
  arguments: Record<string, unknown>;
  _meta?: { progressToken: number };
  [CALL_STATE]: CallState;
};
type ProgressListener = ((p: CallProgress) => void) | { tag: unknown };

export interface ReconnectPolicy {
  /** First delay (default 500 ms); doubles each attempt up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Attempts after an unexpected drop before giving up with status error (default 6). */
  maxAttempts: number;
}

/** What a connection needs from the manager. */
export interface ConnectionDeps {
  definition: ServerDefinition;
  /** The definition's endpoint hash (from the server directory: the settings own identity). */
  endpointHash: string;
  accountId: string;
  secrets: SecretStore;
  log: LogRing;
  clientInfo: { name: string; version: string };
  /** OAuth hook: the provider for an `auth.kind === 'oauth'` server's account. */
  authProviderFor?: (definition: ServerDefinition, accountId: string) => OAuthClientProvider | undefined;
  /**
   * The fetch HTTP transports of OAuth servers use when their provider brings none (Warden's
   * provider brings its server's guarded fetch, which takes precedence).
   */
  authFetch?: FetchLike;
  /** Answers a server's elicitation requests; absent = the client does not offer elicitation. */
  elicitation?: { elicitor: Elicitor; browser: BrowserOpener; serverLabel: string };
  /** The folders given to this (server, account) as roots; absent = the client does not offer roots. */
  roots?: () => Array<{ uri: string; name: string }>;
  /** Answers the server's sampling requests; absent = the client does not offer sampling. */
  sampling?: SamplingAnswer;
  defaultCallTimeoutMs: number;
  connectTimeoutMs: number;
  reconnect: ReconnectPolicy;
  /** Bound on one re-list (all pages) after the first discovery; a re-list that takes longer has failed. */
  relistTimeoutMs: number;
  /** A listing older than this is re-listed before the next call (see `whenListed`). */
  relistAfterMs: () => number;
  /** Time source for the listing's age (default: the system clock). */
  clock?: Clock;
  /** Hashes pinned before this connection existed (e.g. from the ledger), to compare the first discovery with. */
  pinned?: { tools: Record<string, string>; instructionsHash: string | null };
  onStatus: (status: ConnectionStatus) => void;
  onToolsChanged: (change: ToolsChange) => void;
  /** Receives progress of calls made with `progressTag` (see CallOptions). */
  onCallProgress?: (tag: unknown, progress: CallProgress) => void;
  /** Opens the in-memory transport of a built-in server (the offline demo); absent = none available. */
  builtinTransport?: (builtin: BuiltinServerDefinition['builtin']) => Promise<Transport>;
  /**
   * Receives the server's log messages and resource notices (see server-data.ts), in arrival
   * order; `params` is the server's, unchecked.
   */
  onServerNotice?: (method: ServerNoticeMethod, params: unknown) => void;
}

/** The server notifications that go to `ConnectionDeps.onServerNotice` instead of the SDK. */
export const SERVER_NOTICE_METHODS = ['notifications/message', 'notifications/resources/updated', 'notifications/resources/list_changed', 'notifications/prompts/list_changed'] as const;
export type ServerNoticeMethod = (typeof SERVER_NOTICE_METHODS)[number];
const NOTICE_SET: ReadonlySet<string> = new Set(SERVER_NOTICE_METHODS);

/** A live (server, account) connection. */
export class Connection {
  private client: Client | undefined;
  private transport: Transport | undefined;
  private statusValue: ConnectionStatus = { state: 'disconnected' };
  private toolsByName = new Map<string, DiscoveredTool>();
  private instructionsHashValue: string | null = null;
  private instructionsText: string | undefined;
  private pins: { tools: Map<string, string>; instructionsHash: string | null } | undefined;
  /** Per-field hashes of the pinned tools (kept across reconnects; unknown for pins from an earlier run). */
  private pinnedFields = new Map<string, Record<PinnedField, string>>();
  /** Incremented on every connect/disconnect; callbacks from an older generation are ignored. */
  private generation = 0;
  private connecting: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempt = 0;
  private discovery: Promise<void> = Promise.resolve();
  private healthCheck: Promise<void> | undefined;
  private relistQueued = false;
  /** The stdio process of the latest connect attempt: how it ended explains a failed connect after the transport is gone. */
  private lastProcess: ProcessTransport | undefined;
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
  /** Bumped whenever the transport closes, so a call can tell "connection died" from a server error. */
  private closeCount = 0;
  /** progressToken of a call in flight → its progress listener (a function, or a tag for `deps.onCallProgress`). */
  private readonly progressHandlers = new Map<number, ProgressListener>();
  /** Our own progress tokens (the SDK's `onprogress` option copies the request params per call). */
  private nextProgressToken = 1;
  /** Checks structured results against the outputSchema of the listing a call was decided on. */
  private readonly outputSchemas = new OutputSchemas();
  readonly endpointHash: string;

  constructor(private readonly deps: ConnectionDeps) {
    this.endpointHash = deps.endpointHash;
    if (deps.pinned) this.pins = { tools: new Map(Object.entries(deps.pinned.tools)), instructionsHash: deps.pinned.instructionsHash };
  }

  get serverId(): string {
    return this.deps.definition.id;
  }
  get accountId(): string {
    return this.deps.accountId;
  }
  get definition(): ServerDefinition {
    return this.deps.definition;
  }
  get status(): ConnectionStatus {
    return this.statusValue;
  }
  /** The server's `instructions`, sanitized for display (untrusted). */
  get instructions(): string | undefined {
    return this.instructionsText === undefined ? undefined : displayText(this.instructionsText, TEXT_LIMITS.instructions);
  }
  get instructionsHash(): string | null {
    return this.instructionsHashValue;
  }
  /** Pid of the stdio server process, while one runs. */
  get pid(): number | undefined {
    return this.transport instanceof ProcessTransport ? this.transport.pid : undefined;
  }

  /**
   * Why the current listing cannot be relied on (the server announced a change and the re-list is
   * under way, or a re-list failed or timed out), in words; undefined when it is current.
   */
  get listingProblem(): string | undefined {
    const name = this.deps.definition.name;
    if (this.failure !== undefined) return `${name} could not re-list its tools (${this.failure}); Always Allow is held at Ask until it lists them again`;
    if (this.pending === 'list_changed') return `${name} said its tools changed and is being re-listed`;
    if (this.pending === 'recheck') return `${name} is re-listing its tools`;
    return undefined;
  }

  /**
   * Undefined when the listing can be used as it is; otherwise a promise that settles (never
   * rejects) when the re-list it waits for has settled. A listing older than `relistAfterMs` is
   * re-listed now. After a failed re-list, calls are not held up: Always Allow already asks, and
   * each call has the server list its tools again in the background (a re-list that starts after
   * the call; calls in a burst share one).
   *
   * Why: a call must be decided against what the server lists now, never against a listing the
   * server abandoned or one nobody has checked for a long time.
   */
  whenListed(): Promise<void> | undefined {
    if (this.statusValue.state !== 'connected') return undefined;
    if (this.failure !== undefined) {
      // A re-list that starts after this call (queued behind one already running, at most one).
      void this.requestRelist(this.generation, 'recheck');
      return undefined;
    }
    if (this.relisting !== undefined) return this.relisting;
    const clock = this.deps.clock ?? systemClock;
    if (clock.now() - this.listedAt < this.deps.relistAfterMs()) return undefined;
    return this.requestRelist(this.generation, 'recheck');
  }

  /**
   * The SDK client while connected, for the requests that are not tool calls (resources, prompts,
   * completions, log level: server-data.ts); undefined otherwise.
   */
  get liveClient(): Client | undefined {
    return this.statusValue.state === 'connected' ? this.client : undefined;
  }

  /** Sends `notifications/roots/list_changed` (when connected; a server that connects later asks anyway). */
  rootsChanged(): void {
    if (this.statusValue.state !== 'connected' || !this.client || !this.deps.roots) return;
    this.client.sendRootsListChanged().catch((error: unknown) => this.deps.log.note(`could not tell the server its roots changed: ${errorText(error)}`));
  }

  /** The tools the server currently lists (empty unless connected). */
  tools(): DiscoveredTool[] {
    return [...this.toolsByName.values()];
  }

  /** One listed tool by its server-given name. */
  tool(name: string): DiscoveredTool | undefined {
    return this.toolsByName.get(name);
  }

  private setStatus(status: ConnectionStatus): void {
    this.statusValue = status;
    this.deps.onStatus(status);
  }

  /** Connects (or joins a connect in progress). Resolves when connected; rejects with the reason otherwise. */
  connect(): Promise<void> {
    if (this.statusValue.state === 'connected') return Promise.resolve();
    if (this.connecting) return this.connecting;
    this.cancelReconnect();
    this.reconnectAttempt = 0;
    return this.startConnect(1, 'initial');
  }

  private startConnect(attempt: number, trigger: ToolsChange['trigger']): Promise<void> {
    const generation = ++this.generation;
    this.lastProcess = undefined;
    // A new connection lists from scratch: nothing left over from the last one's re-lists.
    this.relistQueued = false;
    this.relisting = undefined;
    this.pending = undefined;
    this.failure = undefined;
    this.setStatus({ state: 'connecting', attempt });
    const run = this.openAndDiscover(generation, trigger).finally(() => {
      if (this.connecting === run) this.connecting = undefined;
    });
    this.connecting = run;
    return run;
  }

  private async openAndDiscover(generation: number, trigger: ToolsChange['trigger']): Promise<void> {
    const { log, definition } = this.deps;
    try {
      const opening = this.open(generation);
      let abandoned = false;
      opening
        .then((late) => {
          if (abandoned) void late.client.close().catch(() => {});
        })
        .catch(() => {});
      const { client, transport, kind } = await withTimeout(opening, this.deps.connectTimeoutMs, () => new ConnectTimeoutError(this.deps.connectTimeoutMs)).catch((error: unknown) => {
        abandoned = true;
        throw error;
      });
      if (generation !== this.generation) {
        await client.close().catch(() => {});
        throw new Error('connection was superseded');
      }
      this.client = client;
      this.transport = transport;
      this.instructionsText = client.getInstructions();
      await this.discover(generation, trigger);
      // A change announced while listing: connected means listed as the server says now.
      if (this.relisting !== undefined) await this.relisting;
      if (generation !== this.generation) throw new Error('connection was superseded');
      const info = client.getServerVersion();
      this.reconnectAttempt = 0;
      log.note(`connected over ${kind}${info ? ` to ${displayText(info.name, TEXT_LIMITS.name)} ${displayText(info.version, TEXT_LIMITS.name)}` : ''}`);
      this.setStatus({
        state: 'connected',
        transport: kind,
        ...(info ? { serverName: displayText(info.name, TEXT_LIMITS.name), serverVersion: displayText(info.version, TEXT_LIMITS.name) } : {}),
      });
    } catch (error) {
      if (generation !== this.generation) throw error;
      // Read before teardown: how the server's process ended is what explains most failures.
      const failure = this.failureOf(error, true);
      await this.teardown();
      const reason = describeConnectError(error, definition);
      log.note(`connect failed: ${reason}`);
      if (error instanceof UnauthorizedError || (error instanceof AuthRequired)) {
        this.setStatus({ state: 'auth_required', reason });
      } else if (trigger === 'reconnect') {
        this.scheduleReconnect(reason, failure);
      } else {
        this.setStatus({ state: 'error', reason, failure });
      }
      throw new Error(reason);
    }
  }

  /** Builds the transport and connects an SDK client over it (HTTP: Streamable first, then SSE). */
  private async open(generation: number): Promise<{ client: Client; transport: Transport; kind: 'stdio' | 'streamable-http' | 'sse' | 'in-process' }> {
    const def = this.deps.definition;
    if (def.transport === 'builtin') {
      if (!this.deps.builtinTransport) throw new Error(`the built-in server "${def.builtin}" is not available in this build`);
      const transport = await this.deps.builtinTransport(def.builtin);
      const client = await this.attach(transport, generation);
      return { client, transport, kind: 'in-process' };
    }
    if (def.transport === 'stdio') {
      const env: Record<string, string> = {};
      for (const v of def.env) env[v.name] = v.secret ? await this.secret(envSecretName(v.name)) : v.value!;
      const transport = new ProcessTransport({ command: def.command, args: def.args, cwd: def.cwd, env, log: this.deps.log });
      this.lastProcess = transport;
      const client = await this.attach(transport, generation);
      return { client, transport, kind: 'stdio' };
    }
    const headers: Record<string, string> = {};
    for (const h of def.headers) headers[h.name] = h.secret ? await this.secret(headerSecretName(h.name)) : h.value!;
    if (def.auth.kind === 'bearer') headers.Authorization = `Bearer ${await this.secret(BEARER_SECRET)}`;
    let authProvider: OAuthClientProvider | undefined;
    if (def.auth.kind === 'oauth') {
      authProvider = this.deps.authProviderFor?.(def, this.deps.accountId);
      if (!authProvider) throw new AuthRequired('this server uses OAuth; sign in to connect');
    }
    const url = new URL(def.url);
    const requestInit: RequestInit = { headers };
    // Warden's OAuth provider brings the guarded fetch of its server's network scope.
    const authFetch = authProvider ? (guardedFetchOf(authProvider) ?? this.deps.authFetch) : undefined;
    try {
      const transport = new StreamableHTTPClientTransport(url, { requestInit, authProvider, ...(authFetch ? { fetch: authFetch } : {}) });
      const client = await this.attach(transport, generation);
      return { client, transport, kind: 'streamable-http' };
    } catch (error) {
      // The SDK's documented backwards-compatibility rule: a 4xx to the initialize POST means an
      // old HTTP+SSE server. 401/403 are auth answers, not "old server", and never fall back.
      if (!(error instanceof StreamableHTTPError) || !isLegacyAnswer(error.code)) throw error;
      this.deps.log.note(`Streamable HTTP answered ${error.code}; falling back to legacy HTTP+SSE`);
    }
    const transport = new SSEClientTransport(url, { requestInit, authProvider, ...(authFetch ? { fetch: authFetch } : {}) });
    const client = await this.attach(transport, generation);
    return { client, transport, kind: 'sse' };
  }

  private async secret(name: string): Promise<string> {
    const key = secretKey(this.deps.definition.id, this.deps.accountId, name);
    const value = await this.deps.secrets.get(key);
    if (value === null) throw new MissingSecretError(name, `secret "${name}" is not set for account ${this.deps.accountId}`);
    this.deps.log.addSecret(value);
    return value;
  }

  /** A fresh SDK client over `transport`, with our send/close hooks installed. */
  private async attach(transport: Transport, generation: number): Promise<Client> {
    const elicitation = this.deps.elicitation;
    // Schemas the SDK compiles itself (none for tool results: see output-schema.ts) run on the linear-time engine too.
    const capabilities = { ...(elicitation ? ELICITATION_CAPABILITIES : {}), ...(this.deps.roots ? ROOTS_CAPABILITIES : {}), ...(this.deps.sampling ? SAMPLING_CAPABILITIES : {}) };
    const client = new Client(this.deps.clientInfo, { capabilities, jsonSchemaValidator: new LinearJsonSchemaValidator() });
    if (this.deps.roots) registerRoots(client, this.deps.roots);
    if (this.deps.sampling) registerSampling(client, this.deps.sampling);
    if (elicitation) {
      // Labelled with Warden's id and label for the server, never its self-declared name; an
      // answer is only an answer, never a tool approval (the gate is not reachable from here).
      registerElicitation(client, { serverId: this.deps.definition.id, serverLabel: elicitation.serverLabel, accountId: this.deps.accountId, elicitor: elicitation.elicitor, browser: elicitation.browser });
    }
    if (generation !== this.generation) {
      // A disconnect or a newer connect happened while this one was being prepared.
      await transport.close().catch(() => {});
      throw new Error('connection was superseded');
    }
    // Known before connect, so a timed-out or superseded connect can still be torn down.
    this.transport = transport;
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      // Only the params object callTool built carries CALL_STATE (a symbol: never serialized).
      const state = (message as { params?: { [CALL_STATE]?: CallState } }).params?.[CALL_STATE];
      if (state !== undefined) state.sent = true;
      return send(message, options);
    };
    client.onclose = () => this.onTransportClosed(generation);
    client.onerror = (error) => {
      if ((error as Error & { [LOGGED]?: true })[LOGGED]) return;
      this.deps.log.note(`client error: ${error.message}`);
    };
    try {
      await client.connect(transport);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    // Progress is dispatched here, synchronously and in arrival order. The SDK hands
    // notifications to their handlers a microtask later but settles responses at once, so
    // progress sent just before the answer would otherwise be dropped as "unknown token".
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if ('method' in message && message.method === 'notifications/tools/list_changed' && !('id' in message)) {
        // Here, not in an SDK notification handler (which runs a microtask later): an answer that
        // follows the notice must find the listing already marked as not current.
        if (generation !== this.generation) return;
        this.deps.log.note('server sent tools/list_changed; re-listing');
        void this.requestRelist(generation, 'list_changed');
        return;
      }
      if ('method' in message && message.method === 'notifications/progress' && !('id' in message)) {
        const p = message.params as { progressToken?: string | number; progress?: unknown; total?: unknown; message?: unknown } | undefined;
        const listener = typeof p?.progressToken === 'number' ? this.progressHandlers.get(p.progressToken) : undefined;
        // Finite numbers only: JSON.parse turns 1e400 into Infinity, which no display or contract accepts.
        if (listener !== undefined && typeof p?.progress === 'number' && Number.isFinite(p.progress)) {
          const progress: CallProgress = {
            progress: p.progress,
            ...(typeof p.total === 'number' && Number.isFinite(p.total) ? { total: p.total } : {}),
            ...(typeof p.message === 'string' ? { message: displayText(p.message, TEXT_LIMITS.note) } : {}),
          };
          if (typeof listener === 'function') listener(progress);
          else this.deps.onCallProgress?.(listener.tag, progress);
        }
        return; // the SDK's own progress routing is not used (see above)
      }
      if ('method' in message && !('id' in message) && NOTICE_SET.has(message.method)) {
        if (generation === this.generation) this.deps.onServerNotice?.(message.method as ServerNoticeMethod, message.params);
        return;
      }
      deliver?.(message, extra);
    };
    return client;
  }

  /**
   * Asks for a re-list after the one running (a burst costs at most one more) and marks the
   * listing as not current until it settles. Resolves (never rejects) when it has: with the new
   * listing applied, or with `failure` saying why the server could not be re-listed.
   */
  private requestRelist(generation: number, trigger: 'list_changed' | 'recheck'): Promise<void> {
    if (this.pending !== 'list_changed') this.pending = trigger;
    if (this.relistQueued && this.relisting !== undefined) return this.relisting;
    this.relistQueued = true;
    const timeoutMs = this.deps.relistTimeoutMs;
    const run: Promise<void> = this.discovery.then(async () => {
      this.relistQueued = false;
      if (generation !== this.generation) return;
      let failure: string | undefined;
      try {
        await withTimeout(this.discover(generation, trigger), timeoutMs, 'tools/list timed out');
      } catch (error) {
        failure = displayText(errorText(error), TEXT_LIMITS.note);
        this.deps.log.note(`re-listing tools failed: ${failure}`);
      }
      // A notice that arrived meanwhile has queued another re-list: that one decides.
      if (generation !== this.generation || this.relistQueued) return;
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

  /** Lists every tool (following nextCursor), hashes each contract and reports changes. */
  private async discover(generation: number, trigger: ToolsChange['trigger']): Promise<void> {
    const client = this.client;
    if (!client) return;
    const seq = ++this.listSeq;
    const listed: Tool[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    do {
      // A plain request, not `client.listTools`: the SDK would remember output schemas from the
      // last page only; Warden checks results itself against the listing it pinned (output-schema.ts).
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? undefined : { cursor } }, ListToolsResultSchema, { timeout: this.deps.connectTimeoutMs });
      listed.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined) {
        if (seenCursors.has(cursor)) throw new Error(`server repeated tools/list cursor ${JSON.stringify(cursor).slice(0, 80)}`);
        seenCursors.add(cursor);
        if (seenCursors.size > 1000) throw new Error('server returned more than 1000 pages of tools');
      }
    } while (cursor !== undefined);
    if (generation !== this.generation) return;
    // A listing overtaken by a newer one (a re-list given up on that answers late) changes nothing.
    if (seq !== this.listSeq) return;

    const newInstructionsHash = instructionsHash(this.instructionsText ?? null);
    const next = new Map<string, DiscoveredTool>();
    for (const tool of listed) {
      if (next.has(tool.name)) {
        this.deps.log.note(`server listed tool ${JSON.stringify(displayText(tool.name, TEXT_LIMITS.name))} twice; keeping the first`);
        continue;
      }
      next.set(tool.name, this.describeTool(tool, newInstructionsHash));
    }

    const previous = this.pins ?? { tools: new Map<string, string>(), instructionsHash: null };
    const previousTools = this.pins ? previous.tools : undefined;
    const change: ToolsChange = {
      serverId: this.serverId,
      accountId: this.accountId,
      added: [],
      removed: [],
      changed: [],
      instructionsChanged: null,
      instructionsHash: newInstructionsHash,
      oldHashes: Object.fromEntries(previousTools ?? []),
      newHashes: Object.fromEntries([...next].map(([n, t]) => [n, t.contractHash])),
      trigger: this.pins ? trigger : 'initial',
    };
    for (const [name, tool] of next) {
      const oldHash = previousTools?.get(name);
      if (oldHash === undefined) change.added.push(name);
      else if (oldHash !== tool.contractHash) {
        const oldFields = this.pinnedFields.get(name);
        const fields: PinnedField[] = oldFields ? PINNED_FIELDS.filter((f) => oldFields[f] !== tool.fieldHashes[f]) : [];
        // A pin from an earlier run has no per-field hashes; the instructions hash is still known.
        if (!oldFields && previous.instructionsHash !== null && previous.instructionsHash !== newInstructionsHash) fields.push('instructions');
        change.changed.push({ name, fields, oldHash, newHash: tool.contractHash });
      }
    }
    for (const name of previousTools?.keys() ?? []) if (!next.has(name)) change.removed.push(name);
    if (this.pins && previous.instructionsHash !== newInstructionsHash) {
      change.instructionsChanged = { oldHash: previous.instructionsHash, newHash: newInstructionsHash };
    }

    this.toolsByName = next;
    this.listedAt = (this.deps.clock ?? systemClock).now();
    this.pinnedFields = new Map([...next].map(([n, t]) => [n, t.fieldHashes]));
    this.instructionsHashValue = newInstructionsHash;
    this.pins = { tools: new Map([...next].map(([n, t]) => [n, t.contractHash])), instructionsHash: newInstructionsHash };
    const isChange = change.added.length + change.removed.length + change.changed.length > 0 || change.instructionsChanged !== null;
    if (change.trigger === 'initial' || isChange) {
      if (change.changed.length || change.instructionsChanged) {
        this.deps.log.note(
          `tool contracts changed: ${change.changed.map((c) => `${displayText(c.name, TEXT_LIMITS.name)} (${c.fields.join(', ')})`).join('; ')}${change.instructionsChanged ? ' instructions changed' : ''}`,
        );
      }
      this.deps.onToolsChanged(change);
    }
  }

  /**
   * A discovered tool with its pinned hash. The pinned `contractHash` covers the tool's own
   * contract AND the server's instructions (instructions are pinned the same way):
   * instructions reach the model with every tool, so new instructions change what an Always Allow
   * grant allowed — every tool of the server then reports `instructions` as a changed field, the
   * change is journaled per tool, survives restarts through the journal, and grants drop to ask.
   */
  private describeTool(tool: Tool, serverInstructionsHash: string): DiscoveredTool {
    const contract = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: tool.annotations,
    };
    const fieldHashes = {
      ...Object.fromEntries(CONTRACT_FIELDS.map((f) => [f, sha256Hex(canonicalJson({ f, v: (contract as Record<string, unknown>)[f] ?? null }))])),
      instructions: serverInstructionsHash,
    } as Record<PinnedField, string>;
    return {
      serverId: this.serverId,
      accountId: this.accountId,
      name: tool.name,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      ...(tool.description !== undefined ? { displayDescription: displayText(tool.description, TEXT_LIMITS.description) } : {}),
      inputSchema: tool.inputSchema as Record<string, unknown>,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
      ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
      contractHash: sha256Hex(canonicalJson({ tool: contractHash(contract), serverInstructions: serverInstructionsHash })),
      fieldHashes,
    };
  }

  private onTransportClosed(generation: number): void {
    this.closeCount += 1;
    if (generation !== this.generation) return;
    const exit = this.transport instanceof ProcessTransport ? this.transport.exitDescription : undefined;
    const reason = `connection closed${exit ? ` (process ${exit})` : ''}`;
    const failure = exit ? this.failureOf(new Error(reason), false) : undefined;
    this.deps.log.note(reason);
    this.client = undefined;
    this.transport = undefined;
    this.toolsByName = new Map();
    if (this.statusValue.state !== 'connected') return; // a connect in progress reports its own failure
    this.reconnectAttempt = 0;
    this.scheduleReconnect(reason, failure);
  }

  /**
   * What kind of failure `error` is (see connect-failure.ts), with what the stdio transport saw:
   * how its process ended, its last stderr line and any stdout line that was not MCP.
   */
  private failureOf(error: unknown, atStart: boolean): ConnectFailure {
    const transport = this.transport instanceof ProcessTransport ? this.transport : this.lastProcess;
    return classifyConnectFailure(error, {
      definition: this.deps.definition,
      atStart,
      ...(transport?.exit ? { exit: { exitCode: transport.exit.code, signal: transport.exit.signal, lastStderr: transport.lastStderrLine ?? null } } : {}),
      ...(transport?.firstMalformedLine !== undefined ? { malformedStdout: transport.firstMalformedLine } : {}),
    });
  }

  private scheduleReconnect(reason: string, failure?: ConnectFailure): void {
    const { baseDelayMs, maxDelayMs, maxAttempts } = this.deps.reconnect;
    if (this.reconnectAttempt >= maxAttempts) {
      this.setStatus({ state: 'error', reason: `${reason}; gave up after ${maxAttempts} reconnect attempts`, ...(failure ? { failure } : {}) });
      return;
    }
    const attempt = ++this.reconnectAttempt;
    const delay = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    this.setStatus({ state: 'error', reason, ...(failure ? { failure } : {}), retryInMs: delay, attempt });
    this.deps.log.note(`reconnecting in ${delay} ms (attempt ${attempt} of ${maxAttempts})`);
    const generation = this.generation;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (generation !== this.generation) return;
      this.startConnect(attempt, 'reconnect').catch(() => {});
    }, delay);
  }

  private cancelReconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  private async teardown(): Promise<void> {
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    this.toolsByName = new Map();
    if (client) await client.close().catch(() => {});
    else if (transport) await transport.close().catch(() => {});
  }

  /** Closes the connection (killing a stdio server's process tree) and cancels any reconnect. */
  async disconnect(): Promise<void> {
    this.generation += 1;
    this.cancelReconnect();
    const pending = this.connecting;
    this.connecting = undefined;
    // Unusable from this moment (the registry stops listing its tools); the process dies below.
    if (this.statusValue.state !== 'disconnected') {
      this.deps.log.note('disconnected');
      this.setStatus({ state: 'disconnected' });
    }
    await this.teardown();
    if (pending) await pending.catch(() => {});
    await this.teardown();
  }

  /**
   * After an HTTP transport failure: pings the server, and if it does not answer, closes the
   * client so the usual reconnect-with-backoff starts (Streamable HTTP has no process to watch).
   */
  private checkHealth(client: Client, why: string): void {
    if (this.healthCheck) return;
    this.deps.log.note(`request failed (${why}); checking the server`);
    this.healthCheck = client
      .ping({ timeout: 5000 })
      .then(
        () => undefined,
        async () => {
          if (client !== this.client) return;
          this.deps.log.note('server did not answer a ping; reconnecting');
          await client.close().catch(() => {});
        },
      )
      .finally(() => {
        this.healthCheck = undefined;
      });
  }

  /**
   * Sends `tools/call` and waits for the answer (see gate/call-outcome.ts for how endings map to states).
   *
   * `args` is sent exactly as given. `timeoutMs` bounds the wait (default: the server's, then the
   * manager's); `signal` aborting sends `notifications/cancelled`; progress is forwarded.
   */
  callTool(toolName: string, args: Readonly<Record<string, unknown>>, options: CallOptions = {}): Promise<ToolCallResult> {
    const client = this.client;
    if (!client || this.statusValue.state !== 'connected') {
      return Promise.reject(new CallNotSentError(`${this.serverId}/${this.accountId} is not connected (${this.statusValue.state})`));
    }
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(new CallNotSentError('the call was cancelled before it was sent'));
    // The params object is ours: the send hook finds CALL_STATE on it and marks *this* call sent.
    // Progress uses our own token in `_meta` (asking the SDK via `onprogress` would copy the
    // params and register a second handler per call); the onmessage hook routes it.
    const state: CallState = { sent: false };
    const listener = options.onProgress ?? (options.progressTag !== undefined ? { tag: options.progressTag } : undefined);
    let token = 0;
    let params: CallParams;
    if (listener !== undefined) {
      token = this.nextProgressToken++;
      this.progressHandlers.set(token, listener);
      params = { name: toolName, arguments: args as Record<string, unknown>, _meta: { progressToken: token }, [CALL_STATE]: state };
    } else {
      params = { name: toolName, arguments: args as Record<string, unknown>, [CALL_STATE]: state };
    }
    const closesBefore = this.closeCount;
    // The contract the call was decided on: its outputSchema is what the answer must keep.
    const contract = this.toolsByName.get(toolName);
    const timeout = options.timeoutMs ?? this.deps.definition.timeoutMs ?? this.deps.defaultCallTimeoutMs;
    // One timer per call: the SDK's own `timeout` (it sends notifications/cancelled when it
    // fires). One `then` instead of an async wrapper: this layer adds a single promise per call.
    return client.callTool(params, CallToolResultSchema, { signal, timeout }).then(
      (result) => {
        if (token !== 0) this.progressHandlers.delete(token);
        // The server answered but broke its own declared output: its error, never a success.
        const problem = this.outputSchemas.problem(contract, result as ToolCallResult);
        if (problem !== null) {
          this.deps.log.note(problem);
          throw new ToolCallFailedError(problem);
        }
        return result as ToolCallResult;
      },
      (error: unknown) => {
        if (token !== 0) this.progressHandlers.delete(token);
        throw this.callError(error, client, state.sent, signal, closesBefore, timeout);
      },
    );
  }

  /** How a rejected tools/call ends (see gate/call-outcome.ts): the error to throw for it. */
  private callError(error: unknown, client: Client, sent: boolean, signal: AbortSignal | undefined, closesBefore: number, timeout: number): Error {
    if (client === this.client && this.transport && !(this.transport instanceof ProcessTransport) && !(error instanceof McpError)) {
      // An HTTP request failed below MCP: find out whether the server is still there.
      this.checkHealth(client, errorText(error));
    }
    if (sent && isConnectionRefused(error)) {
      // The TCP connection was refused: not one byte of the request reached the server.
      return new CallNotSentError(`the server refused the connection: ${errorText(error)}`);
    }
    if (!sent) {
      if (error instanceof Error && (error as { notSent?: unknown }).notSent === true) return new CallNotSentError(error.message);
      // The request was refused before reaching the transport (e.g. the SDK rejected it locally).
      return new CallNotSentError(`not sent: ${errorText(error)}`);
    }
    if (signal?.aborted) {
      return new ToolCallOutcomeUnknownError('cancelled after the request was sent; the server was told to stop', 'cancelled');
    }
    if (this.closeCount !== closesBefore || (error instanceof McpError && error.code === RpcErrorCode.ConnectionClosed && this.client !== client)) {
      return new ToolCallOutcomeUnknownError('the connection closed before the server answered', 'connection_closed');
    }
    if (error instanceof McpError && error.code === RpcErrorCode.RequestTimeout) {
      return new ToolCallOutcomeUnknownError(`no answer within ${timeout} ms; the server was told to stop`, 'timeout');
    }
    if (error instanceof McpError) return new ToolCallFailedError(displayText(error.message, TEXT_LIMITS.message), error.code);
    if (error instanceof Error && error.name === 'ZodError') return new ToolCallFailedError('the server answered with a malformed result');
    return new ToolCallOutcomeUnknownError(`transport error after sending: ${errorText(error)}`, 'transport_error');
  }
}

/** True if `error` (or any error in its `cause` chain) is a refused TCP connection. */
function isConnectionRefused(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'ECONNREFUSED') return true;
  }
  return false;
}

class AuthRequired extends Error {}

/** Statuses that mean "this is an old HTTP+SSE server" per the SDK's compatibility guidance. */
function isLegacyAnswer(code: number | undefined): boolean {
  return code !== undefined && code >= 400 && code < 500 && code !== 401 && code !== 403;
}

function describeConnectError(error: unknown, def: ServerDefinition): string {
  if (error instanceof MissingSecretError || error instanceof AuthRequired) return error.message;
  if (error instanceof SignInNeeded) return error.message;
  if (error instanceof UnauthorizedError) return 'the server requires authorization; sign in to connect';
  const text = errorText(error);
  if (def.transport === 'http' && /fetch failed|ECONNREFUSED/i.test(text)) return `cannot reach ${new URL(def.url).origin}: ${displayText(text, TEXT_LIMITS.message)}`;
  return displayText(text, TEXT_LIMITS.message);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string | (() => Error)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(typeof message === 'function' ? message() : new Error(`${message} after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
