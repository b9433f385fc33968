/**
 * Approvals: tool calls waiting for a person, each with the preview Warden's own code wrote from
 * the tool identity and the exact canonical arguments (never text from the model or server).
 *
 * This window cannot approve: there is no approve button and no approve channel. "Review…" asks
 * main to open Warden's native dialog, where the person decides; Reject works from here.
 */
import { useEffect, useState } from 'react';
import type { PendingApproval } from '../../../shared/contract/approvals';
import { ArgumentWords } from '../components/argument-words';
import { callOutcome, callReason } from '../../../shared/call-words';
import { EmptyState, ErrorNote, TechnicalDetails, Time, ViewFrame } from '../components/common';
import { useAppStore } from '../store';

/** "in 9 min", "in 40 s", "expired": time left until a pending approval expires. */
function timeLeft(expiresAt: number, now: number): string {
  const ms = expiresAt - now;
  if (ms <= 0) return 'expired';
  if (ms < 60_000) return `in ${Math.ceil(ms / 1000)} s`;
  return `in ${Math.ceil(ms / 60_000)} min`;
}

/** The current time, updated every few seconds (for the time left on each card). */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

function ApprovalCard({ approval, name, now }: { approval: PendingApproval; name: string; now: number }) {
  const review = useAppStore((s) => s.review);
  const reject = useAppStore((s) => s.reject);
  const reviewing = useAppStore((s) => s.reviewing.includes(approval.operation.operationId));
  const [reason, setReason] = useState('');
  const [rejecting, setRejecting] = useState(false);
  const { operation: op, preview } = approval;
  const id = op.operationId;
  return (
    <article className="card approval" data-testid={`approval-${id}`} aria-labelledby={`approval-${id}-title`}>
      <header className="card-head">
        <h2 className="approval-title" id={`approval-${id}-title`}>
          {preview.title}
        </h2>
      </header>
      <dl className="facts">
        <dt>Server</dt>
        <dd>
          {preview.serverLabel}
          {preview.serverLocation ? <span className="muted"> · {preview.serverLocation}</span> : null}
        </dd>
        <dt>Account</dt>
        <dd>{preview.accountLabel}</dd>
        <dt>Tool</dt>
        <dd>
          <code>{preview.toolName}</code>
        </dd>
        <dt>Why</dt>
        <dd data-testid={`approval-${id}-why`}>{preview.detail}</dd>
        {preview.requestedBy ? (
          <>
            <dt>Asked by</dt>
            <dd>{preview.requestedBy}</dd>
          </>
        ) : null}
        {op.expiresAt ? (
          <>
            <dt>Expires</dt>
            <dd data-testid={`approval-${id}-expires`}>
              {timeLeft(op.expiresAt, now)} <span className="muted">(at <Time at={op.expiresAt} />; then it is not sent)</span>
            </dd>
          </>
        ) : null}
      </dl>
      <ArgumentWords label="What will be sent" text={preview.argumentsText} json={preview.argumentsJson} testId={`approval-${id}-arguments`} />
      {(preview.claims ?? []).length > 0 || op.labels.toolDescription ? (
        <div className="approval-claims" data-testid={`approval-${id}-claim`}>
          <span className="claim-label">The server’s claims (not checked by Warden)</span>
          <ul>
            {(preview.claims ?? []).map((c) => (
              <li key={c}>Server says: {c}</li>
            ))}
            {op.labels.toolDescription ? <li className="approval-description">Server says it does: {op.labels.toolDescription}</li> : null}
          </ul>
        </div>
      ) : null}
      <TechnicalDetails
        testId={`approval-${id}-details`}
        facts={[
          ['Requested', <Time key="t" at={op.requestedAt} />],
          ['Operation', id],
          ['Server id', op.identity.serverId],
          ['Account id', op.identity.accountId],
          ['Fingerprint', op.fingerprint],
        ]}
      />
      <div className="form-actions">
        <button type="button" className="button button-primary" disabled={reviewing} onClick={() => void review(id)} data-testid={`approval-${id}-review`} aria-label={`Review… ${name}`}>
          {reviewing ? 'Waiting for Warden’s dialog…' : 'Review…'}
        </button>
        {rejecting ? (
          <>
            <input
              className="input"
              placeholder="Reason (optional)"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              aria-label={`Reason for rejecting ${name} (optional)`}
              data-testid={`approval-${id}-reason`}
            />
            <button type="button" className="button button-danger" onClick={() => void reject(id, reason.trim() || undefined)} data-testid={`approval-${id}-reject-confirm`} aria-label={`Reject ${name}`}>
              Reject
            </button>
            <button type="button" className="button" onClick={() => setRejecting(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" className="button button-danger" onClick={() => setRejecting(true)} data-testid={`approval-${id}-reject`} aria-label={`Reject… ${name}`}>
            Reject…
          </button>
        )}
      </div>
    </article>
  );
}

/** Cards of one model reply (one batch) together, in the order they were asked. */
function groupByBatch(approvals: readonly PendingApproval[]): PendingApproval[][] {
  const groups = new Map<string, PendingApproval[]>();
  for (const a of approvals) {
    const key = a.operation.origin.batchId ?? a.operation.operationId;
    groups.set(key, [...(groups.get(key) ?? []), a]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.operation.requestedAt - b.operation.requestedAt));
}

/** The Approvals view. */
export function ApprovalsView() {
  const approvals = useAppStore((s) => s.approvals);
  const operations = useAppStore((s) => s.operations);
  const error = useAppStore((s) => s.approvalsError);
  const refreshApprovals = useAppStore((s) => s.refreshApprovals);
  const navigate = useAppStore((s) => s.navigate);
  useEffect(() => {
    void refreshApprovals();
  }, [refreshApprovals]);
  const now = useNow(5_000);
  const recent = operations.filter((o) => o.state !== 'awaiting_approval').slice(0, 20);
  return (
    <ViewFrame
      id="approvals"
      title="Approvals"
      wide
      note={
        <p className="callout" data-testid="approvals-cannot-approve">
          Approving happens only in Warden's own native dialog, never in this window. “Review…” opens that dialog with the same facts; from
          here you can only reject. A call not decided within 10 minutes expires and is not sent.
        </p>
      }
    >
      <ErrorNote error={error} testId="approvals-error" />
      {approvals.length === 0 ? (
        <EmptyState
          testId="approvals-empty"
          title="Nothing is waiting for your approval"
          actions={
            <button type="button" className="button" onClick={() => navigate('permissions')}>
              Choose which tools ask
            </button>
          }
        >
          <p>
            When a model, or you with Run…, calls a tool that is set to Ask, the call waits here until you review it in Warden's dialog or reject
            it. Nothing is sent before that.
          </p>
        </EmptyState>
      ) : (
        groupByBatch(approvals).map((group, g) => (
          // One wrapper per group whatever its size, so a card keeps its state when its neighbour goes.
          <section
            key={group[0]!.operation.origin.batchId ?? group[0]!.operation.operationId}
            className={group.length > 1 ? 'approval-batch' : 'approval-single'}
            aria-label={group.length > 1 ? `${group.length} calls from one model reply` : undefined}
            data-testid={group.length > 1 ? 'approval-batch' : undefined}
          >
            {group.length > 1 ? <h2 className="section-title">One model reply asks for {group.length} calls</h2> : null}
            {group.map((a, i) => (
              <ApprovalCard key={a.operation.operationId} approval={a} name={group.length > 1 ? `call ${g + 1}.${i + 1}: ${a.preview.title}` : `call ${g + 1}: ${a.preview.title}`} now={now} />
            ))}
          </section>
        ))
      )}
      {recent.length > 0 ? (
        <>
          <h2 className="section-title">Recent decisions</h2>
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Recent decisions">
            <table className="table" data-testid="approvals-recent">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Call</th>
                  <th>Server / account</th>
                  <th>Why</th>
                  <th>Outcome</th>
                </tr>
              </thead>
              <tbody>
                {recent.map((o) => (
                  <tr key={o.operationId}>
                    <td>
                      <Time at={o.requestedAt} />
                    </td>
                    <td>{o.labels.summary}</td>
                    <td>
                      {o.labels.server} / {o.labels.account}
                    </td>
                    <td>{callReason(o)}</td>
                    <td data-state={o.state}>{callOutcome(o)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </ViewFrame>
  );
}
