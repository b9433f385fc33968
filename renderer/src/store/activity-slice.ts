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
  /** outcome_unknown operations nobody has settled yet: the Recovery badge counts these. */
  recoveryOperations: OperationView[];
  /**
   * outcome_unknown operations a person settled (newest first, at most 20): every retried one the
   * ledger knows (they stay outcome_unknown, with where the retry went), and those marked
   * succeeded or failed in this window.
   */
  settledRecovery: OperationView[];
  lastRecovery: OperationRecoveryReport | null;
  recoveryError: ShownError | null;
  /** The person closed the after-a-crash banner for this window's lifetime. */
  recoveryBannerDismissed: boolean;
  refreshRecovery(): Promise<void>;
  /** Marks an outcome_unknown operation succeeded/failed, or retries it as a new operation (fresh decision). */
  reconcile(operationId: string, outcome: 'succeeded' | 'failed' | 'retry', reason: string): Promise<string | null>;
  dismissRecoveryBanner(): void;
  /** One operation as the ledger has it (state, reason, outcome), e.g. where a retry went. Throws ContractError. */
  loadOperationView(operationId: string): Promise<OperationView>;
  /** One operation's history, with the arguments it was (or would be) sent with, secrets replaced. Throws ContractError. */
  loadOperationHistory(operationId: string): Promise<OperationHistory>;
  /** Opens Activity on one operation: its records only, and its "why did this run?". */
  showOperationInActivity(operationId: string): Promise<void>;
}

/** How many settled operations Recovery keeps showing, newest first. */
const SETTLED_SHOWN = 20;

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
      // What a crash left unknown is known at once: the banner and the Recovery badge need it on start.
      void get().refreshRecovery();
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
  settledRecovery: [],
  lastRecovery: null,
  recoveryError: null,
  recoveryBannerDismissed: false,
  async refreshRecovery() {
    try {
      const [{ operations, lastRecovery }, { operations: unknown }] = await Promise.all([
        unwrap(api().recovery.list({})),
        unwrap(api().activity.operations({ state: 'outcome_unknown' })),
      ]);
      // Retried operations stay outcome_unknown (reconciled); marked ones take the state the person
      // recorded, so only this window's are known here without reading every finished operation.
      const retried = unknown.filter((o) => o.reconciled !== null);
      const ids = new Set(retried.map((o) => o.operationId));
      const settled = [...retried, ...get().settledRecovery.filter((o) => !ids.has(o.operationId) && o.reconciled?.outcome !== 'retried')]
        .sort((a, b) => (b.reconciled?.at ?? 0) - (a.reconciled?.at ?? 0))
        .slice(0, SETTLED_SHOWN);
      set({ recoveryOperations: operations, settledRecovery: settled, lastRecovery, recoveryError: null });
    } catch (error) {
      set({ recoveryError: toShownError(error) });
    }
  },
  dismissRecoveryBanner() {
    set({ recoveryBannerDismissed: true });
  },
  async loadOperationView(operationId) {
    return (await unwrap(api().activity.history({ operationId }))).operation;
  },
  loadOperationHistory: (operationId) => unwrap(api().activity.history({ operationId })),
  async showOperationInActivity(operationId) {
    set({ auditFilter: { operationId } });
    get().navigate('activity');
    await Promise.all([get().refreshAudit(), get().openHistory(operationId)]);
  },
  async reconcile(operationId, outcome, reason) {
    try {
      const { operation, retryOperationId } = await unwrap(api().recovery.reconcile({ operationId, outcome, reason }));
      set({ recoveryError: null, settledRecovery: [operation, ...get().settledRecovery.filter((o) => o.operationId !== operationId)] });
      await get().refreshRecovery();
      return retryOperationId;
    } catch (error) {
      set({ recoveryError: toShownError(error) });
      return null;
    }
  },
});
