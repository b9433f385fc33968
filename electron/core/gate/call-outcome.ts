/**
 * How the end of a `tools/call` maps onto the operation states (shared/domain/operations.ts): the
 * one mapping, part of the ToolExecutor port's contract. The connection layer marks its errors
 * with it and the gate records the state it gives.
 *
 * The question is always "could the server have acted?". Once the request has been handed to
 * the transport, the server may have received it and done the work even if no answer comes back,
 * so every ending without an answer is `outcome_unknown` and is never retried automatically.
 *
 * | what happened                                              | outcome           |
 * |------------------------------------------------------------|-------------------|
 * | server answered with a CallToolResult                      | succeeded         |
 * | server answered with a CallToolResult marked `isError`     | failed (the tool's own answer, kept as the result) |
 * | server answered with a JSON-RPC error (e.g. -32602)         | failed            |
 * | server answered, but the result is malformed / violates the tool's outputSchema | failed |
 * | request never left (not connected, transport refused it)   | failed (not sent) |
 * | process exited / connection closed while waiting           | outcome_unknown   |
 * | per-call timeout fired after the request was sent          | outcome_unknown   |
 * | caller aborted (user stop, permission revoked) after sending, whatever came back | outcome_unknown (`notifications/cancelled` was sent) |
 * | the same, for a tool that only reads by annotations Warden trusts (reads-only.ts) | failed, code STOPPED_READS_ONLY: nothing changed, nothing to check (recorded by the gate, execute.ts) |
 */

/** Why a call ended without an answer. */
export type UnknownReason = 'connection_closed' | 'timeout' | 'cancelled' | 'transport_error';

/**
 * Thrown (or rejected) by an executor when it knows for certain the request never reached the
 * server (not connected, transport refused before sending). The gate records `failed`.
 * Any other rejection is treated as "may have reached the server": `outcome_unknown`.
 */
export class CallNotSentError extends Error {
  readonly notSent = true as const;
  constructor(message: string) {
    super(message);
    this.name = 'CallNotSentError';
  }
}

/**
 * The server answered a `tools/call` with a JSON-RPC error (or an answer the client could not
 * accept): the call definitely completed and definitely failed. The gate records `failed`.
 */
export class ToolCallFailedError extends Error {
  readonly callFailed = true as const;
  constructor(
    message: string,
    /** JSON-RPC error code, when the server sent one. */
    readonly rpcCode?: number,
  ) {
    super(message);
    this.name = 'ToolCallFailedError';
  }
}

/**
 * The call was sent and no answer will come: the server may or may not have acted. The gate
 * records `outcome_unknown` (any rejection that is not `notSent`/`callFailed` means this).
 */
export class ToolCallOutcomeUnknownError extends Error {
  readonly outcomeUnknown = true as const;
  constructor(
    message: string,
    readonly reason: UnknownReason,
  ) {
    super(message);
    this.name = 'ToolCallOutcomeUnknownError';
  }
}

/** True if `error` says the server answered and the call failed (marked `callFailed: true`). */
export function isCallFailed(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { callFailed?: unknown }).callFailed === true;
}

/** True if `error` says the call certainly never reached the server (marked `notSent: true`). */
export function isCallNotSent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { notSent?: unknown }).notSent === true;
}

/** The operation state a finished (or abandoned) call leads to. */
export type CallOutcomeState = 'succeeded' | 'failed' | 'outcome_unknown';

/** How `ToolExecutor.call` ended: its result, or its rejection and whether the call had been aborted by then. */
export type CallEnding = { ok: true; isError?: boolean } | { ok: false; error: unknown; aborted?: boolean };

/**
 * The operation state for the way `ToolExecutor.call` ended (the table above): resolved →
 * succeeded (failed when the tool marked its answer `isError`); rejected as not sent → failed;
 * rejected with the server's error → failed unless the call had been aborted (a stopped call's
 * server may have acted); any other rejection → outcome_unknown.
 */
export function outcomeOf(ending: CallEnding): CallOutcomeState {
  if (ending.ok) return ending.isError === true ? 'failed' : 'succeeded';
  if (isCallNotSent(ending.error)) return 'failed';
  if (isCallFailed(ending.error) && ending.aborted !== true) return 'failed';
  return 'outcome_unknown';
}
