/**
 * Contract handlers for the Activity and Recovery views and the ledger's status
 * (shared/contract/activity.ts).
 *
 * Every read goes through one `HistoryReads`: the durable ledger's indexed history, or (unit tests,
 * the browser test host on the in-memory journal) the in-memory one. Reads are paged; exports are
 * streamed to a file the person chose in a native save dialog.
 */
import type { Handlers } from '../dispatch';
import type { FileDialogs } from '../ports';
import { WardenError } from '../../../shared/result';
import { exportFileName, writeAuditFile } from './export';
import type { HistoryReads } from './history';
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
  /** Where history is read (the service's when there is one). */
  history: HistoryReads;
  /** Where an export is saved: the person chooses the file. Without it, exports are refused. */
  fileDialogs?: FileDialogs;
  /** Names export files by the time they are made. */
  now?: () => number;
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
  const history = deps.history;
  const needLedger = (channel: string): LedgerService => {
    if (!deps.service) throw new WardenError('UNSUPPORTED', `${channel}: the durable ledger is not running (in-memory journal)`);
    return deps.service;
  };
  return {
    'activity:audit': ({ filter, limit, offset }) => history.audit(filter, { limit, offset }),
    'activity:export': async ({ format, filter }) => {
      if (!deps.fileDialogs) throw new WardenError('UNSUPPORTED', 'activity:export: this host cannot show a save dialog; export from the Warden app');
      const path = await deps.fileDialogs.saveFile({
        title: 'Export the activity log',
        defaultName: exportFileName(format, (deps.now ?? Date.now)()),
        filters: [format === 'csv' ? { name: 'CSV (spreadsheets)', extensions: ['csv'] } : { name: 'JSON Lines', extensions: ['jsonl'] }],
      });
      if (path === null) return { format, path: null, rows: 0 };
      return writeAuditFile(history, format, filter, path);
    },
    'activity:history': async ({ operationId }) => {
      const found = await history.history(operationId);
      if (!found) throw new WardenError('NOT_FOUND', `activity:history: no operation with id ${JSON.stringify(operationId)}`);
      return found;
    },
    'activity:operations': async ({ state, conversationId, limit, offset }) => ({
      operations: await history.operations({ ...(state ? { state } : {}), ...(conversationId !== undefined ? { conversationId } : {}), limit, offset }),
    }),
    'recovery:list': async () => ({ operations: await history.unreconciled(), lastRecovery: deps.service?.lastRecoveryReport ?? null }),
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
