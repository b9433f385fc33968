/**
 * One `tools/call` on a live connection: sent exactly as given, bounded by a timeout, stopped by
 * an AbortSignal (the SDK then sends `notifications/cancelled`), its progress forwarded, and every
 * way it can end turned into the error gate/call-outcome.ts maps to an operation state: not sent,
 * failed (the server answered with an error), or outcome unknown (sent, no answer).
 *
 * Whether the request left is seen at the transport's edge (`beforeSend`, through the connection's
 * TappedTransport), never guessed: only a call that certainly never left may end "not sent".
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode as RpcErrorCode, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CallNotSentError, ToolCallFailedError, ToolCallOutcomeUnknownError } from '../gate/call-outcome';
import type { ToolCallResult } from '../gate/ports';
import { displayText } from '../text/sanitize';
import { errorText, TEXT_LIMITS } from './connection-common';
import type { DiscoveredTool } from './contract-diff';
import type { LogRing } from './log-ring';
import { OutputSchemas } from './output-schema';

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
  /** Told about each progress notification of this call; absent = no progress is asked of the server. */
  onProgress?: (p: CallProgress) => void;
}

/** What a call needs from its connection. */
export interface ToolCallDeps {
  log: LogRing;
  /** The timeout when the call sets none (the server's, else the manager's default). */
  defaultTimeoutMs: number;
  /** The listed contract a call is decided on: its outputSchema is what the answer must keep. */
  contract(toolName: string): DiscoveredTool | undefined;
  /** How many times the connection's transport has closed (a change during a call means it died). */
  closeCount(): number;
  /** Whether `client` is still the connection's live client. */
  isLive(client: Client): boolean;
  /** A request failed below MCP (not a JSON-RPC error): the connection checks the server is still there. */
  transportFailed(client: Client, why: string): void;
}

/** Marks the params object of one tools/call, so `beforeSend` can tell that *this* call left. */
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

/** The tool calls of one connection: sending, progress routing, and how each ended. */
export class ToolCalls {
  /** progressToken of a call in flight → its listener. */
  private readonly progressListeners = new Map<number, (p: CallProgress) => void>();
  /** Our own progress tokens (the SDK's `onprogress` option copies the request params per call). */
  private nextProgressToken = 1;
  /** Checks structured results against the outputSchema of the listing a call was decided on. */
  private readonly outputSchemas = new OutputSchemas();

  constructor(private readonly deps: ToolCallDeps) {}

  /**
   * Sends `tools/call` on `client` and waits for the answer (see gate/call-outcome.ts for how
   * endings map to states). `args` is sent exactly as given.
   */
  call(client: Client, toolName: string, args: Readonly<Record<string, unknown>>, options: CallOptions): Promise<ToolCallResult> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(new CallNotSentError('the call was cancelled before it was sent'));
    // The params object is ours: `beforeSend` finds CALL_STATE on it and marks *this* call sent.
    // Progress uses our own token in `_meta` (asking the SDK via `onprogress` would copy the
    // params and register a second handler per call); `routeProgress` delivers it.
    const state: CallState = { sent: false };
    const token = options.onProgress ? this.nextProgressToken++ : 0;
    const params: CallParams = { name: toolName, arguments: args as Record<string, unknown>, ...(token !== 0 ? { _meta: { progressToken: token } } : {}), [CALL_STATE]: state };
    if (options.onProgress) this.progressListeners.set(token, options.onProgress);
    const closesBefore = this.deps.closeCount();
    const contract = this.deps.contract(toolName);
    const timeout = options.timeoutMs ?? this.deps.defaultTimeoutMs;
    // One timer per call: the SDK's own `timeout` (it sends notifications/cancelled when it fires).
    return client.callTool(params, CallToolResultSchema, { signal, timeout }).then(
      (result) => {
        if (token !== 0) this.progressListeners.delete(token);
        // The server answered but broke its own declared output: its error, never a success.
        const problem = this.outputSchemas.problem(contract, result as ToolCallResult);
        if (problem !== null) {
          this.deps.log.note(problem);
          throw new ToolCallFailedError(problem);
        }
        return result as ToolCallResult;
      },
      (error: unknown) => {
        if (token !== 0) this.progressListeners.delete(token);
        throw this.callError(error, client, state.sent, signal, closesBefore, timeout);
      },
    );
  }

  /** The transport is about to get `message`: if it is one of our calls, that call has left. */
  beforeSend(message: JSONRPCMessage): void {
    // Only the params object `call` built carries CALL_STATE (a symbol: never serialized).
    const state = (message as { params?: { [CALL_STATE]?: CallState } }).params?.[CALL_STATE];
    if (state !== undefined) state.sent = true;
  }

  /**
   * Delivers a `notifications/progress` to the call it belongs to, at once and in arrival order
   * (the SDK would hand it over a microtask later, after an answer that followed it had already
   * ended the call). True when `message` was a progress notification (the SDK never sees it).
   */
  routeProgress(message: JSONRPCMessage): boolean {
    if (!('method' in message) || message.method !== 'notifications/progress' || 'id' in message) return false;
    const p = message.params as { progressToken?: string | number; progress?: unknown; total?: unknown; message?: unknown } | undefined;
    const listener = typeof p?.progressToken === 'number' ? this.progressListeners.get(p.progressToken) : undefined;
    // Finite numbers only: JSON.parse turns 1e400 into Infinity, which no display or contract accepts.
    if (listener !== undefined && typeof p?.progress === 'number' && Number.isFinite(p.progress)) {
      listener({
        progress: p.progress,
        ...(typeof p.total === 'number' && Number.isFinite(p.total) ? { total: p.total } : {}),
        ...(typeof p.message === 'string' ? { message: displayText(p.message, TEXT_LIMITS.note) } : {}),
      });
    }
    return true;
  }

  /** How a rejected tools/call ends (see gate/call-outcome.ts): the error to throw for it. */
  private callError(error: unknown, client: Client, sent: boolean, signal: AbortSignal | undefined, closesBefore: number, timeout: number): Error {
    if (this.deps.isLive(client) && !(error instanceof McpError)) this.deps.transportFailed(client, errorText(error));
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
    if (this.deps.closeCount() !== closesBefore || (error instanceof McpError && error.code === RpcErrorCode.ConnectionClosed && !this.deps.isLive(client))) {
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
