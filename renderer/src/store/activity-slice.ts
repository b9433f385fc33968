/**
 * The audit view (ledger records with filters), per-operation history and export; and the
 * Recovery view's outcome_unknown operations. Caches of main's ledger projections.
 */
import type { OperationRecoveryReport } from '../../../shared/contract/activity';
import type { AuditFilter, AuditRow, OperationHistory, OperationView } from '../../../shared/domain/ledger';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

export interface ActivitySlice {
  auditFilter: AuditFilter;
  auditRows: AuditRow[];
  auditTotal: number;
  activityError: ShownError | null;
  /** "Why did this run?" for the operation the person opened, or null. */
  history: OperationHistory | null;
  setAuditFilter(filter: AuditFilter): void;
  refreshAudit(): Promise<void>;
  watchActivity(): () => void;
  openHistory(operationId: string): Promise<void>;
  closeHistory(): void;
  /** Writes the filtered log to a file the person chooses in main's save dialog (path null: cancelled). Throws ContractError. */
  exportAudit(format: 'jsonl' | 'csv'): Promise<{ path: string | null; rows: number }>;
  recoveryOperations: OperationView[];
  lastRecovery: OperationRecoveryReport | null;
  recoveryError: ShownError | null;
  refreshRecovery(): Promise<void>;
  /** Marks an outcome_unknown operation succeeded/failed, or retries it as a new operation (fresh decision). */
  reconcile(operationId: string, outcome: 'succeeded' | 'failed' | 'retry', reason: string): Promise<string | null>;
}

/**
 * Creates the activity slice.
 *
 * Why refresh on `operations:updated`: every transition is a ledger record, so the audit view and
 * the recovery list both change whenever an operation does.
 */
export const createActivitySlice: SliceCreator<ActivitySlice> = ({ api }) => (set, get) => ({
  auditFilter: {},
  auditRows: [],
  auditTotal: 0,
  activityError: null,
  history: null,
  setAuditFilter(filter) {
    set({ auditFilter: filter });
    void get().refreshAudit();
  },
  async refreshAudit() {
    try {
      const { rows, total } = await unwrap(api().activity.audit({ filter: get().auditFilter, limit: 500 }));
      set({ auditRows: rows, auditTotal: total, activityError: null });
    } catch (error) {
      set({ activityError: toShownError(error) });
    }
  },
  watchActivity() {
    try {
      const w = api();
      let timer: ReturnType<typeof setTimeout> | null = null;
      // Coalesce bursts (one call is several transitions) into one re-read.
      const later = () => {
        if (timer) return;
        timer = setTimeout(() => {
          timer = null;
          void get().refreshAudit();
          void get().refreshRecovery();
        }, 150);
      };
      const offs = [w.operations.onUpdated(later), w.permissions.onChanged(later)];
      return () => {
        if (timer) clearTimeout(timer);
        offs.forEach((off) => off());
      };
    } catch (error) {
      set({ activityError: toShownError(error) });
      return () => {};
    }
  },
  async openHistory(operationId) {
    try {
      set({ history: await unwrap(api().activity.history({ operationId })), activityError: null });
    } catch (error) {
      set({ activityError: toShownError(error) });
    }
  },
  closeHistory() {
    set({ history: null });
  },
  async exportAudit(format) {
    const out = await unwrap(api().activity.export({ format, filter: get().auditFilter }));
    return { path: out.path, rows: out.rows };
  },
  recoveryOperations: [],
  lastRecovery: null,
  recoveryError: null,
  async refreshRecovery() {
    try {
      const { operations, lastRecovery } = await unwrap(api().recovery.list({}));
      set({ recoveryOperations: operations, lastRecovery, recoveryError: null });
    } catch (error) {
      set({ recoveryError: toShownError(error) });
    }
  },
  async reconcile(operationId, outcome, reason) {
    try {
      const { retryOperationId } = await unwrap(api().recovery.reconcile({ operationId, outcome, reason }));
      set({ recoveryError: null });
      await get().refreshRecovery();
      return retryOperationId;
    } catch (error) {
      set({ recoveryError: toShownError(error) });
      return null;
    }
  },
});
