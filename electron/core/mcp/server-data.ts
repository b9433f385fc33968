/**
 * What a connected server offers besides tools: resources (listed page by page, read, subscribed
 * to), resource templates, prompts, argument completions, and its log messages.
 *
 * Everything here is the person's request through the window (a model cannot read a resource or
 * get a prompt: there is no tool for it), and everything that comes back is the server's text:
 * sanitized by the one sanitizer, capped like a tool result (DEFAULT_MAX_RESULT_BYTES), flagged
 * when it reads like instructions. A read or a prompt is journaled (`server.data-read`) with its
 * URI or name, whether it was done, refused or failed.
 *
 * Access follows the person's rules for the server as a whole (see `accessRefusal`): a server the
 * person set to Disabled, or the organization forbids, is neither read nor asked for prompts.
 * What was read is staged under an attachment id; a chat message attaches exactly that text
 * (never a re-read, never text from the window), wrapped as untrusted server data.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode as RpcErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { WardenError } from '../../../shared/result';
import { journalEntry } from '../../../shared/domain/journal-events';
import type { LogLevel, PromptGotView, PromptView, ResourceReadView, ResourceTemplateView, ResourceView, ServerFeaturesView } from '../../../shared/contract/server-data';
import type { Clock, Journal } from '../ports';
import type { CoreEvents } from '../events';
import type { Handlers } from '../dispatch';
import { DEFAULT_MAX_RESULT_BYTES } from '../gate/result-cap';
import type { ConnectionManager } from './connection-manager';
import type { ServerNoticeMethod } from './connection';
import { cutUtf8, displayText, sanitizeForDisplay, sanitizeServerText } from '../text/sanitize';
import type { PolicyState } from '../../../shared/domain/policy';
import { accessRefusal } from './server-data-access';
import { promptMessagesOf, promptModelText, promptView } from './prompts';
import { resourceContentsOf, resourceModelText, resourceView, templateView } from './resources';

/** Most items of one listed page kept (a server's page may be larger; the rest are dropped, not shown). */
export const MAX_PAGE_ITEMS = 1000;
/** How long a request to the server may take. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Most staged attachments kept at once (oldest dropped first), and for how long. */
const MAX_STAGED = 32;
const STAGED_TTL_MS = 30 * 60 * 1000;
const LEVELS: readonly LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
/** Longest line of a server's log message kept (the log ring cuts again at its own bound). */
const MAX_LOG_MESSAGE_CHARS = 4096;

/** Server text staged for a chat message to attach. */
export interface StagedAttachment {
  id: string;
  kind: 'resource' | 'prompt';
  serverId: string;
  accountId: string;
  serverLabel: string;
  /** The URI (resource) or prompt name, sanitized: what the attachment is called. */
  title: string;
  /** The sanitized, capped text the person saw, as the model will be given it (then wrapped). */
  text: string;
  flags: string[];
  stagedAt: number;
}

export interface ServerDataDeps {
  manager: ConnectionManager;
  names: { server(serverId: string): string | undefined; account(serverId: string, accountId: string): string | undefined };
  /** The person's and the organization's rules, as the gate reads them. */
  policy: () => PolicyState;
  journal: Journal;
  clock: Clock;
  events: CoreEvents;
  /** Cap on the text kept of one read or prompt (default: the tool-result cap). */
  maxBytes?: number;
  /**
   * Where the chosen log level of each (server, account) is kept between runs (the account's
   * settings); absent: for this run only.
   */
  levels?: { get(serverId: string, accountId: string): LogLevel | undefined; set(serverId: string, accountId: string, level: LogLevel): void };
}

type Key = `${string}\u0000${string}`;
const keyOf = (serverId: string, accountId: string): Key => `${serverId}\u0000${accountId}`;

/** Resources, prompts, completions and log levels of connected servers (see the file comment). */
export class ServerData {
  private readonly staged = new Map<string, StagedAttachment>();
  /** Levels chosen in this run when no keeper was given. */
  private readonly levelsThisRun = new Map<Key, LogLevel>();
  private readonly subscriptions = new Map<Key, Set<string>>();
  private readonly maxBytes: number;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(private readonly deps: ServerDataDeps) {
    this.maxBytes = deps.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.unsubscribe.push(
      deps.manager.on('notice', (serverId, accountId, method, params) => this.onNotice(serverId, accountId, method, params)),
      deps.manager.on('status', (serverId, accountId, status) => {
        if (status.state === 'connected') void this.applyLevel(serverId, accountId);
        // Subscriptions belong to a session: a new connection starts with none.
        else if (status.state !== 'connecting') this.subscriptions.delete(keyOf(serverId, accountId));
      }),
    );
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  // ---- access -------------------------------------------------------------------------------

  private labels(serverId: string, accountId: string): { server: string; account: string } {
    const server = this.deps.names.server(serverId);
    if (server === undefined) throw new WardenError('NOT_FOUND', `serverId: no server "${serverId}"`);
    const account = this.deps.names.account(serverId, accountId);
    if (account === undefined) throw new WardenError('NOT_FOUND', `accountId: ${server} has no account "${accountId}"`);
    return { server, account };
  }

  /** The live client of a (server, account), after the access check; throws in words otherwise. */
  private client(serverId: string, accountId: string): { client: Client; server: string; account: string } {
    const { server, account } = this.labels(serverId, accountId);
    const refusal = accessRefusal(this.deps.policy(), serverId, accountId, server);
    if (refusal) throw new WardenError('DENIED', refusal);
    const client = this.deps.manager.connection(serverId, accountId)?.liveClient;
    if (!client) throw new WardenError('NOT_CONNECTED', `${server} (${account}) is not connected; connect it in Servers first`);
    return { client, server, account };
  }

  private capability(client: Client, server: string, what: 'resources' | 'prompts' | 'completions' | 'logging'): void {
    if (!client.getServerCapabilities()?.[what]) throw new WardenError('UNSUPPORTED', `${server} does not offer ${what === 'completions' ? 'suggestions (completions)' : what === 'logging' ? 'log messages' : what}`);
  }

  /** Which features the server offers (from its initialize answer) and the log level Warden asks for. */
  features(serverId: string, accountId: string): ServerFeaturesView {
    const { client } = this.client(serverId, accountId);
    const caps = client.getServerCapabilities() ?? {};
    return {
      resources: Boolean(caps.resources),
      subscribe: Boolean((caps.resources as { subscribe?: unknown } | undefined)?.subscribe),
      prompts: Boolean(caps.prompts),
      completions: Boolean(caps.completions),
      logging: Boolean(caps.logging),
      logLevel: this.levelOf(serverId, accountId),
    };
  }

  // ---- resources ----------------------------------------------------------------------------

  async listResources(serverId: string, accountId: string, cursor?: string): Promise<{ resources: ResourceView[]; nextCursor: string | null }> {
    const { client, server } = this.client(serverId, accountId);
    this.capability(client, server, 'resources');
    const page = await ask(server, () => client.listResources(cursor === undefined ? undefined : { cursor }, { timeout: REQUEST_TIMEOUT_MS }));
    return { resources: page.resources.slice(0, MAX_PAGE_ITEMS).map(resourceView), nextCursor: nextCursorOf(page.nextCursor, cursor) };
  }

  async listTemplates(serverId: string, accountId: string, cursor?: string): Promise<{ templates: ResourceTemplateView[]; nextCursor: string | null }> {
    const { client, server } = this.client(serverId, accountId);
    this.capability(client, server, 'resources');
    const page = await ask(server, () => client.listResourceTemplates(cursor === undefined ? undefined : { cursor }, { timeout: REQUEST_TIMEOUT_MS }));
    return { templates: page.resourceTemplates.slice(0, MAX_PAGE_ITEMS).map(templateView), nextCursor: nextCursorOf(page.nextCursor, cursor) };
  }

  /** Reads one resource, journals it, and stages what was kept for a chat message. */
  async read(serverId: string, accountId: string, uri: string): Promise<ResourceReadView> {
    const journal = (outcome: 'read' | 'refused' | 'failed', bytes: number | null, truncated: boolean, reason: string | null) =>
      this.journal({ kind: 'resource', serverId, accountId, target: uri, outcome, bytes, truncated, reason });
    let live: ReturnType<ServerData['client']>;
    try {
      live = this.client(serverId, accountId);
      this.capability(live.client, live.server, 'resources');
    } catch (error) {
      if (error instanceof WardenError && error.code !== 'NOT_FOUND') await journal('refused', null, false, error.message);
      throw error;
    }
    const { client, server, account } = live;
    let result: Awaited<ReturnType<Client['readResource']>>;
    try {
      result = await ask(server, () => client.readResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }));
    } catch (error) {
      await journal('failed', null, false, error instanceof Error ? error.message : String(error));
      throw error;
    }
    const { contents, keptBytes, totalBytes } = resourceContentsOf(result, this.maxBytes);
    const text = resourceModelText(contents);
    const cut = keptBytes < totalBytes ? { keptBytes, totalBytes } : null;
    await journal('read', totalBytes, cut !== null, null);
    const title = displayText(uri, 2048);
    const staged = this.stage({ kind: 'resource', serverId, accountId, serverLabel: server, title, text });
    return { attachmentId: staged.id, serverLabel: server, accountLabel: account, displayUri: title, contents, truncated: cut, flags: staged.flags };
  }

  async subscribe(serverId: string, accountId: string, uri: string, on: boolean): Promise<{ subscribed: boolean }> {
    const { client, server } = this.client(serverId, accountId);
    this.capability(client, server, 'resources');
    const caps = client.getServerCapabilities()?.resources as { subscribe?: unknown } | undefined;
    if (!caps?.subscribe) throw new WardenError('UNSUPPORTED', `${server} does not announce changes of its resources (no subscriptions)`);
    const key = keyOf(serverId, accountId);
    const set = this.subscriptions.get(key) ?? new Set<string>();
    if (on) {
      if (set.size >= 100 && !set.has(uri)) throw new WardenError('CONFLICT', `at most 100 resources of ${server} can be followed at once`);
      await ask(server, () => client.subscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }));
      set.add(uri);
      this.subscriptions.set(key, set);
    } else {
      await ask(server, () => client.unsubscribeResource({ uri }, { timeout: REQUEST_TIMEOUT_MS }));
      set.delete(uri);
    }
    return { subscribed: set.has(uri) };
  }

  // ---- prompts and completions ----------------------------------------------------------------

  async listPrompts(serverId: string, accountId: string, cursor?: string): Promise<{ prompts: PromptView[]; nextCursor: string | null }> {
    const { client, server } = this.client(serverId, accountId);
    this.capability(client, server, 'prompts');
    const page = await ask(server, () => client.listPrompts(cursor === undefined ? undefined : { cursor }, { timeout: REQUEST_TIMEOUT_MS }));
    return { prompts: page.prompts.slice(0, MAX_PAGE_ITEMS).map(promptView), nextCursor: nextCursorOf(page.nextCursor, cursor) };
  }

  /** Has the server fill in a prompt; every message is returned for the person to read first. */
  async getPrompt(serverId: string, accountId: string, name: string, args: Record<string, string> = {}): Promise<PromptGotView> {
    const journal = (outcome: 'read' | 'refused' | 'failed', bytes: number | null, truncated: boolean, reason: string | null) =>
      this.journal({ kind: 'prompt', serverId, accountId, target: name, outcome, bytes, truncated, reason });
    let live: ReturnType<ServerData['client']>;
    try {
      live = this.client(serverId, accountId);
      this.capability(live.client, live.server, 'prompts');
    } catch (error) {
      if (error instanceof WardenError && error.code !== 'NOT_FOUND') await journal('refused', null, false, error.message);
      throw error;
    }
    const { client, server, account } = live;
    let result: Awaited<ReturnType<Client['getPrompt']>>;
    try {
      result = await ask(server, () => client.getPrompt({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS }));
    } catch (error) {
      await journal('failed', null, false, error instanceof Error ? error.message : String(error));
      throw error;
    }
    const { messages, keptBytes, totalBytes } = promptMessagesOf(result, this.maxBytes);
    const cut = keptBytes < totalBytes ? { keptBytes, totalBytes } : null;
    await journal('read', totalBytes, cut !== null, null);
    const title = displayText(name, 256);
    const staged = this.stage({ kind: 'prompt', serverId, accountId, serverLabel: server, title, text: promptModelText(messages) });
    return {
      attachmentId: staged.id,
      serverLabel: server,
      accountLabel: account,
      name: title,
      description: typeof result.description === 'string' ? displayText(result.description, 8 * 1024) : null,
      messages,
      truncated: cut,
      flags: staged.flags,
    };
  }

  async complete(
    serverId: string,
    accountId: string,
    ref: { type: 'prompt'; name: string } | { type: 'resource-template'; uriTemplate: string },
    argument: { name: string; value: string },
    context?: Record<string, string>,
  ): Promise<{ values: string[]; hasMore: boolean }> {
    const { client, server } = this.client(serverId, accountId);
    this.capability(client, server, 'completions');
    const result = await ask(server, () =>
      client.complete(
        {
          ref: ref.type === 'prompt' ? { type: 'ref/prompt', name: ref.name } : { type: 'ref/resource', uri: ref.uriTemplate },
          argument,
          ...(context ? { context: { arguments: context } } : {}),
        },
        { timeout: REQUEST_TIMEOUT_MS },
      ),
    );
    // The spec caps a completion at 100 values; a server that sends more is cut, not trusted.
    const values = result.completion.values.slice(0, 100).map((v) => displayText(v, 1000));
    return { values, hasMore: result.completion.hasMore === true || result.completion.values.length > 100 };
  }

  // ---- logging ------------------------------------------------------------------------------

  /** The level asked of (server, account): the one chosen (kept with the account), else `info`. */
  private levelOf(serverId: string, accountId: string): LogLevel {
    return (this.deps.levels ? this.deps.levels.get(serverId, accountId) : this.levelsThisRun.get(keyOf(serverId, accountId))) ?? 'info';
  }

  /** Sets the least severe level the server sends; kept with the account and applied on every (re)connect. */
  async setLevel(serverId: string, accountId: string, level: LogLevel): Promise<{ level: LogLevel; applied: boolean }> {
    this.labels(serverId, accountId);
    if (this.deps.levels) this.deps.levels.set(serverId, accountId, level);
    else this.levelsThisRun.set(keyOf(serverId, accountId), level);
    return { level, applied: await this.applyLevel(serverId, accountId) };
  }

  /** Sends `logging/setLevel` when the server offers logging; false when it was not sent. */
  private async applyLevel(serverId: string, accountId: string): Promise<boolean> {
    const client = this.deps.manager.connection(serverId, accountId)?.liveClient;
    if (!client?.getServerCapabilities()?.logging) return false;
    const level = this.levelOf(serverId, accountId);
    try {
      await client.setLoggingLevel(level, { timeout: REQUEST_TIMEOUT_MS });
      return true;
    } catch (error) {
      this.deps.manager.serverLogLine(serverId, accountId, `Warden could not set the log level to ${level}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  private onNotice(serverId: string, accountId: string, method: ServerNoticeMethod, params: unknown): void {
    const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
    if (method === 'notifications/message') {
      const level = LEVELS.includes(p.level as LogLevel) ? (p.level as LogLevel) : 'info';
      // A server that ignores the level it was asked for is held to it here.
      const wanted = this.levelOf(serverId, accountId);
      if (LEVELS.indexOf(level) < LEVELS.indexOf(wanted)) return;
      const logger = typeof p.logger === 'string' ? ` ${sanitizeForDisplay(p.logger).slice(0, 100)}` : '';
      const data = typeof p.data === 'string' ? p.data : safeJson(p.data);
      // One line: the log panel shows a line per message, so newlines in the server's text are flattened.
      this.deps.manager.serverLogLine(serverId, accountId, `${level}${logger}: ${sanitizeForDisplay(data.slice(0, MAX_LOG_MESSAGE_CHARS)).replace(/\s*\n\s*/g, ' ⏎ ')}`);
      return;
    }
    if (method === 'notifications/resources/updated' && typeof p.uri === 'string') {
      if (!this.subscriptions.get(keyOf(serverId, accountId))?.has(p.uri)) return;
      this.deps.events.emit('resources:updated', { serverId, accountId, uri: p.uri, displayUri: displayText(p.uri, 2048) });
      return;
    }
    // Lists are read page by page when a view asks, so there is nothing kept here to refresh: the
    // view is told, and lists again through the same checks as the first time.
    if (method === 'notifications/resources/list_changed') this.deps.events.emit('resources:list-changed', { serverId, accountId });
    else if (method === 'notifications/prompts/list_changed') this.deps.events.emit('prompts:list-changed', { serverId, accountId });
  }

  // ---- staging ------------------------------------------------------------------------------

  private stage(input: Omit<StagedAttachment, 'id' | 'flags' | 'stagedAt'>): StagedAttachment {
    const now = this.deps.clock.now();
    for (const [id, s] of this.staged) if (now - s.stagedAt > STAGED_TTL_MS) this.staged.delete(id);
    while (this.staged.size >= MAX_STAGED) this.staged.delete(this.staged.keys().next().value!);
    const staged: StagedAttachment = { ...input, id: randomUUID(), flags: sanitizeServerText(input.text, { flag: true }).flags, stagedAt: now };
    this.staged.set(staged.id, staged);
    return staged;
  }

  /** A staged attachment by id (still fresh), or undefined; the chat takes what was shown, never re-reads. */
  attachment(id: string): StagedAttachment | undefined {
    const staged = this.staged.get(id);
    if (!staged || this.deps.clock.now() - staged.stagedAt > STAGED_TTL_MS) return undefined;
    return staged;
  }

  /**
   * A staged attachment for a chat message; throws in words when it expired or was never staged,
   * or when the person's rules now keep its server from being read.
   */
  attachmentForChat(id: string): StagedAttachment {
    const staged = this.attachment(id);
    if (!staged) throw new WardenError('NOT_FOUND', 'no such resource or prompt (it expired, or was never read); read it again');
    const refusal = accessRefusal(this.deps.policy(), staged.serverId, staged.accountId, staged.serverLabel);
    if (refusal) throw new WardenError('DENIED', refusal);
    return staged;
  }

  private async journal(p: { kind: 'resource' | 'prompt'; serverId: string; accountId: string; target: string; outcome: 'read' | 'refused' | 'failed'; bytes: number | null; truncated: boolean; reason: string | null }): Promise<void> {
    await this.deps.journal.append([
      journalEntry('server.data-read', {
        ...p,
        target: cutUtf8(p.target, 2048),
        reason: p.reason === null ? null : displayText(p.reason, 1024),
        source: 'user',
        at: this.deps.clock.now(),
      }),
    ]);
  }
}

/** The next cursor, or null; a server that hands back the cursor it was given would loop forever. */
function nextCursorOf(next: string | undefined, given: string | undefined): string | null {
  if (typeof next !== 'string' || next.length === 0 || next.length > 1000 || next === given) return null;
  return next;
}

/** A request to the server, its failure in plain words naming the server. */
async function ask<T>(server: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof WardenError) throw error;
    const message = displayText(error instanceof Error ? error.message : String(error), 1024);
    if (error instanceof McpError) {
      if (error.code === RpcErrorCode.ConnectionClosed) throw new WardenError('NOT_CONNECTED', `${server} closed the connection before it answered`);
      if (error.code === RpcErrorCode.RequestTimeout) throw new WardenError('TIMEOUT', `${server} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
      if (error.code === RpcErrorCode.MethodNotFound) throw new WardenError('UNSUPPORTED', `${server} does not support this: ${message}`);
      if (error.code === -32002) throw new WardenError('NOT_FOUND', `${server} has no such resource: ${message}`);
      if (error.code === RpcErrorCode.InvalidParams) throw new WardenError('VALIDATION_FAILED', `${server} refused the request: ${message}`);
    }
    if (error instanceof Error && error.name === 'ZodError') throw new WardenError('CONFLICT', `${server} answered with something that is not a valid MCP answer`);
    throw new WardenError('CONFLICT', `${server} answered with an error: ${message}`);
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '[a value that cannot be shown]';
  }
}

type ServerDataChannel =
  | 'connections:features'
  | 'resources:list'
  | 'resources:templates'
  | 'resources:read'
  | 'resources:subscribe'
  | 'resources:unsubscribe'
  | 'prompts:list'
  | 'prompts:get'
  | 'completions:complete'
  | 'logging:set-level';

/** The contract handlers of resources, prompts, completions and log levels. */
export function serverDataHandlers(data: ServerData): Pick<Handlers, ServerDataChannel> {
  return {
    'connections:features': ({ serverId, accountId }) => data.features(serverId, accountId),
    'resources:list': ({ serverId, accountId, cursor }) => data.listResources(serverId, accountId, cursor),
    'resources:templates': ({ serverId, accountId, cursor }) => data.listTemplates(serverId, accountId, cursor),
    'resources:read': ({ serverId, accountId, uri }) => data.read(serverId, accountId, uri),
    'resources:subscribe': ({ serverId, accountId, uri }) => data.subscribe(serverId, accountId, uri, true),
    'resources:unsubscribe': ({ serverId, accountId, uri }) => data.subscribe(serverId, accountId, uri, false),
    'prompts:list': ({ serverId, accountId, cursor }) => data.listPrompts(serverId, accountId, cursor),
    'prompts:get': ({ serverId, accountId, name, arguments: args }) => data.getPrompt(serverId, accountId, name, args),
    'completions:complete': ({ serverId, accountId, ref, argument, context }) => data.complete(serverId, accountId, ref, argument, context),
    'logging:set-level': ({ serverId, accountId, level }) => data.setLevel(serverId, accountId, level),
  };
}
