/**
 * The ledger service: the durable ledger plus its projections, operation recovery after a
 * restart, reconciliation of `outcome_unknown` operations, and the contract handlers for the
 * Activity and Recovery views.
 *
 * Start-up order (what app-core does):
 *   1. `LedgerService.open({ dir, redactor })` — log recovery (torn tail, chain breaks, safe mode)
 *      and projections rebuilt from the records.
 *   2. Build the gate with `journal: service.ledger` and a policy source that includes
 *      `safeMode: service.ledger.safeMode` (see `withSafeMode`).
 *   3. `service.recoverOperations(gate)` — `executing` → `outcome_unknown` (journaled, durable,
 *      never re-sent), `approved`/`proposed` → not sent, `awaiting_approval` → cancelled if the
 *      setting says so, else handed to `gate.restore()` which re-validates and re-queues them.
 */
import { journalEntry } from '../../../shared/domain/journal-events';
import { RECONCILED_TYPE, type LedgerStatus, type OperationView } from '../../../shared/domain/ledger';
import type { OperationRecoveryReport } from '../../../shared/contract/activity';
import { WardenError } from '../../../shared/result';
import type { Clock, JournalEntry } from '../ports';
import { REDACTED, Redactor } from '../redact/redactor';
import { auditToCsv, auditToJsonl } from './export';
import { Ledger, type LedgerOptions } from './ledger';
import { LedgerProjections, type RecoveredOperation } from './projections';

/** What the gate offers recovery: restoring operations (knows every id; re-validates pending). */
export interface RestorableGate {
  restore(operations: readonly RecoveredOperation[]): Promise<void>;
}

/** What a retry needs: submitting a NEW operation through the gate (fresh decision). */
export interface SubmittingGate {
  submit(request: {
    source: 'user';
    conversationId: string | null;
    serverId: string;
    accountId: string;
    toolName: string;
    arguments: Record<string, unknown>;
  }): Promise<{ operationId: string }>;
}

/** How the service is opened. */
export interface LedgerServiceOptions extends LedgerOptions {
  /** Setting: cancel approvals that were pending at a crash instead of re-queueing them. */
  cancelPendingOnRestart?: boolean;
}

/** The durable ledger, its projections, recovery and reconciliation. */
export class LedgerService {
  private lastRecovery: OperationRecoveryReport | null = null;

  private constructor(
    readonly ledger: Ledger,
    readonly projections: LedgerProjections,
    private readonly clock: Clock,
    private readonly cancelPendingOnRestart: boolean,
  ) {
    ledger.subscribe((records) => {
      for (const r of records) projections.apply(r);
    });
    ledger.setSnapshotProvider(() => projections.snapshot());
  }

  /**
   * Opens the ledger (log recovery) and rebuilds the projections from it.
   *
   * Does not touch operations yet: call `recoverOperations` once the gate exists.
   */
  static async open(options: LedgerServiceOptions): Promise<LedgerService> {
    const clock = options.clock ?? { now: () => Date.now() };
    const ledger = await Ledger.open({ ...options, clock, redactor: options.redactor ?? new Redactor() });
    const projections = LedgerProjections.fromRecords(ledger.read());
    return new LedgerService(ledger, projections, clock, options.cancelPendingOnRestart === true);
  }

  /** What the last `recoverOperations` did, if it ran. */
  get lastRecoveryReport(): OperationRecoveryReport | null {
    return this.lastRecovery;
  }

  /**
   * Settles every operation a crash interrupted; nothing is ever re-sent.
   *
   * `executing` → `outcome_unknown`; `approved` (not sent) → `cancelled`; `proposed` (no decision)
   * → `denied`; `awaiting_approval` → `cancelled` when the setting says so, otherwise re-queued
   * through `gate.restore()`, which re-validates against current policy. All transitions are
   * appended durably before this resolves.
   */
  async recoverOperations(gate?: RestorableGate): Promise<OperationRecoveryReport> {
    const report: OperationRecoveryReport = { outcomeUnknown: [], cancelled: [], denied: [], requeued: [] };
    const entries: JournalEntry[] = [];
    const add = (operationId: string, from: 'executing' | 'approved' | 'proposed' | 'awaiting_approval', to: 'outcome_unknown' | 'cancelled' | 'denied', reason: string): void => {
      entries.push(
        journalEntry('op.transition', {
          operationId,
          from,
          to,
          reason,
          actor: 'recovery',
          ...(to === 'outcome_unknown' ? { error: { code: 'OUTCOME_UNKNOWN', message: reason } } : {}),
        }),
      );
    };
    for (const op of this.projections.operations({ state: 'executing' })) {
      add(op.operationId, 'executing', 'outcome_unknown', 'Recovered after a restart while executing: the server may or may not have acted; never re-sent');
      report.outcomeUnknown.push(op.operationId);
    }
    for (const op of this.projections.operations({ state: 'approved' })) {
      add(op.operationId, 'approved', 'cancelled', 'Recovered after a restart before executing: not sent');
      report.cancelled.push(op.operationId);
    }
    for (const op of this.projections.operations({ state: 'proposed' })) {
      add(op.operationId, 'proposed', 'denied', 'Recovered after a restart before a decision: submit it again');
      report.denied.push(op.operationId);
    }
    if (this.cancelPendingOnRestart) {
      for (const op of this.projections.operations({ state: 'awaiting_approval' })) {
        add(op.operationId, 'awaiting_approval', 'cancelled', 'Cancelled at restart (setting: cancel pending approvals on restart)');
        report.cancelled.push(op.operationId);
      }
    }
    if (entries.length) await this.ledger.append(entries, { durable: true });
    const pendingBefore = this.projections.pendingApprovals().map((o) => o.operationId);
    if (gate) await gate.restore(this.projections.restoredOperations());
    await this.ledger.flush();
    const stillPending = new Set(this.projections.pendingApprovals().map((o) => o.operationId));
    for (const id of pendingBefore) {
      if (stillPending.has(id)) report.requeued.push(id);
      else {
        const state = this.projections.operation(id)?.state;
        if (state === 'denied') report.denied.push(id);
        else report.cancelled.push(id);
      }
    }
    this.lastRecovery = report;
    return report;
  }

  /**
   * Settles an `outcome_unknown` operation: the person says it succeeded or failed (recorded with
   * who and why), or retries it — a NEW operation through the gate, with a fresh decision and,
   * where the policy asks, a fresh approval. The old operation is never re-sent.
   */
  async reconcile(
    input: { operationId: string; outcome: 'succeeded' | 'failed' | 'retry'; reason: string; by: string },
    gate?: SubmittingGate,
  ): Promise<{ operation: OperationView; retryOperationId: string | null }> {
    const op = this.projections.operation(input.operationId);
    if (!op) throw new WardenError('NOT_FOUND', `recovery:reconcile: no operation with id ${JSON.stringify(input.operationId)}`);
    if (op.state !== 'outcome_unknown' || op.reconciled) {
      throw new WardenError('CONFLICT', `recovery:reconcile: operation ${input.operationId} is ${op.reconciled ? `already reconciled (${op.reconciled.outcome})` : op.state}, not an unreconciled outcome_unknown`);
    }
    if (input.reason.trim().length === 0) throw new WardenError('INVALID_REQUEST', 'recovery:reconcile: reason must say why');
    let retryOperationId: string | null = null;
    if (input.outcome === 'retry') {
      if (!gate) throw new WardenError('UNSUPPORTED', 'recovery:reconcile: retry needs the gate, which is not running');
      const restored = this.projections.restoredOperations().find((r) => r.proposed.operationId === input.operationId)!;
      if (JSON.stringify(restored.proposed.arguments).includes(REDACTED)) {
        throw new WardenError('CONFLICT', 'recovery:reconcile: the arguments held a secret that was never stored; start the call again instead of retrying it');
      }
      const p = restored.proposed;
      const created = await gate.submit({
        source: 'user',
        conversationId: p.origin.conversationId,
        serverId: p.identity.serverId,
        accountId: p.identity.accountId,
        toolName: p.identity.toolName,
        arguments: structuredClone(p.arguments),
      });
      retryOperationId = created.operationId;
    }
    await this.ledger.append(
      [
        {
          type: RECONCILED_TYPE,
          payload: {
            operationId: input.operationId,
            outcome: input.outcome === 'retry' ? 'retried' : input.outcome,
            by: input.by,
            reason: input.reason.trim(),
            retryOperationId,
            at: this.clock.now(),
          },
        },
      ],
      { durable: true },
    );
    return { operation: this.projections.operation(input.operationId)!, retryOperationId };
  }

  /** The audit view as a file body. */
  exportAudit(format: 'jsonl' | 'csv', filter: Parameters<LedgerProjections['audit']>[0] = {}): { format: 'jsonl' | 'csv'; filename: string; rows: number; content: string } {
    const rows = this.projections.audit(filter);
    const stamp = new Date(this.clock.now()).toISOString().replace(/[:.]/g, '-');
    return { format, filename: `warden-audit-${stamp}.${format}`, rows: rows.length, content: format === 'csv' ? auditToCsv(rows) : auditToJsonl(rows) };
  }

  /** Status for the Activity view and the app frame. */
  status(): LedgerStatus {
    return { dir: this.ledger.dir, records: this.ledger.size(), segments: this.ledger.segments(), safeMode: this.ledger.safeMode, recovery: this.ledger.recovery };
  }

  /** Leaves safe mode, journaling who and why. */
  async acknowledgeSafeMode(by: string, reason: string): Promise<LedgerStatus> {
    await this.ledger.acknowledgeSafeMode(by, reason);
    return this.status();
  }

  /** Flushes and closes the ledger. */
  close(): Promise<void> {
    return this.ledger.close();
  }
}

/**
 * Wraps a policy source so that the ledger's safe mode holds every tool at ask.
 *
 * Why: after tampering was detected the log cannot be trusted to say what was allowed; until a
 * person acknowledges it, nothing runs without asking.
 */
export function withSafeMode<P extends { safeMode?: boolean }>(source: { current(): P }, ledger: { readonly safeMode: boolean }): { current(): P } {
  return {
    current: () => {
      const state = source.current();
      return { ...state, safeMode: state.safeMode === true || ledger.safeMode };
    },
  };
}
