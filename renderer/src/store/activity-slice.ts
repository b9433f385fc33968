/**
 * The Activity list (one row per operation, filtered, a page at a time), each operation's history
 * and "why did this run?", and export; and the Recovery view's outcome_unknown operations. Caches
 * of what main reads from the ledger.
 */
import type { OperationRecoveryReport } from '../../../shared/contract/activity';
import type { ActivityCall, CallCursor, CallFilter } from '../../../shared/domain/activity';
import type { OperationHistory, OperationView } from '../../../shared/domain/ledger';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

export interface ActivitySlice {
  callFilter: CallFilter;
  /** The rows shown: the first page and every page the person asked for after it. */
  calls: ActivityCall[];
  /** Where the next page starts; null when every matching call is shown. */
  callsNext: CallCursor | null;
  /** True once the first page for the current filter has arrived. */
  callsLoaded: boolean;
  activityError: ShownError | null;
  /** Every tool the recorded calls name, of the filter's server and account (the Tool filter's choices). */
  callTools: string[];
  /** The histories of the rows the person opened ("why did this run?" and the timeline), by operation id. */
  openCalls: Record<string, OperationHistory | 'loading'>;
  setCallFilter(filter: CallFilter): void;
  /** Reads the first page again (as many rows as are shown, up to a limit). */
  refreshCalls(): Promise<void>;
  /** Appends the next page. */
  loadMoreCalls(): Promise<void>;
  /** Opens or closes a row's details (its history is read on opening). */
  toggleCall(operationId: string): Promise<void>;
  watchActivity(): () => void;
  /** Writes the filtered calls to a file the person chooses in main's save dialog (path null: cancelled). Throws ContractError. */
  exportCalls(format: 'jsonl' | 'csv'): Promise<{ path: string | null; rows: number }>;
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
  /** Opens Activity on one operation: its row only, opened on its timeline and "why did this run?". */
  showOperationInActivity(operationId: string): Promise<void>;
}

/** Rows a page holds. */
const PAGE = 50;
/** Rows a refresh reads again at most (more pages shown than that start over at the first). */
const REFRESH_MAX = 200;

/** How many settled operations Recovery keeps showing, newest first. */
const SETTLED_SHOWN = 20;

/**
 * Creates the activity slice.
 *
 * Why refresh on `operations:updated`: every transition is a ledger record, so the audit view and
 * the recovery list both change whenever an operation does.
 */
export const createActivitySlice: SliceCreator<ActivitySlice> = ({ api }) => (set, get) => ({
  callFilter: {},
  calls: [],
  callsNext: null,
  callsLoaded: false,
  activityError: null,
  callTools: [],
  openCalls: {},
  setCallFilter(filter) {
    set({ callFilter: filter, calls: [], callsNext: null, callsLoaded: false });
    void get().refreshCalls();
  },
  async refreshCalls() {
    const filter = get().callFilter;
    try {
      const limit = Math.min(REFRESH_MAX, Math.max(PAGE, get().calls.length));
      const where = { ...(filter.serverId ? { serverId: filter.serverId } : {}), ...(filter.accountId ? { accountId: filter.accountId } : {}) };
      const [{ calls, next }, { tools }] = await Promise.all([unwrap(api().activity.calls({ filter, limit })), unwrap(api().activity.tools(where))]);
      // A newer filter's answer wins: this one is dropped if the filter changed meanwhile.
      if (get().callFilter !== filter) return;
      set({ calls, callsNext: next, callsLoaded: true, activityError: null, callTools: tools });
    } catch (error) {
      set({ activityError: toShownError(error), callsLoaded: true });
    }
  },
  async loadMoreCalls() {
    const { callFilter: filter, callsNext: after } = get();
    if (!after) return;
    try {
      const { calls, next } = await unwrap(api().activity.calls({ filter, limit: PAGE, after }));
      if (get().callFilter !== filter || get().callsNext !== after) return;
      set({ calls: [...get().calls, ...calls], callsNext: next, activityError: null });
    } catch (error) {
      set({ activityError: toShownError(error) });
    }
  },
  async toggleCall(operationId) {
    const { [operationId]: shown, ...rest } = get().openCalls;
    if (shown !== undefined) {
      set({ openCalls: rest });
      return;
    }
    set({ openCalls: { ...get().openCalls, [operationId]: 'loading' } });
    try {
      const history = await unwrap(api().activity.history({ operationId }));
      if (get().openCalls[operationId] === undefined) return; // closed meanwhile
      set({ openCalls: { ...get().openCalls, [operationId]: history }, activityError: null });
    } catch (error) {
      const { [operationId]: _failed, ...others } = get().openCalls;
      set({ openCalls: others, activityError: toShownError(error) });
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
          void get().refreshCalls();
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
  async exportCalls(format) {
    const out = await unwrap(api().activity.exportCalls({ format, filter: get().callFilter }));
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
    set({ callFilter: { operationId }, calls: [], callsNext: null, callsLoaded: false, openCalls: {} });
    get().navigate('activity');
    await Promise.all([get().refreshCalls(), get().toggleCall(operationId)]);
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
