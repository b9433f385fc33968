/**
 * Approvals: tool calls waiting for a person, each with the preview Warden's own code wrote from
 * the tool identity and the exact canonical arguments (never text from the model or server).
 *
 * This window cannot approve: there is no approve button and no approve channel. "Review…" asks
 * main to open Warden's native dialog, where the person decides; Reject works from here.
 */
import { useEffect, useState } from 'react';
import type { PendingApproval } from '../../../shared/contract/approvals';
import { EmptyState, ErrorNote, StatePill, TechnicalDetails, Time, ViewFrame } from '../components/common';
import { useAppStore } from '../store';

function ApprovalCard({ approval }: { approval: PendingApproval }) {
  const review = useAppStore((s) => s.review);
  const reject = useAppStore((s) => s.reject);
  const reviewing = useAppStore((s) => s.reviewing.includes(approval.operation.operationId));
  const [reason, setReason] = useState('');
  const { operation: op, preview } = approval;
  const id = op.operationId;
  return (
    <article className="card approval" data-testid={`approval-${id}`}>
      <header className="card-head">
        <h2 className="approval-title">{preview.title}</h2>
        <span className="pill pill-hint">from {op.origin.source}</span>
      </header>
      <p>{preview.detail}</p>
      <dl className="facts">
        <dt>Server</dt>
        <dd>{preview.serverLabel}</dd>
        <dt>Account</dt>
        <dd>{preview.accountLabel}</dd>
        <dt>Tool</dt>
        <dd>
          <code>{preview.toolName}</code>
        </dd>
        <dt>Requested</dt>
        <dd>
          <Time at={op.requestedAt} />
        </dd>
        {op.expiresAt ? (
          <>
            <dt>Expires</dt>
            <dd>
              <Time at={op.expiresAt} />
            </dd>
          </>
        ) : null}
      </dl>
      <TechnicalDetails
        testId={`approval-${id}-details`}
        facts={[
          ['Operation', id],
          ['Server id', op.identity.serverId],
          ['Account id', op.identity.accountId],
          ['Fingerprint', op.fingerprint],
        ]}
      />
      <div className="field">
        <span>Exact arguments that will be sent</span>
        <pre className="code-block" data-testid={`approval-${id}-arguments`}>
          {preview.argumentsJson}
        </pre>
      </div>
      {op.labels.toolDescription ? (
        <p className="muted" data-testid={`approval-${id}-claim`}>
          The server describes this tool as (its claim, not checked by Warden): {op.labels.toolDescription}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="button" className="button button-primary" disabled={reviewing} onClick={() => void review(id)} data-testid={`approval-${id}-review`}>
          {reviewing ? 'Waiting for Warden’s dialog…' : 'Review…'}
        </button>
        <input className="input" placeholder="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} aria-label={`Reason for rejecting ${preview.toolName} (optional)`} />
        <button type="button" className="button button-danger" onClick={() => void reject(id, reason.trim() || undefined)} data-testid={`approval-${id}-reject`}>
          Reject
        </button>
      </div>
    </article>
  );
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
  const recent = operations.filter((o) => o.state !== 'awaiting_approval').slice(0, 20);
  return (
    <ViewFrame
      id="approvals"
      title="Approvals"
      wide
      note={
        <p className="callout" data-testid="approvals-cannot-approve">
          Approving happens only in Warden's own native dialog, never in this window. “Review…” opens that dialog with the same preview; from
          here you can only reject.
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
        approvals.map((a) => <ApprovalCard key={a.operation.operationId} approval={a} />)
      )}
      {recent.length > 0 ? (
        <>
          <h2 className="section-title">Recent decisions</h2>
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Recent decisions">
            <table className="table" data-testid="approvals-recent">
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Tool</th>
                  <th>Server / account</th>
                  <th>State</th>
                  <th>Why</th>
                </tr>
              </thead>
              <tbody>
                {recent.map((o) => (
                  <tr key={o.operationId}>
                    <td>
                      <Time at={o.requestedAt} />
                    </td>
                    <td>
                      <code>{o.identity.toolName}</code>
                    </td>
                    <td>
                      {o.labels.server} / {o.labels.account}
                    </td>
                    <td>
                      <StatePill state={o.state} />
                    </td>
                    <td className="muted">{o.reason}</td>
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
