/**
 * Rebuilds gate operations from journal records (the input of `Gate.restore`).
 *
 * The ledger (issue 4) has its own projections; this is the minimal, schema-checked replay the
 * gate needs, usable over the in-memory journal too.
 */
import { parseJournalEvent } from '../../../shared/domain/journal-events';
import type { JournalRecord } from '../ports';
import type { RestoredOperation } from './gate';

/**
 * Replays `op.proposed` / `op.transition` records into operations with their last state.
 *
 * Why: after a restart the gate must know every operation (idempotency, pending approvals,
 * operations caught in `executing`). Unknown record types are skipped, never guessed at.
 */
export function replayOperations(records: readonly JournalRecord[]): RestoredOperation[] {
  const ops = new Map<string, RestoredOperation>();
  for (const record of records) {
    const event = parseJournalEvent(record.type, record.payload);
    if (!event) continue;
    if (event.type === 'op.proposed') {
      ops.set(event.payload.operationId, {
        proposed: event.payload,
        state: 'proposed',
        reason: 'Proposed',
        decision: null,
        approvedByUser: false,
        result: null,
        error: null,
        history: [],
      });
    } else if (event.type === 'op.transition') {
      const op = ops.get(event.payload.operationId);
      if (!op) continue;
      const t = event.payload;
      op.history.push({ from: t.from, to: t.to, reason: t.reason, at: record.time });
      op.state = t.to;
      op.reason = t.reason;
      if (t.decision) op.decision = t.decision;
      if (t.to === 'approved' && t.actor === 'user') op.approvedByUser = true;
      if (t.to === 'awaiting_approval' && t.expiresAt !== undefined) op.proposed = { ...op.proposed, expiresAt: t.expiresAt };
      if (t.result) op.result = t.result;
      if (t.error) op.error = t.error;
    }
  }
  return [...ops.values()];
}
