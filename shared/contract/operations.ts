/**
 * Contract entries for operations: the gate's tool calls as the UI sees them (copies; nothing here
 * can change an operation).
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { DecisionRecord, ErrorRecord, RequestOrigin, ToolIdentity } from '../domain/journal-events';
import { OperationState } from '../domain/operations';

/**
 * A tool result as the UI shows it: the server's text, sanitized (no escape sequences, control,
 * bidi or zero-width characters), at most 64 KiB of it, with plain-words flags when it reads like
 * instructions to a model. Untrusted: show it labelled as the server's answer.
 */
export const ResultView = z.object({
  isError: z.boolean(),
  /** Each content block: its type and its text (a short label such as "[image content]" for binary content). */
  content: z.array(z.object({ type: z.string(), text: z.string() })),
  /** True when text in the result reads like instructions to a model (a heuristic; it never blocks anything). */
  instructionLike: z.boolean(),
  /** Why, in plain words ("tells the model to ignore its instructions"); empty when nothing matched. */
  flags: z.array(z.string()),
  /**
   * Set when not all of the result is shown: `shownBytes` of the whole result's `totalBytes`,
   * and the whole result's sha256 when Warden cut it before keeping it (null when only the
   * display was shortened).
   */
  truncated: z.object({ shownBytes: z.number().int().nonnegative(), totalBytes: z.number().int().nonnegative(), sha256: z.string().nullable() }).nullable(),
});
export type ResultView = z.infer<typeof ResultView>;

/** One operation as shown in the chat trace, approvals queue and activity views. */
export const OperationSummary = z.object({
  operationId: z.string(),
  state: OperationState,
  origin: RequestOrigin,
  identity: ToolIdentity,
  /** The exact arguments that were (or will be) sent. */
  arguments: z.record(z.string(), z.unknown()),
  fingerprint: z.string(),
  requestedAt: z.number(),
  expiresAt: z.number().nullable(),
  decision: DecisionRecord.nullable(),
  reason: z.string(),
  approvedByUser: z.boolean(),
  /** The result as shown (sanitized, capped, flagged): never the raw result. */
  result: ResultView.nullable(),
  error: ErrorRecord.nullable(),
  history: z.array(z.object({ from: OperationState, to: OperationState, reason: z.string(), at: z.number() })),
  /** Display labels; the tool's title and description are the server's words, sanitized. */
  labels: z.object({
    server: z.string(),
    account: z.string(),
    toolTitle: z.string().nullable(),
    toolDescription: z.string().nullable(),
    /** What the call will do, in one line, written by Warden from the tool's identity and the validated arguments (never by the model or the server). */
    summary: z.string(),
  }),
});
export type OperationSummary = z.infer<typeof OperationSummary>;

export const operationsChannels = defineChannels({
  /** Operations the gate knows, newest first, optionally filtered by state or conversation. */
  'operations:list': {
    doc: 'Lists tool-call operations (newest first), optionally by state or conversation.',
    request: z
      .object({
        state: OperationState.optional(),
        conversationId: z.string().min(1).max(200).optional(),
        limit: z.number().int().min(1).max(1000).default(200),
      })
      .strict(),
    response: z.object({ operations: z.array(OperationSummary) }),
  },
  /** One operation with its full history. */
  'operations:get': {
    doc: 'One operation with its full transition history.',
    request: z.object({ operationId: z.string().min(1).max(200) }).strict(),
    response: OperationSummary,
  },
});

export const operationsEvents = defineEvents({
  /** Pushed on every transition of any operation. */
  'operations:updated': { doc: 'An operation changed state.', payload: OperationSummary },
});
