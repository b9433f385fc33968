/**
 * Contract entries for approvals. There is deliberately NO approve channel: the
 * renderer can ask main to show the trusted native approval dialog (`approvals:review`), or
 * reject/cancel. Only a person's choice in that dialog approves. A compromised renderer can deny,
 * never grant.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { OperationSummary } from './operations';

const OperationIdRequest = z.object({ operationId: z.string().min(1).max(200) }).strict();

/** A pending approval with its trusted preview (written by the core, never by the model). */
export const PendingApproval = z.object({
  operation: OperationSummary,
  preview: z.object({
    title: z.string(),
    detail: z.string(),
    argumentsJson: z.string(),
    /** The arguments as labelled lines, nothing cut (the JSON above is one click away). */
    argumentsText: z.string(),
    serverLabel: z.string(),
    accountLabel: z.string(),
    toolName: z.string(),
    /** Where the server runs, in words ("a program on this computer"). */
    serverLocation: z.string().optional(),
    /** Who asked, in words ("the model, in a conversation"). */
    requestedBy: z.string().optional(),
    /** Untrusted: the server's claims about the tool in words ("destructive"); show labelled. */
    claims: z.array(z.string()).optional(),
  }),
});
export type PendingApproval = z.infer<typeof PendingApproval>;

/**
 * What happened to an operation reviewed in the dialog: `approved` only when it was approved and
 * went on to be sent; `rejected` when the person denied it; otherwise the state it reached without
 * the person's answer taking effect (expired, invalidated, cancelled, denied by policy).
 */
export const ReviewOutcome = z.enum(['approved', 'rejected', 'expired', 'invalidated', 'cancelled', 'denied']);
export type ReviewOutcome = z.infer<typeof ReviewOutcome>;

export const approvalsChannels = defineChannels({
  /** The approval queue. */
  'approvals:list': {
    doc: 'Pending approvals with their trusted previews.',
    request: z.object({}).strict(),
    response: z.object({ approvals: z.array(PendingApproval) }),
  },
  /**
   * Asks main to show the native approval dialog for one operation; the person decides there. The
   * answer says what actually happened: the operation may have expired, been invalidated or been
   * cancelled while the dialog was open, whatever was pressed.
   */
  'approvals:review': {
    doc: 'Shows the native approval dialog for one pending operation; resolves with what was pressed and what actually happened to the operation.',
    request: OperationIdRequest,
    response: z.object({ pressed: z.enum(['approve', 'deny']), outcome: ReviewOutcome, operation: OperationSummary }),
  },
  /** Rejects a pending operation; nothing is sent. */
  'approvals:reject': {
    doc: 'Rejects a pending operation; nothing is sent.',
    request: z.object({ operationId: z.string().min(1).max(200), reason: z.string().max(500).optional() }).strict(),
    response: OperationSummary,
  },
  /** Cancels a pending or running operation. */
  'approvals:cancel': {
    doc: 'Cancels a pending operation, or aborts a running one (it ends outcome_unknown).',
    request: OperationIdRequest,
    response: OperationSummary,
  },
});

export const approvalsEvents = defineEvents({
  /** Pushed whenever the approval queue changes. */
  'approvals:changed': { doc: 'The approval queue changed.', payload: z.object({ pending: z.number().int().nonnegative(), operationIds: z.array(z.string()) }) },
});
