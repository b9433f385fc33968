/**
 * The Activity list: one row per operation (what, who asked, decision, outcome, when, how long),
 * its filters and its paging cursor. Shared so the renderer shows exactly what the core read.
 *
 * Every filter value arrives from the window, which may be compromised: each is bounded here and
 * refused with a sentence naming the field, and the core only ever passes them to SQL as bound
 * parameters.
 */
import { z } from 'zod';
import { OperationState } from './operations';

/** A name or id as a filter value: what the core stores is never longer. */
const FilterText = z.string().min(1, 'is empty (leave it out to match everything)').max(200, 'is longer than any name Warden stores (200 characters)');
/** A time in ms since the epoch, between 1970 and the year 275,760 (what a JavaScript Date can hold). */
const Millis = z.number().int('must be a whole number of milliseconds').min(0, 'is before 1970').max(8.64e15, 'is past the last date a clock can show');

/** Which operations the Activity list shows; every field optional, all given ones must match. */
export const CallFilter = z
  .object({
    serverId: FilterText.optional(),
    accountId: FilterText.optional(),
    toolName: FilterText.optional(),
    /** The decision in force (the last one recorded). */
    decision: z.enum(['allow', 'ask', 'deny']).optional(),
    /** The operation's state now ("succeeded", "denied", "outcome_unknown", …). */
    outcome: OperationState.optional(),
    /** Requested at or after this time (ms since the epoch). */
    from: Millis.optional(),
    /** Requested at or before this time (ms since the epoch). */
    to: Millis.optional(),
    conversationId: FilterText.optional(),
    /** One operation only (Activity opened on a call from elsewhere). */
    operationId: FilterText.optional(),
  })
  .strict()
  .refine((f) => f.from === undefined || f.to === undefined || f.from <= f.to, { message: 'the time range ends before it starts: "to" must not be earlier than "from"', path: ['to'] });
export type CallFilter = z.infer<typeof CallFilter>;

/**
 * Where the next page starts: the request time and ledger position of the last row shown. Pages
 * continue from it (keyset paging), so the cost of a page never depends on how far down it is.
 */
export const CallCursor = z
  .object({
    time: Millis,
    n: z.number().int('must be a whole number').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER),
  })
  .strict();
export type CallCursor = z.infer<typeof CallCursor>;

/** Who asked for a call, in the terms a person reads. */
export const AskedBy = z.object({
  /** `user`: a person with Run…; `model`: a model in a conversation; `gateway`: another app through Warden. */
  source: z.enum(['model', 'user', 'gateway']),
  conversationId: z.string().nullable(),
  /** The conversation's title, or null when it was deleted or there is none. */
  conversationTitle: z.string().nullable(),
  /** The conversation's model, when known. */
  model: z.string().nullable(),
});
export type AskedBy = z.infer<typeof AskedBy>;

/** One row of the Activity list: one operation. */
export const ActivityCall = z.object({
  operationId: z.string(),
  /** The trusted one-line preview of what the call does (Warden's words, never the server's). */
  summary: z.string(),
  toolName: z.string(),
  serverId: z.string(),
  accountId: z.string(),
  /** The names the person gave the server and account; "a removed server" when gone. */
  serverName: z.string(),
  accountName: z.string(),
  askedBy: AskedBy,
  decision: z.enum(['allow', 'ask', 'deny']).nullable(),
  /** Why the decision was what it was, in words. */
  decisionReason: z.string().nullable(),
  state: OperationState,
  /** The last reason recorded (the outcome's, for a finished call). */
  reason: z.string(),
  requestedAt: z.number(),
  /** When it finished (null while it is not finished). */
  finishedAt: z.number().nullable(),
  /** From request to finish, approval wait included; null while not finished. */
  durationMs: z.number().nullable(),
  /** This page's cursor up to and including this row (the next page starts after it). */
  cursor: CallCursor,
});
export type ActivityCall = z.infer<typeof ActivityCall>;
