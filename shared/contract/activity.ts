/**
 * Contract entries for the ledger's views: the audit log (filter, export), per-operation history
 * ("why did this run?"), the operations table, recovery of `outcome_unknown` operations, and the
 * ledger's own status and safe mode.
 *
 * Reconciling is bookkeeping plus, for a retry, a NEW operation that goes through the gate with a
 * fresh decision; nothing here can approve or re-send anything.
 */
import { z } from 'zod';
import { defineChannels } from '../contract-kit';
import { ActivityCall, CallCursor, CallFilter } from '../domain/activity';
import { AuditFilter, AuditRow, LedgerStatus, OperationHistory, OperationView } from '../domain/ledger';
import { OperationState } from '../domain/operations';

/** What recovery did to operations at the last start. */
export const OperationRecoveryReport = z.object({
  outcomeUnknown: z.array(z.string()).describe('were executing at the crash: now outcome_unknown, never re-sent'),
  cancelled: z.array(z.string()),
  denied: z.array(z.string()),
  requeued: z.array(z.string()).describe('awaiting approval again after re-validation against current policy'),
});
export type OperationRecoveryReport = z.infer<typeof OperationRecoveryReport>;

export const activityChannels = defineChannels({
  /** The audit view, newest first, filtered by server, account, tool, decision and time. */
  'activity:audit': {
    doc: 'Audit log rows matching the filters, newest first, paged. `total` is exact up to 10,000; past that it is a lower bound.',
    request: z
      .object({
        filter: AuditFilter.default({}),
        limit: z.number().int().min(1).max(5000).default(500),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    response: z.object({ rows: z.array(AuditRow), total: z.number().int().nonnegative() }),
  },
  /**
   * The filtered audit view written to a file the person chooses in a native save dialog (JSONL or
   * formula-safe CSV, oldest first), streamed so an export of any size fits in memory.
   */
  'activity:export': {
    doc: 'Exports the filtered audit log as JSONL or CSV to a file chosen in a native save dialog.',
    request: z.object({ format: z.enum(['jsonl', 'csv']), filter: AuditFilter.default({}) }).strict(),
    response: z.object({ format: z.enum(['jsonl', 'csv']), path: z.string().nullable().describe('where it was saved; null if the person cancelled'), rows: z.number().int().nonnegative() }),
  },
  /** The Activity list: one row per operation, newest first, filtered, a page at a time. */
  'activity:calls': {
    doc: 'Operations matching the filters (server, account, tool, decision, outcome, time), newest first; `next` continues after the last row (null: no more).',
    request: z
      .object({
        filter: CallFilter.default({}),
        limit: z.number().int().min(1).max(200, 'at most 200 rows a page').default(50),
        after: CallCursor.nullable().default(null),
      })
      .strict(),
    response: z.object({ calls: z.array(ActivityCall), next: CallCursor.nullable() }),
  },
  'activity:tools': {
    doc: "Every tool the recorded calls name (of one server, or one account of it, when given), for Activity's Tool filter; sorted, at most 1000.",
    request: z.object({ serverId: z.string().min(1).max(200).optional(), accountId: z.string().min(1).max(200).optional() }).strict(),
    response: z.object({ tools: z.array(z.string()) }).strict(),
  },
  /** The Activity list's filtered rows written to a file the person chooses, streamed. */
  'activity:export-calls': {
    doc: 'Exports the operations matching the filters (one line each, oldest first) as JSONL or CSV to a file chosen in a native save dialog.',
    request: z.object({ format: z.enum(['jsonl', 'csv']), filter: CallFilter.default({}) }).strict(),
    response: z.object({ format: z.enum(['jsonl', 'csv']), path: z.string().nullable().describe('where it was saved; null if the person cancelled'), rows: z.number().int().nonnegative() }),
  },
  /** "Why did this run?" for one operation. */
  'activity:history': {
    doc: 'Decision at request time, approval, fingerprint, outcome and every event of one operation.',
    request: z.object({ operationId: z.string().min(1).max(200) }).strict(),
    response: OperationHistory,
  },
  /** The operations table, optionally by state or conversation, a page at a time. */
  'activity:operations': {
    doc: 'Operations (newest first, paged), optionally filtered by state or conversation.',
    request: z
      .object({
        state: OperationState.optional(),
        conversationId: z.string().optional(),
        limit: z.number().int().min(1).max(1000).default(200),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    response: z.object({ operations: z.array(OperationView) }),
  },
  /** Operations whose outcome is unknown and not yet reconciled, plus what the last recovery did. */
  'recovery:list': {
    doc: 'outcome_unknown operations awaiting reconciliation, and the last recovery report.',
    request: z.object({}).strict(),
    response: z.object({ operations: z.array(OperationView), lastRecovery: OperationRecoveryReport.nullable() }),
  },
  /** Marks an outcome_unknown operation succeeded/failed (who + why), or retries it as a new operation. */
  'recovery:reconcile': {
    doc: 'Reconciles an outcome_unknown operation: succeeded, failed, or retry as a new operation (fresh decision).',
    request: z
      .object({
        operationId: z.string().min(1).max(200),
        outcome: z.enum(['succeeded', 'failed', 'retry']),
        reason: z.string().trim().min(1, 'say why (it is recorded in the audit log)').max(2000),
      })
      .strict(),
    response: z.object({ operation: OperationView, retryOperationId: z.string().nullable() }),
  },
  /** The ledger's status: records, segments, recovery findings, safe mode. */
  'ledger:status': {
    doc: 'Ledger status, with what recovery found at start (torn tail, chain breaks, safe mode).',
    request: z.object({}).strict(),
    response: LedgerStatus,
  },
  /** Acknowledges chain breaks found at start; leaves safe mode (recorded with the reason). */
  'ledger:acknowledge-safe-mode': {
    doc: 'Acknowledges the chain breaks recovery reported and leaves safe mode; the acknowledgement is journaled.',
    request: z.object({ reason: z.string().trim().min(1).max(2000) }).strict(),
    response: LedgerStatus,
  },
});
