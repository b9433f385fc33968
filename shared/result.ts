/**
 * The result envelope every contract call returns.
 *
 * Thrown errors lose everything but `message` when they cross Electron's `invoke`; a value does
 * not, so handlers' failures travel as `{ ok: false, error: { code, message } }` (Signal's
 * `wrapResult`) and the renderer can show the code-specific text.
 */
import { z } from 'zod';

/** Stable error codes. The UI keys its messages off these, so never rename one. */
export const ErrorCode = z.enum([
  'FORBIDDEN_SENDER',
  'UNKNOWN_CHANNEL',
  'INVALID_REQUEST',
  'INVALID_RESPONSE',
  'NOT_FOUND',
  'CONFLICT',
  'DENIED',
  'VALIDATION_FAILED',
  'KEYCHAIN_UNAVAILABLE',
  'NOT_CONNECTED',
  'TIMEOUT',
  'CANCELLED',
  'UNSUPPORTED',
  'AUTH_REQUIRED',
  'AUTH_FAILED',
  'INTERNAL',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** A domain error as it crosses a process boundary. */
export const WireError = z.object({ code: ErrorCode, message: z.string() });
export type WireError = z.infer<typeof WireError>;

/** `{ ok: true, value } | { ok: false, error }`. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: WireError };

/**
 * A domain error with a stable code, thrown inside main/core and turned into a `Result` at the
 * contract boundary.
 */
export class WardenError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WardenError';
  }
}

/** Builds a failed result. */
export function fail(code: ErrorCode, message: string): { ok: false; error: WireError } {
  return { ok: false, error: { code, message } };
}
