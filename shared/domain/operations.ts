/**
 * The operation state machine (docs/ARCHITECTURE.md), shared so the renderer can show states and the
 * core can journal them with one vocabulary.
 */
import { z } from 'zod';

export const OperationState = z.enum([
  'proposed',
  'validation_failed',
  'denied',
  'awaiting_approval',
  'rejected',
  'expired',
  'invalidated',
  'cancelled',
  'approved',
  'executing',
  'succeeded',
  'failed',
  'outcome_unknown',
]);
export type OperationState = z.infer<typeof OperationState>;

/** States after which nothing more happens to an operation. */
export const TERMINAL_STATES: ReadonlySet<OperationState> = new Set([
  'validation_failed',
  'denied',
  'rejected',
  'expired',
  'invalidated',
  'cancelled',
  'succeeded',
  'failed',
  'outcome_unknown',
]);

/**
 * Where a tool call came from: a model in a chat, or a person (Run). The gate decides the same way
 * whatever the source; it is recorded so a person can tell who asked.
 */
export const CallSource = z.enum(['model', 'user', 'gateway']);
export type CallSource = z.infer<typeof CallSource>;

/** Permission modes a person can set. Anything else is a configuration error, read as disabled. */
export const PermissionMode = z.enum(['allow', 'ask', 'disabled']);
export type PermissionMode = z.infer<typeof PermissionMode>;

/** The three outcomes of the pure policy function. */
export const Decision = z.enum(['allow', 'ask', 'deny']);
export type Decision = z.infer<typeof Decision>;
