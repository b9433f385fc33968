/**
 * What the ledger reports about itself: recovery findings (torn tails, chain breaks), safe mode,
 * and verification results. Shared so the renderer can show exactly what the core found.
 */
import { z } from 'zod';
import { OBSERVED_OUTCOMES, OpObservation } from './observation';

/** Why a stored line was rejected. */
export const LedgerLineProblem = z.enum([
  'torn',
  'unparseable',
  'checksum',
  'chain',
  'sequence',
  /** Sealed with a key Warden does not hold, or the key is missing or unavailable: cannot be checked. */
  'key',
  /** A plain (unsealed) record after sealed ones: what rewriting with a recomputed plain chain looks like. */
  'unkeyed',
  /** The ledger does not reach, or does not hold, the record its anchor outside the ledger names. */
  'anchor',
]);
export type LedgerLineProblem = z.infer<typeof LedgerLineProblem>;

/** A torn or corrupt tail that recovery dropped (never guessed at). */
export const LedgerTornTail = z.object({
  segment: z.string(),
  offset: z.number().int().nonnegative().describe('byte offset in the segment where the dropped bytes began'),
  droppedBytes: z.number().int().nonnegative(),
  problem: LedgerLineProblem,
});
export type LedgerTornTail = z.infer<typeof LedgerTornTail>;

/** A bad record followed by valid ones: corruption or tampering in the middle of the log. */
export const LedgerChainBreak = z.object({
  /** Stable id (`segment@offset`) that an acknowledgement refers to. */
  id: z.string(),
  segment: z.string(),
  offset: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
  problem: LedgerLineProblem,
  seq: z.number().int().optional(),
  acknowledged: z.boolean(),
  /** Where the untouched copy of the segment was preserved for inspection. */
  preservedCopy: z.string().nullable(),
  /** What was found, in plain words, when the problem is not about one line (key, anchor). */
  detail: z.string().optional(),
});
export type LedgerChainBreak = z.infer<typeof LedgerChainBreak>;

/** What recovery found when the ledger was opened. */
export const LedgerRecoveryReport = z.object({
  segments: z.array(z.string()),
  records: z.number().int().nonnegative(),
  tornTail: LedgerTornTail.nullable(),
  breaks: z.array(LedgerChainBreak),
  /** true while any break is unacknowledged: every tool is held at ask. */
  safeMode: z.boolean(),
  removedTempFiles: z.array(z.string()),
  durationMs: z.number().nonnegative(),
});
export type LedgerRecoveryReport = z.infer<typeof LedgerRecoveryReport>;

/** Live status of the ledger, for the Activity view and the app frame. */
export const LedgerStatus = z.object({
  dir: z.string(),
  records: z.number().int().nonnegative(),
  segments: z.array(z.string()),
  safeMode: z.boolean(),
  recovery: LedgerRecoveryReport,
  /** While the index catches up after a start without a current one: how far it is (0–99). */
  indexing: z.number().int().min(0).max(100).optional(),
});
export type LedgerStatus = z.infer<typeof LedgerStatus>;

/** Result of `verify(dir)`: the first broken record if any. */
export const LedgerVerifyResult = z.object({
  ok: z.boolean(),
  segments: z.array(z.string()),
  records: z.number().int().nonnegative(),
  firstBroken: z
    .object({
      segment: z.string(),
      offset: z.number().int().nonnegative(),
      problem: LedgerLineProblem,
      seq: z.number().int().optional(),
      excerpt: z.string(),
      /** What was found, in plain words, when it is not about one line (key, anchor). */
      detail: z.string().optional(),
    })
    .nullable(),
  /**
   * How the records' checksums could be checked: `plain` ones (written before the ledger had a
   * key: sha256, which shows damage but not a deliberate rewrite), `sealed` ones (HMAC with the
   * ledger's key), and `unverified` ones (sealed, but the key was not available).
   */
  sealing: z.object({ plain: z.number().int().nonnegative(), sealed: z.number().int().nonnegative(), unverified: z.number().int().nonnegative() }).optional(),
});
export type LedgerVerifyResult = z.infer<typeof LedgerVerifyResult>;

/** Record type written when a person acknowledges the chain breaks found by recovery. */
export const SAFE_MODE_ACK_TYPE = 'ledger.safe_mode_acknowledged';

/** Record type of a reconciliation of an `outcome_unknown` operation. */
export const RECONCILED_TYPE = 'op.reconciled';

/** `op.reconciled`: a person settled an `outcome_unknown` operation. */
export const OpReconciled = z.object({
  operationId: z.string().min(1),
  /** What the person says happened, or that they retried it as a new operation. */
  outcome: z.enum(['succeeded', 'failed', 'retried']),
  /** Who reconciled it (the user, or a named system actor). */
  by: z.string().min(1),
  /** Why, in their words. */
  reason: z.string(),
  /** The new operation created for a retry (fresh decision), else null. */
  retryOperationId: z.string().nullable(),
  at: z.number(),
});
export type OpReconciled = z.infer<typeof OpReconciled>;

/** Filters of the audit view; every field optional, all given ones must match. */
export const AuditFilter = z
  .object({
    serverId: z.string().optional(),
    accountId: z.string().optional(),
    toolName: z.string().optional(),
    decision: z.enum(['allow', 'ask', 'deny']).optional(),
    operationId: z.string().optional(),
    conversationId: z.string().optional(),
    /** Only records at or after this time (ms since epoch). */
    from: z.number().optional(),
    /** Only records at or before this time (ms since epoch). */
    to: z.number().optional(),
    /** Only these record types (e.g. `op.transition`, `policy.changed`). */
    types: z.array(z.string()).optional(),
  })
  .strict();
export type AuditFilter = z.infer<typeof AuditFilter>;

/** One row of the audit view: one ledger record, with the identity of what it is about. */
export const AuditRow = z.object({
  seq: z.number().int(),
  time: z.number(),
  type: z.string(),
  operationId: z.string().nullable(),
  serverId: z.string().nullable(),
  accountId: z.string().nullable(),
  toolName: z.string().nullable(),
  conversationId: z.string().nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  /** The policy decision this record carries, or the operation's decision in force at the time. */
  decision: z.enum(['allow', 'ask', 'deny']).nullable(),
  reason: z.string(),
  actor: z.string().nullable(),
  fingerprint: z.string().nullable(),
  /** Canonical JSON of the operation's arguments, secrets replaced. */
  arguments: z.string().nullable(),
});
export type AuditRow = z.infer<typeof AuditRow>;

const DecisionView = z.object({
  decision: z.enum(['allow', 'ask', 'deny']),
  reason: z.string(),
  layer: z.string(),
  ruleId: z.string().nullable(),
});

/** One operation as the operations table shows it. */
export const OperationView = z.object({
  operationId: z.string(),
  state: z.string(),
  source: z.string(),
  conversationId: z.string().nullable(),
  serverId: z.string(),
  accountId: z.string(),
  toolName: z.string(),
  fingerprint: z.string(),
  requestedAt: z.number(),
  updatedAt: z.number(),
  expiresAt: z.number().nullable(),
  decision: DecisionView.nullable(),
  reason: z.string(),
  approvedByUser: z.boolean(),
  /** Whether the operation ever reached `executing` (the request may have left). */
  reachedExecuting: z.boolean(),
  resultIsError: z.boolean().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  reconciled: OpReconciled.nullable(),
  /** For a retry: the outcome_unknown operation it retries. */
  retryOf: z.string().nullable(),
  /** A sent call's outcome in four words (`observedOutcome`); null for a call never sent. */
  observedOutcome: z.enum(OBSERVED_OUTCOMES).nullable().optional(),
  /** What Warden itself saw the call do, apart from what the server said. */
  observation: OpObservation.nullable().optional(),
});
export type OperationView = z.infer<typeof OperationView>;

/** "Why did this run?": the decision, approval, fingerprint and outcome of one operation. */
export const OperationHistory = z.object({
  operation: OperationView,
  arguments: z.string().describe('canonical JSON of the arguments, secrets replaced'),
  decisionAtRequest: DecisionView.nullable(),
  approval: z
    .object({ by: z.string(), reason: z.string(), at: z.number(), fingerprint: z.string().nullable(), decision: DecisionView.nullable() })
    .nullable(),
  executing: z.object({ at: z.number(), fingerprint: z.string().nullable() }).nullable(),
  outcome: z.object({ state: z.string(), at: z.number(), reason: z.string(), resultIsError: z.boolean().nullable() }).nullable(),
  events: z.array(AuditRow),
});
export type OperationHistory = z.infer<typeof OperationHistory>;
