/**
 * One live MCP connection: one SDK `Client` for one (server, account), and its life — the status
 * (connecting | connected | error | auth_required | disconnected), connecting with a bound,
 * reconnecting with bounded exponential backoff after unexpected drops, and closing. The rest is
 * beside it: transports.ts opens each kind of server, client-capabilities.ts builds the client,
 * tapped-transport.ts sees messages at the transport's edge in arrival order, tool-listing.ts
 * (with the pure contract-diff.ts) keeps the listing current, tool-call.ts makes the calls.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallResult } from '../gate/ports';
import type { BuiltinServerDefinition, ServerDefinition } from '../../../shared/domain/servers';
import { systemClock, type BrowserOpener, type Clock, type SecretStore } from '../ports';
import type { Elicitor } from '../elicitation/elicitation';
import type { ConnectFailure } from '../../../shared/domain/connect-failure';
import { CallNotSentError } from '../gate/call-outcome';
import { displayText } from '../text/sanitize';
import { cannotStart, classifyConnectFailure, ConnectTimeoutError } from './connect-failure';
import { errorText, TEXT_LIMITS, withTimeout } from './connection-common';
import { createClient } from './client-capabilities';
import type { SamplingAnswer } from './sampling-handler';
import type { DiscoveredTool, ListingTrigger, ToolsChange } from './contract-diff';
import type { LogRing } from './log-ring';
import { LOGGED, type ProcessTransport } from './process-transport';
import { TappedTransport } from './tapped-transport';
import { ToolCalls, type CallOptions } from './tool-call';
import { ToolListing } from './tool-listing';
import { describeConnectError, needsSignIn, openClient, type TransportKind } from './transports';

/** The state of one connection, as the UI shows it. */
export type ConnectionStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'connected'; transport: TransportKind; serverName?: string; serverVersion?: string }
  | { state: 'error'; reason: string; failure?: ConnectFailure; retryInMs?: number; attempt?: number }
  | { state: 'auth_required'; reason: string }
  | { state: 'disconnected' };

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
  /** Opens the in-memory transport of a built-in server (the offline demo); absent = none available. */
  builtinTransport?: (builtin: BuiltinServerDefinition['builtin'], where: { serverId: string; accountId: string }) => Promise<Transport>;
  /** Receives the server's log messages and resource notices (server-data.ts) in arrival order; `params` unchecked. */
  onServerNotice?: (method: ServerNoticeMethod, params: unknown) => void;
}

/** The server notifications that go to `ConnectionDeps.onServerNotice` instead of the SDK. */
export const SERVER_NOTICE_METHODS = ['notifications/message', 'notifications/resources/updated', 'notifications/resources/list_changed', 'notifications/prompts/list_changed'] as const;
export type ServerNoticeMethod = (typeof SERVER_NOTICE_METHODS)[number];
const NOTICE_SET: ReadonlySet<string> = new Set(SERVER_NOTICE_METHODS);

/** A live (server, account) connection. */
export class Connection {
  private client: Client | undefined;
  private transport: TappedTransport | undefined;
  /** The stdio process under `transport`, while it is the live one. */
  private process: ProcessTransport | undefined;
  /** The stdio process of the latest connect attempt: how it ended explains a failed connect after the transport is gone. */
  private lastProcess: ProcessTransport | undefined;
  private statusValue: ConnectionStatus = { state: 'disconnected' };
  private instructionsText: string | undefined;
  /** Incremented on every connect/disconnect; callbacks from an older generation are ignored. */
  private generation = 0;
  private connecting: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempt = 0;
  private healthCheck: Promise<void> | undefined;
  /** Bumped whenever the transport closes, so a call can tell "connection died" from a server error. */
  private closeCount = 0;
  private readonly listing: ToolListing;
  private readonly calls: ToolCalls;
  readonly endpointHash: string;

  constructor(private readonly deps: ConnectionDeps) {
    this.endpointHash = deps.endpointHash;
    this.listing = new ToolListing({
      serverId: deps.definition.id,
      accountId: deps.accountId,
      serverName: deps.definition.name,
      log: deps.log,
      clock: deps.clock ?? systemClock,
      pageTimeoutMs: deps.connectTimeoutMs,
      relistTimeoutMs: deps.relistTimeoutMs,
      relistAfterMs: deps.relistAfterMs,
      ...(deps.pinned ? { pinned: deps.pinned } : {}),
      onToolsChanged: deps.onToolsChanged,
      client: () => this.client,
      instructions: () => this.instructionsText,
      isCurrent: (generation) => generation === this.generation,
    });
    this.calls = new ToolCalls({
      log: deps.log,
      defaultTimeoutMs: deps.definition.timeoutMs ?? deps.defaultCallTimeoutMs,
      contract: (toolName) => this.listing.tool(toolName),
      closeCount: () => this.closeCount,
      isLive: (client) => client === this.client,
      transportFailed: (client, why) => {
        // HTTP has no process to watch: find out whether the server is still there.
        if (this.transport !== undefined && this.process === undefined) this.checkHealth(client, why);
      },
    });
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
    return this.listing.instructionsHash;
  }
  /** Pid of the stdio server process, while one runs. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Why the current listing cannot be relied on, in words; undefined when it is current (see tool-listing.ts). */
  get listingProblem(): string | undefined {
    return this.listing.problem;
  }

  /** Undefined when the listing can be used as it is; otherwise a promise that settles once it can (see tool-listing.ts). */
  whenListed(): Promise<void> | undefined {
    if (this.statusValue.state !== 'connected') return undefined;
    return this.listing.whenListed(this.generation);
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
    return this.listing.tools();
  }

  /** One listed tool by its server-given name. */
  tool(name: string): DiscoveredTool | undefined {
    return this.listing.tool(name);
  }

  /**
   * Sends `tools/call` and waits for the answer (see tool-call.ts, and gate/call-outcome.ts for how
   * endings map to states). `args` is sent exactly as given.
   */
  callTool(toolName: string, args: Readonly<Record<string, unknown>>, options: CallOptions = {}): Promise<ToolCallResult> {
    const client = this.client;
    if (!client || this.statusValue.state !== 'connected') {
      return Promise.reject(new CallNotSentError(`${this.serverId}/${this.accountId} is not connected (${this.statusValue.state})`));
    }
    return this.calls.call(client, toolName, args, options);
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

  private startConnect(attempt: number, trigger: ListingTrigger): Promise<void> {
    const generation = ++this.generation;
    this.lastProcess = undefined;
    this.listing.reset();
    this.setStatus({ state: 'connecting', attempt });
    const run = this.openAndDiscover(generation, trigger).finally(() => {
      if (this.connecting === run) this.connecting = undefined;
    });
    this.connecting = run;
    return run;
  }

  private async openAndDiscover(generation: number, trigger: ListingTrigger): Promise<void> {
    const { log, definition } = this.deps;
    try {
      const opening = openClient({ ...this.deps, onProcess: (p) => (this.lastProcess = p) }, (transport) => this.attach(transport, generation));
      let abandoned = false;
      opening
        .then((late) => {
          if (abandoned) void late.client.close().catch(() => {});
        })
        .catch(() => {});
      const { client, kind } = await withTimeout(opening, this.deps.connectTimeoutMs, () => new ConnectTimeoutError(this.deps.connectTimeoutMs)).catch((error: unknown) => {
        abandoned = true;
        throw error;
      });
      if (generation !== this.generation) {
        await client.close().catch(() => {});
        throw new Error('connection was superseded');
      }
      this.client = client;
      this.instructionsText = client.getInstructions();
      await this.listing.discover(generation, trigger);
      // A change announced while listing: connected means listed as the server says now.
      const relist = this.listing.relistUnderWay;
      if (relist !== undefined) await relist;
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
      if (needsSignIn(error)) {
        this.setStatus({ state: 'auth_required', reason });
      } else if (trigger === 'reconnect' && !cannotStart(failure)) {
        this.scheduleReconnect(reason, failure);
      } else {
        this.setStatus({ state: 'error', reason, failure });
      }
      throw new Error(reason);
    }
  }

  /** A fresh SDK client connected over `inner`, seen at the edge through a TappedTransport. */
  private async attach(inner: Transport, generation: number): Promise<Client> {
    const client = createClient({ serverId: this.deps.definition.id, accountId: this.deps.accountId, clientInfo: this.deps.clientInfo, elicitation: this.deps.elicitation, roots: this.deps.roots, sampling: this.deps.sampling });
    const transport = new TappedTransport(inner, {
      beforeSend: (message) => this.calls.beforeSend(message),
      intercept: (message) => this.intercept(message, generation),
    });
    if (generation !== this.generation) {
      // A disconnect or a newer connect happened while this one was being prepared.
      await transport.close().catch(() => {});
      throw new Error('connection was superseded');
    }
    // Known before connect, so a timed-out or superseded connect can still be torn down.
    this.transport = transport;
    this.process = inner === this.lastProcess ? this.lastProcess : undefined;
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
    transport.listen();
    return client;
  }

  /**
   * The incoming messages the connection handles itself, at once and in arrival order (see
   * tapped-transport.ts for why); true when the SDK must not see `message`.
   */
  private intercept(message: JSONRPCMessage, generation: number): boolean {
    if (!('method' in message) || 'id' in message) return false;
    if (message.method === 'notifications/tools/list_changed') {
      // An answer that follows the notice must find the listing already marked as not current.
      if (generation !== this.generation) return true;
      this.deps.log.note('server sent tools/list_changed; re-listing');
      void this.listing.requestRelist(generation, 'list_changed');
      return true;
    }
    if (this.calls.routeProgress(message)) return true;
    if (NOTICE_SET.has(message.method)) {
      if (generation === this.generation) this.deps.onServerNotice?.(message.method as ServerNoticeMethod, message.params);
      return true;
    }
    return false;
  }

  private onTransportClosed(generation: number): void {
    this.closeCount += 1;
    if (generation !== this.generation) return;
    const exit = this.process?.exitDescription;
    const reason = `connection closed${exit ? ` (process ${exit})` : ''}`;
    const failure = exit ? this.failureOf(new Error(reason), false) : undefined;
    this.deps.log.note(reason);
    this.dropTransport();
    if (this.statusValue.state !== 'connected') return; // a connect in progress reports its own failure
    this.reconnectAttempt = 0;
    this.scheduleReconnect(reason, failure);
  }

  /**
   * What kind of failure `error` is (see connect-failure.ts), with what the stdio transport saw:
   * how its process ended, its last stderr line and any stdout line that was not MCP.
   */
  private failureOf(error: unknown, atStart: boolean): ConnectFailure {
    const transport = this.process ?? this.lastProcess;
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

  /** Forgets the client and transport (the listing with them); returns what was live, to close. */
  private dropTransport(): { client: Client | undefined; transport: Transport | undefined } {
    const live = { client: this.client, transport: this.transport };
    this.client = undefined;
    this.transport = undefined;
    this.process = undefined;
    this.listing.clear();
    return live;
  }

  private async teardown(): Promise<void> {
    const { client, transport } = this.dropTransport();
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
}
