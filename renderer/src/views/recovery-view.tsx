/**
 * Recovery: calls whose outcome is unknown because Warden stopped while they were running. Warden
 * never resends them on its own; the person records what happened (with a reason, kept in the
 * audit log) or retries as a NEW operation that gets a fresh decision from the gate.
 */
import { useEffect, useState } from 'react';
import type { OperationView } from '../../../shared/domain/ledger';
import { ErrorNote, StatePill, Time, ViewFrame } from '../components/common';
import { useAppStore } from '../store';

function RecoveryCard({ op }: { op: OperationView }) {
  const reconcile = useAppStore((s) => s.reconcile);
  const [reason, setReason] = useState('');
  const [retried, setRetried] = useState<string | null>(null);
  const act = async (outcome: 'succeeded' | 'failed' | 'retry') => {
    const id = await reconcile(op.operationId, outcome, reason.trim());
    if (outcome === 'retry' && id) setRetried(id);
  };
  return (
    <article className="card" data-testid={`recovery-${op.operationId}`}>
      <header className="card-head">
        <h2>
          <code>{op.toolName}</code> on {op.serverId} / {op.accountId}
        </h2>
        <StatePill state={op.state} />
      </header>
      <p className="muted">
        Requested <Time at={op.requestedAt} />; last change <Time at={op.updatedAt} />. {op.reason}
      </p>
      <p>{op.reachedExecuting ? 'The request may have reached the server: check there before retrying.' : 'It never reached executing.'}</p>
      <label className="field">
        <span>Reason (required; recorded in the audit log)</span>
        <input className="input" value={reason} onChange={(e) => setReason(e.target.value)} data-testid={`recovery-${op.operationId}-reason`} />
      </label>
      <div className="form-actions">
        <button type="button" className="button" disabled={!reason.trim()} onClick={() => void act('succeeded')}>
          Mark succeeded
        </button>
        <button type="button" className="button" disabled={!reason.trim()} onClick={() => void act('failed')}>
          Mark failed
        </button>
        <button type="button" className="button button-primary" disabled={!reason.trim()} onClick={() => void act('retry')}>
          Retry as a new call
        </button>
      </div>
      {retried ? (
        <p className="ok-note">
          Retried as <code>{retried}</code>; it was decided afresh (see Approvals if it needs you).
        </p>
      ) : null}
    </article>
  );
}

/** The Recovery view. */
export function RecoveryView() {
  const operations = useAppStore((s) => s.recoveryOperations);
  const lastRecovery = useAppStore((s) => s.lastRecovery);
  const error = useAppStore((s) => s.recoveryError);
  const refreshRecovery = useAppStore((s) => s.refreshRecovery);
  useEffect(() => {
    void refreshRecovery();
  }, [refreshRecovery]);
  return (
    <ViewFrame
      id="recovery"
      title="Recovery"
      wide
      note={
        <p>
          Calls whose outcome is unknown because Warden stopped while they were running. Warden never resends them on its own: check what
          happened, record it, or start a new call that needs its own decision.
        </p>
      }
    >
      <ErrorNote error={error} testId="recovery-error" />
      {lastRecovery ? (
        <p className="muted" data-testid="recovery-last">
          Last start: {lastRecovery.outcomeUnknown.length} outcome unknown, {lastRecovery.cancelled.length} cancelled, {lastRecovery.denied.length} denied,{' '}
          {lastRecovery.requeued.length} waiting for approval again.
        </p>
      ) : null}
      {operations.length === 0 ? (
        <p className="empty" data-testid="recovery-empty">
          Nothing to reconcile.
        </p>
      ) : (
        operations.map((op) => <RecoveryCard key={op.operationId} op={op} />)
      )}
    </ViewFrame>
  );
}
