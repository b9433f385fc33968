/**
 * The renderer's typed client for `window.warden`.
 *
 * `window.warden` is generated from the contract in shared/ipc.ts (by the Electron preload, or by
 * the browser test host's stand-in), so its type here is the contract's own `WardenApi`; there is
 * no hand-kept declaration that could drift. Every call returns a `Result`; `unwrap` turns it into
 * the value or a `ContractError` carrying the contract's stable code and message, so views can
 * show the code-specific text. (shared/result's `WardenError` is not imported at runtime here: it
 * would pull all of zod into the renderer bundle.)
 */
import type { WardenApi } from '../../shared/ipc';
import type { ErrorCode, FieldIssue, Result } from '../../shared/result';
import type { ShownError } from './errors';

export type { ShownError } from './errors';

/** A failed contract call as seen by the renderer: the stable error code, its message and any failing fields. */
export class ContractError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fields?: readonly FieldIssue[],
  ) {
    super(message);
    this.name = 'ContractError';
  }
}

declare global {
  interface Window {
    /** The contract bridge. Absent when the page is opened outside Warden (e.g. a plain browser tab). */
    readonly warden?: WardenApi;
  }
}

/**
 * Returns the contract bridge, or throws NOT_CONNECTED when the page runs without one.
 *
 * Why: opening the built renderer in a plain browser must say clearly what is missing instead of
 * failing later with "cannot read properties of undefined".
 */
export function getWardenApi(): WardenApi {
  // Read through globalThis (which is `window` in the page) so this also typechecks and runs in
  // the Node unit tests, where there is no `window`.
  const api = (globalThis as { warden?: WardenApi }).warden;
  if (!api) {
    throw new ContractError(
      'NOT_CONNECTED',
      'window.warden is missing: this page must run inside Warden (or the test host), which provides the contract bridge.',
    );
  }
  return api;
}

/**
 * Awaits a contract call and returns its value, or throws a `ContractError(code, message)`.
 *
 * Why: the bridge never throws for expected failures (they travel as values), but views are easier
 * to write with exceptions; a transport failure (the bridge's promise rejecting) becomes
 * NOT_CONNECTED so it is still shown with a code.
 */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await call;
  } catch (error) {
    throw new ContractError('NOT_CONNECTED', `The contract bridge failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!result || typeof result !== 'object' || typeof result.ok !== 'boolean') {
    throw new ContractError('INVALID_RESPONSE', 'The contract bridge returned something that is not a Result.');
  }
  if (result.ok) return result.value;
  throw new ContractError(result.error.code, result.error.message, result.error.fields);
}

/**
 * Converts anything thrown into `{ code, message, fields }` for display (errors.ts says it in words).
 *
 * Why: views show every failure with its code; unexpected throws (bugs) are labelled INTERNAL
 * rather than hidden.
 */
export function toShownError(error: unknown): ShownError {
  if (error instanceof ContractError) return { code: error.code, message: error.message, ...(error.fields?.length ? { fields: error.fields } : {}) };
  return { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) };
}
