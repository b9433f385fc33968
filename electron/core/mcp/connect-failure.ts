/**
 * Tells connection failures apart where they happen, so the UI can explain each one with its fix.
 *
 * The kinds come from facts, never from message text: the spawn error's errno, the socket error's
 * code somewhere in the `cause` chain (undici wraps it in "fetch failed"), the HTTP status of the
 * SDK's StreamableHTTPError / SseError, the exit of the server's process and our own timeout.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ConnectFailure } from '../../../shared/domain/connect-failure';
import type { ServerDefinition } from '../../../shared/domain/servers';
import { errorChain, hostAndPort, networkFailureOf } from '../net/network-failure';
import { sanitizeForDisplay } from '../text/sanitize';

/** Thrown when the connect (start, handshake and first listing) takes longer than allowed. */
export class ConnectTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`connect timed out after ${ms} ms`);
    this.name = 'ConnectTimeoutError';
  }
}

/** Thrown when a secret a definition needs is not in the keychain. */
export class MissingSecretError extends Error {
  constructor(
    readonly secretName: string,
    message: string,
  ) {
    super(message);
    this.name = 'MissingSecretError';
  }
}

/** How a stdio server's process ended, as the transport saw it. */
export interface ProcessExit {
  exitCode: number | null;
  signal: string | null;
  /** Its last non-empty stderr line, raw (sanitized here). */
  lastStderr: string | null;
}

/** What the classifier may know besides the error. */
export interface FailureContext {
  definition: ServerDefinition;
  /** Set when a stdio server's process has exited. */
  exit?: ProcessExit;
  /** True while connecting (before the connection was ever usable). */
  atStart: boolean;
  /** The first line a stdio server wrote to stdout that is not JSON-RPC, if any. */
  malformedStdout?: string;
}

/** The longest server-supplied text a failure carries (a stderr line, a detail). */
const MAX_TEXT = 300;

function clip(text: string): string {
  const clean = sanitizeForDisplay(text).trim();
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean;
}

/** The program a stdio definition starts (sanitized: it is shown). */
function commandOf(def: ServerDefinition): string {
  return def.transport === 'stdio' ? clip(def.command) : '';
}

/**
 * What kind of failure `error` is, as data for the UI.
 *
 * Why here and not in the renderer: only the core sees the errno, the status and the process's
 * exit; a message's wording is not a contract and changes with Node, undici and the SDK.
 */
export function classifyConnectFailure(error: unknown, ctx: FailureContext): ConnectFailure {
  const def = ctx.definition;
  if (error instanceof MissingSecretError) return { kind: 'missing-secret', name: clip(error.secretName) };

  if (def.transport === 'stdio') {
    const spawnCode = (error as { spawnCode?: unknown } | null)?.spawnCode;
    if (spawnCode === 'ENOENT') {
      if ((error as { cwdMissing?: unknown }).cwdMissing === true) return { kind: 'working-folder-missing', command: commandOf(def), cwd: clip(def.cwd ?? '') };
      return { kind: 'command-not-found', command: commandOf(def) };
    }
    if (spawnCode === 'EACCES' || spawnCode === 'EPERM') return { kind: 'permission-denied', command: commandOf(def) };
    if (ctx.exit) {
      return {
        kind: 'process-exited',
        command: commandOf(def),
        atStart: ctx.atStart,
        exitCode: ctx.exit.exitCode,
        signal: ctx.exit.signal,
        // A program that prints its complaint to stdout (usage text) says it there instead.
        lastStderr: ctx.exit.lastStderr ? clip(ctx.exit.lastStderr) : ctx.malformedStdout ? clip(ctx.malformedStdout) : null,
      };
    }
  }

  if (def.transport === 'http') {
    const network = networkFailureOf(error, def.url);
    // An HTTP answer says more than a socket code that came with it (a reset after a 500).
    const status = httpStatusOf(error);
    if (network && network.kind !== 'network') return network;
    if (status !== undefined) return { kind: 'http-status', host: clip(hostAndPort(def.url).host), status };
    if (network) return network;
    if (error instanceof UnauthorizedError) return { kind: 'http-status', host: clip(hostAndPort(def.url).host), status: 401 };
  }

  const text = error instanceof Error ? error.message : String(error);
  // Something answered, but not as an MCP server: a stdio program printing other text on stdout
  // (the usual cause: logs written to stdout), an initialize answer the SDK's schema refused, or
  // an HTTP answer that is neither JSON nor an event stream.
  if (ctx.malformedStdout !== undefined) return { kind: 'not-mcp', detail: clip(ctx.malformedStdout) };
  if (error instanceof Error && error.name === 'ZodError') return { kind: 'not-mcp', detail: clip(text) };
  if (error instanceof StreamableHTTPError && error.code === -1) return { kind: 'not-mcp', detail: clip(text) };
  if (error instanceof ConnectTimeoutError) return { kind: 'timeout', ms: error.ms };
  return { kind: 'other', detail: clip(text) };
}

/** The HTTP status an SDK transport error carries (StreamableHTTPError / SseError), if it is one. */
function httpStatusOf(error: unknown): number | undefined {
  for (const e of errorChain(error)) {
    if ((e instanceof StreamableHTTPError || e instanceof SseError) && typeof e.code === 'number' && e.code >= 100 && e.code <= 599) return e.code;
  }
  return undefined;
}

/**
 * Whether a failure is a program that could not be started at all (not on PATH, not allowed to
 * run, its working folder missing). Such a failure repeats exactly until the person changes the
 * server's settings or their computer, so no automatic attempt follows it: retrying every few
 * seconds would only fill the log and keep the screen flickering between "retrying" and "failed".
 */
export function cannotStart(failure: ConnectFailure | undefined | null): boolean {
  return failure?.kind === 'command-not-found' || failure?.kind === 'working-folder-missing' || failure?.kind === 'permission-denied';
}
