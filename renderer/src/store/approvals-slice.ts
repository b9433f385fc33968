/**
 * The approval queue and recent operations: a cache of `approvals:list` / `operations:list`,
 * refreshed on `approvals:changed` and `operations:updated`.
 *
 * There is no approve action here, and there cannot be one: the contract has no approve channel.
 * `review` asks main to show its native dialog; only the person's choice there approves.
 */
import type { PendingApproval, ReviewOutcome } from '../../../shared/contract/approvals';
import type { OperationSummary } from '../../../shared/contract/operations';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

export interface ApprovalsSlice {
  approvals: PendingApproval[];
  /** Recent operations (newest first), for the Run form's result and the Approvals history. */
  operations: OperationSummary[];
  approvalsError: ShownError | null;
  /** Operation ids whose native dialog is open right now. */
  reviewing: string[];
  refreshApprovals(): Promise<void>;
  watchApprovals(): () => void;
  /** Asks main to show the native approval dialog; resolves with what actually happened (null if the review failed). */
  review(operationId: string): Promise<ReviewOutcome | null>;
  reject(operationId: string, reason?: string): Promise<void>;
  cancel(operationId: string): Promise<void>;
  /** Proposes a tool call with source 'user' through the gate (tools:run). Throws ContractError. */
  runTool(input: { serverId: string; accountId: string; toolName: string; arguments: Record<string, unknown> }): Promise<OperationSummary>;
}

/**
 * Creates the approvals slice.
 *
 * Why operations are merged from events: `operations:updated` carries the full summary, so the
 * cache follows every transition without a re-read.
 */
export const createApprovalsSlice: SliceCreator<ApprovalsSlice> = ({ api }) => (set, get) => {
  const upsert = (op: OperationSummary) => {
    // A response can arrive after a later transition's event: keep whichever has seen more.
    const known = get().operations.find((o) => o.operationId === op.operationId);
    if (known && known.history.length > op.history.length) return;
    const rest = get().operations.filter((o) => o.operationId !== op.operationId);
    set({ operations: [op, ...rest].sort((a, b) => b.requestedAt - a.requestedAt).slice(0, 200) });
  };
  const fail = (error: unknown) => set({ approvalsError: toShownError(error) });
  return {
    approvals: [],
    operations: [],
    approvalsError: null,
    reviewing: [],
    async refreshApprovals() {
      try {
        const [{ approvals }, { operations }] = await Promise.all([
          unwrap(api().approvals.list({})),
          unwrap(api().operations.list({ limit: 200 })),
        ]);
        set({ approvals, operations, approvalsError: null });
      } catch (error) {
        fail(error);
      }
    },
    watchApprovals() {
      try {
        const w = api();
        const offs = [w.approvals.onChanged(() => void get().refreshApprovals()), w.operations.onUpdated(upsert)];
        return () => offs.forEach((off) => off());
      } catch (error) {
        fail(error);
        return () => {};
      }
    },
    async review(operationId) {
      set({ reviewing: [...get().reviewing, operationId] });
      try {
        const { outcome, operation } = await unwrap(api().approvals.review({ operationId }));
        upsert(operation);
        set({ approvalsError: null });
        return outcome;
      } catch (error) {
        fail(error);
        return null;
      } finally {
        set({ reviewing: get().reviewing.filter((id) => id !== operationId) });
        await get().refreshApprovals();
      }
    },
    async reject(operationId, reason) {
      try {
        upsert(await unwrap(api().approvals.reject({ operationId, ...(reason ? { reason } : {}) })));
        set({ approvalsError: null });
      } catch (error) {
        fail(error);
      }
      await get().refreshApprovals();
    },
    async cancel(operationId) {
      try {
        upsert(await unwrap(api().approvals.cancel({ operationId })));
        set({ approvalsError: null });
      } catch (error) {
        fail(error);
      }
      await get().refreshApprovals();
    },
    async runTool(input) {
      const op = await unwrap(api().tools.run(input));
      upsert(op);
      return op;
    },
  };
};
