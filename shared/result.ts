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
  // The person cancelled Warden's own confirmation dialog: nothing changed, and no rule refused it.
  'NOT_CONFIRMED',
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

/**
 * One field a request got wrong: where (`['definition', 'url']`) and what is wrong with it.
 *
 * Why as data: a form puts each problem next to the field it belongs to and names the field in
 * words, which it cannot do reliably from a message's text.
 */
export const FieldIssue = z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() });
export type FieldIssue = z.infer<typeof FieldIssue>;

/** A domain error as it crosses a process boundary. */
export const WireError = z.object({ code: ErrorCode, message: z.string(), fields: z.array(FieldIssue).optional() });
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
    /** The fields the request got wrong, when the error is about input. */
    readonly fields?: readonly FieldIssue[],
  ) {
    super(message);
    this.name = 'WardenError';
  }
}

/** Builds a failed result; `fields` (when given and not empty) say which inputs were wrong. */
export function fail(code: ErrorCode, message: string, fields?: readonly FieldIssue[]): { ok: false; error: WireError } {
  return { ok: false, error: { code, message, ...(fields && fields.length ? { fields: [...fields] } : {}) } };
}
