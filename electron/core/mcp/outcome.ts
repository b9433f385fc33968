/**
 * How the end of a `tools/call` maps onto the operation states (shared/domain/operations.ts).
 *
 * The question is always "could the server have acted?". Once the request has been handed to
 * the transport, the server may have received it and done the work even if no answer comes back,
 * so every ending without an answer is `outcome_unknown` and is never retried automatically.
 *
 * | what happened                                              | outcome           |
 * |------------------------------------------------------------|-------------------|
 * | server answered with a CallToolResult                      | succeeded (with `isError` as the tool's own result) |
 * | server answered with a JSON-RPC error (e.g. -32602)         | failed            |
 * | server answered, but the result is malformed / violates the tool's outputSchema | failed |
 * | request never left (not connected, transport refused it)   | failed (not sent) |
 * | process exited / connection closed while waiting           | outcome_unknown   |
 * | per-call timeout fired after the request was sent          | outcome_unknown   |
 * | caller aborted (user stop, permission revoked) after sending | outcome_unknown (`notifications/cancelled` was sent) |
 */
import { CallNotSentError } from '../gate/ports';

/** Why a call ended without an answer. */
export type UnknownReason = 'connection_closed' | 'timeout' | 'cancelled' | 'transport_error';

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

export { CallNotSentError };

/** True if `error` says the server answered and the call failed (→ `failed`). */
export function isCallFailed(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { callFailed?: unknown }).callFailed === true;
}

/** The operation state a finished (or abandoned) call leads to. */
export type CallOutcomeState = 'succeeded' | 'failed' | 'outcome_unknown';

/**
 * The operation state for the way `ToolExecutor.call` ended: resolved → succeeded; rejected with
 * a not-sent or call-failed marker → failed; any other rejection → outcome_unknown.
 *
 * Why: one place says how executor endings become states, for the gate and for tests.
 */
export function outcomeOf(settled: { ok: true } | { ok: false; error: unknown }): CallOutcomeState {
  if (settled.ok) return 'succeeded';
  const e = settled.error as { notSent?: unknown; callFailed?: unknown } | null;
  if (e && typeof e === 'object' && (e.notSent === true || e.callFailed === true)) return 'failed';
  return 'outcome_unknown';
}
