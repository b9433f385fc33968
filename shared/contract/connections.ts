/**
 * Contract entries for MCP connections: connect/disconnect, status, the
 * tools a connected (server, account) lists, its captured logs, and the events that keep the
 * renderer's cache current.
 *
 * Everything here is display data. Text that came from a server (descriptions, instructions,
 * log lines, progress messages, error reasons) is sanitized in main before it is sent, and is
 * labelled as the server's claim by the UI. No secret value is ever part of any of these shapes:
 * env/header secrets are read from the keychain inside main at connect time and stay there.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { EntityId } from '../domain/servers';
import { ConnectFailure } from '../domain/connect-failure';

/** State of one (server, account) connection. */
export const ConnectionStatusView = z.discriminatedUnion('state', [
  z.object({ state: z.literal('connecting'), attempt: z.number().int().positive() }).strict(),
  z
    .object({
      state: z.literal('connected'),
      transport: z.enum(['stdio', 'streamable-http', 'sse', 'in-process']),
      /** What the server calls itself: display only, never an identity. */
      serverName: z.string().optional(),
      serverVersion: z.string().optional(),
    })
    .strict(),
  z
    .object({
      state: z.literal('error'),
      reason: z.string(),
      /** What kind of failure it was, as data the UI turns into a sentence with the fix. */
      failure: ConnectFailure.optional(),
      /** Set while an automatic reconnect is scheduled. */
      retryInMs: z.number().int().nonnegative().optional(),
      attempt: z.number().int().positive().optional(),
    })
    .strict(),
  z.object({ state: z.literal('auth_required'), reason: z.string() }).strict(),
  z.object({ state: z.literal('disconnected') }).strict(),
]);
export type ConnectionStatusView = z.infer<typeof ConnectionStatusView>;

/** One (server, account) connection as the Servers view shows it. */
export const ConnectionView = z
  .object({
    serverId: EntityId,
    accountId: EntityId,
    status: ConnectionStatusView,
    toolCount: z.number().int().nonnegative(),
    /** The server's `instructions` (untrusted, sanitized), if it sent any. */
    instructions: z.string().optional(),
    /**
     * Why the instructions read like instructions to an AI model ("tells the model to ignore its
     * instructions"), in plain words; absent when nothing matched. A heuristic: it never blocks anything.
     */
    instructionsFlags: z.array(z.string()).optional(),
    instructionsHash: z.string().nullable(),
    endpointHash: z.string(),
  })
  .strict();
export type ConnectionView = z.infer<typeof ConnectionView>;

/** A discovered tool. Identity is (serverId, accountId, name); serverInfo.name plays no part. */
export const ToolView = z
  .object({
    serverId: EntityId,
    accountId: EntityId,
    name: z.string(),
    title: z.string().optional(),
    /** The server's description, sanitized for display; untrusted. */
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    /** Untrusted hints (readOnlyHint, destructiveHint, …) as the server claims them. */
    annotations: z.record(z.string(), z.unknown()).optional(),
    /**
     * Why the tool's title, description or annotated title read like instructions to an AI model,
     * in plain words; absent when nothing matched. A heuristic: it never blocks anything.
     */
    flags: z.array(z.string()).optional(),
    /**
     * Why Warden never calls this tool (its schema is too large or broken, or a name in it holds
     * hidden characters), in words without the tool's name; absent when it can be called.
     */
    unusable: z.string().optional(),
    contractHash: z.string(),
  })
  .strict();
export type ToolView = z.infer<typeof ToolView>;

/**
 * One captured log line: the server's stderr, Warden's own note about the connection, or a log
 * message the server sent over MCP (`server`).
 */
export const LogLineView = z
  .object({
    seq: z.number().int().positive(),
    time: z.number(),
    source: z.enum(['stderr', 'warden', 'server']),
    /** Sanitized: no escape sequences or control characters. */
    text: z.string(),
  })
  .strict();
export type LogLineView = z.infer<typeof LogLineView>;

/** The parts of a tool contract a change can touch. */
export const ContractFieldView = z.enum(['title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'instructions']);

const ConnectionKey = z.object({ serverId: EntityId, accountId: EntityId }).strict();

export const connectionsChannels = defineChannels({
  /** Connects one account of a server and discovers its tools; answers with the resulting state. */
  'connections:connect': {
    doc: 'Connects one (server, account) and discovers its tools; returns the resulting connection state.',
    request: ConnectionKey,
    response: ConnectionView,
  },
  /** Disconnects one account of a server (or all of its accounts); stdio process trees are killed. */
  'connections:disconnect': {
    doc: 'Disconnects one account of a server, or every account when accountId is omitted.',
    request: z.object({ serverId: EntityId, accountId: EntityId.optional() }).strict(),
    response: z.object({}).strict(),
  },
  /** Current state of every known connection, optionally of one server. */
  'connections:status': {
    doc: 'Current state of every known connection (optionally of one server).',
    request: z.object({ serverId: EntityId.optional() }).strict(),
    response: z.object({ connections: z.array(ConnectionView) }).strict(),
  },
  /** The tools a connected (server, account) currently lists. */
  'connections:list-tools': {
    doc: 'The tools a connected (server, account) currently lists, with their contract hashes.',
    request: ConnectionKey,
    response: z.object({ tools: z.array(ToolView) }).strict(),
  },
  /** Captured log lines of one (server, account), after a sequence number, for incremental tailing. */
  'connections:logs': {
    doc: 'Captured stderr and connection notes of one (server, account), newest last.',
    request: ConnectionKey.extend({
      afterSeq: z.number().int().nonnegative().optional(),
      limit: z.number().int().positive().max(5000).optional(),
    }).strict(),
    response: z.object({ lines: z.array(LogLineView), dropped: z.number().int().nonnegative() }).strict(),
  },
});

export const connectionsEvents = defineEvents({
  /** A connection changed state (connecting, connected, error, auth_required, disconnected). */
  'connections:status-changed': {
    doc: 'A (server, account) connection changed state.',
    payload: ConnectionKey.extend({ status: ConnectionStatusView }).strict(),
  },
  /** Progress of a running tool call, tagged with its operation id. */
  'connections:progress': {
    doc: 'Progress notification of a running tool call.',
    payload: ConnectionKey.extend({
      operationId: z.string(),
      toolName: z.string(),
      progress: z.number(),
      total: z.number().optional(),
      message: z.string().optional(),
    }).strict(),
  },
  /** The tools a connection lists changed (first discovery, list_changed, reconnect). */
  'connections:tools-changed': {
    doc: 'Tools were added, removed or changed their contract (a pinned hash no longer matches).',
    payload: ConnectionKey.extend({
      trigger: z.enum(['initial', 'list_changed', 'reconnect', 'recheck']),
      added: z.array(z.string()),
      removed: z.array(z.string()),
      changed: z.array(z.object({ name: z.string(), fields: z.array(ContractFieldView) }).strict()),
      instructionsChanged: z.boolean(),
    }).strict(),
  },
});
