/**
 * Contract handlers for the Activity and Recovery views and the ledger's status
 * (shared/contract/activity.ts).
 *
 * With the durable ledger they serve its projections. Without it (unit tests, the offline demo on
 * the in-memory journal) the read-only views are rebuilt from the journal's records on each call
 * and the ledger-only actions answer UNSUPPORTED.
 */
import type { Handlers } from '../dispatch';
import type { Journal } from '../ports';
import { WardenError } from '../../../shared/result';
import { auditToCsv, auditToJsonl } from './export';
import { LedgerProjections } from './projections';
import type { LedgerService, SubmittingGate } from './service';

type ActivityChannel =
  | 'activity:audit'
  | 'activity:export'
  | 'activity:history'
  | 'activity:operations'
  | 'recovery:list'
  | 'recovery:reconcile'
  | 'ledger:status'
  | 'ledger:acknowledge-safe-mode';

/** What the handlers read from. */
export interface ActivityDeps {
  /** The durable ledger service, when the app runs on it. */
  service?: LedgerService | null;
  /** Fallback when there is no ledger service: any journal's records. */
  journal: Journal;
  /** For `recovery:reconcile` with outcome `retry`: submits a new operation (the gate). */
  gate?: () => SubmittingGate | undefined;
  /** Told after the person acknowledged safe mode (e.g. lift the policy's safe-mode cap). */
  onSafeModeAcknowledged?: () => Promise<void> | void;
}

/**
 * Builds the handlers of the activity/recovery/ledger channels.
 *
 * Why a factory: app-core spreads these into its handler map, so the channels and their
 * implementation live together in the ledger's folder.
 */
export function activityHandlers(deps: ActivityDeps): Pick<Handlers, ActivityChannel> {
  const projections = (): LedgerProjections => deps.service?.projections ?? LedgerProjections.fromRecords(deps.journal.read());
  const needLedger = (channel: string): LedgerService => {
    if (!deps.service) throw new WardenError('UNSUPPORTED', `${channel}: the durable ledger is not running (in-memory journal)`);
    return deps.service;
  };
  return {
    'activity:audit': ({ filter, limit, offset }) => {
      const rows = projections().audit(filter).reverse();
      return { rows: rows.slice(offset, offset + limit), total: rows.length };
    },
    'activity:export': ({ format, filter }) => {
      if (deps.service) return deps.service.exportAudit(format, filter);
      const rows = projections().audit(filter);
      return { format, filename: `warden-audit.${format}`, rows: rows.length, content: format === 'csv' ? auditToCsv(rows) : auditToJsonl(rows) };
    },
    'activity:history': ({ operationId }) => {
      const history = projections().history(operationId);
      if (!history) throw new WardenError('NOT_FOUND', `activity:history: no operation with id ${JSON.stringify(operationId)}`);
      return history;
    },
    'activity:operations': ({ state, conversationId }) =>
      projections().operations({ ...(state ? { state } : {}), ...(conversationId !== undefined ? { conversationId } : {}) }),
    'recovery:list': () => ({ operations: projections().unreconciled(), lastRecovery: deps.service?.lastRecoveryReport ?? null }),
    'recovery:reconcile': ({ operationId, outcome, reason }) =>
      needLedger('recovery:reconcile').reconcile({ operationId, outcome, reason, by: 'user' }, deps.gate?.()),
    'ledger:status': () => needLedger('ledger:status').status(),
    'ledger:acknowledge-safe-mode': async ({ reason }) => {
      const status = await needLedger('ledger:acknowledge-safe-mode').acknowledgeSafeMode('user', reason);
      if (!status.safeMode) await deps.onSafeModeAcknowledged?.();
      return status;
    },
  };
}
