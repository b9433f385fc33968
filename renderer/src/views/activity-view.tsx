/**
 * Activity: the audit log from the ledger with filters (server, account, tool, decision, time),
 * export as JSONL or CSV (to a file chosen in main's native save dialog), and "why did this run?"
 * for any operation.
 */
import { useEffect, useMemo, useState } from 'react';
import type { AuditFilter, AuditRow, OperationView } from '../../../shared/domain/ledger';
import { toShownError, type ShownError } from '../api';
import { DecisionPill, EmptyState, ErrorNote, StatePill, TechnicalDetails, Time, ViewFrame } from '../components/common';
import { eventWords, namesFor } from '../components/names';
import { useAppStore } from '../store';

/** `datetime-local` text → ms since epoch, or undefined when empty/invalid. */
function toMs(text: string): number | undefined {
  if (!text) return undefined;
  const ms = new Date(text).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** Which layer of the policy decided, in words. */
const LAYER_WORDS: Record<string, string> = {
  availability: 'what the server lists',
  organization: 'your organization’s policy',
  'safe-mode': 'safe mode',
  conversation: 'this conversation’s setting',
  user: 'your rules',
  default: 'the default for tools with no rule',
};

/**
 * An event's reason for the Why? panel. A settled outcome is told from its record's fields (who,
 * what they found, whether it was tried again), so the retry's operation id, which the stored
 * reason carries for exports, stays under Technical details.
 */
function eventReason(e: AuditRow, reconciled: OperationView['reconciled']): string {
  if (e.type !== 'op.reconciled' || !reconciled) return e.reason;
  const who = reconciled.by === 'user' ? 'you' : reconciled.by;
  const what = reconciled.outcome === 'retried' ? 'tried it again as a new call' : reconciled.outcome === 'succeeded' ? 'recorded that it happened' : 'recorded that it did not happen';
  return `${who} ${what}${reconciled.reason ? ` (“${reconciled.reason}”)` : ''}`;
}

function HistoryPanel() {
  const history = useAppStore((s) => s.history);
  const close = useAppStore((s) => s.closeHistory);
  const servers = useAppStore((s) => s.servers);
  if (!history) return null;
  const op = history.operation;
  const names = namesFor(servers, op.serverId, op.accountId);
  return (
    <div className="card history" data-testid="activity-history">
      <header className="card-head">
        <h2>
          Why did <code>{op.toolName}</code> {op.reachedExecuting ? 'run' : 'not run'}?
        </h2>
        <button type="button" className="button button-small push-right" onClick={close}>
          Close
        </button>
      </header>
      <dl className="facts">
        <dt>State</dt>
        <dd>
          <StatePill state={op.state} />
        </dd>
        <dt>Where</dt>
        <dd>
          {names.server} / {names.account}
          {names.known ? '' : ' (no longer configured)'}
        </dd>
        <dt>Asked by</dt>
        <dd>{op.source === 'user' ? 'you (Run…)' : op.source === 'model' ? 'a model in a chat' : op.source}</dd>
        <dt>Decision at request</dt>
        <dd>
          {history.decisionAtRequest ? (
            <>
              <DecisionPill decision={history.decisionAtRequest.decision} /> {history.decisionAtRequest.reason}{' '}
              <span className="muted">(from {LAYER_WORDS[history.decisionAtRequest.layer] ?? history.decisionAtRequest.layer})</span>
            </>
          ) : (
            'none recorded'
          )}
        </dd>
        <dt>Approval</dt>
        <dd>{history.approval ? `by ${history.approval.by}: ${history.approval.reason}` : op.approvedByUser ? 'approved by you' : 'no approval by a person'}</dd>
        <dt>Sent</dt>
        <dd>{history.executing ? <Time at={history.executing.at} /> : 'never sent to the server'}</dd>
        <dt>Outcome</dt>
        <dd>{history.outcome ? `${eventWords({ type: 'op.transition', to: history.outcome.state })}: ${history.outcome.reason}` : 'not finished'}</dd>
      </dl>
      <TechnicalDetails
        testId="activity-history-details"
        facts={[
          ['Operation', op.operationId],
          ['Server id', op.serverId],
          ['Account id', op.accountId],
          ...(op.conversationId ? ([['Conversation', op.conversationId]] as Array<[string, string]>) : []),
          ...(history.decisionAtRequest?.ruleId ? ([['Rule', history.decisionAtRequest.ruleId]] as Array<[string, string]>) : []),
          ...(op.reconciled?.retryOperationId ? ([['Tried again as', op.reconciled.retryOperationId]] as Array<[string, string]>) : []),
          ...(op.retryOf ? ([['A new try of', op.retryOf]] as Array<[string, string]>) : []),
          ['Fingerprint', op.fingerprint],
        ]}
      />
      <div className="field">
        <span>Arguments (secrets replaced)</span>
        <pre className="code-block">{history.arguments}</pre>
      </div>
      <ol className="event-list">
        {history.events.map((e) => (
          <li key={e.seq}>
            <Time at={e.time} /> {eventWords(e)}: <span className="muted">{eventReason(e, op.reconciled)}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** The Activity view. */
export function ActivityView() {
  const rows = useAppStore((s) => s.auditRows);
  const total = useAppStore((s) => s.auditTotal);
  const error = useAppStore((s) => s.activityError);
  const filter = useAppStore((s) => s.auditFilter);
  const setAuditFilter = useAppStore((s) => s.setAuditFilter);
  const refreshAudit = useAppStore((s) => s.refreshAudit);
  const openHistory = useAppStore((s) => s.openHistory);
  const exportAudit = useAppStore((s) => s.exportAudit);
  const servers = useAppStore((s) => s.servers);
  const navigate = useAppStore((s) => s.navigate);
  const serverAccount = (serverId: string, accountId: string | null) => {
    const names = namesFor(servers, serverId, accountId);
    return accountId ? `${names.server} / ${names.account}` : names.server;
  };
  const [fromText, setFromText] = useState('');
  const [toText, setToText] = useState('');
  const [exported, setExported] = useState<{ path: string; rows: number } | null>(null);
  const [exportError, setExportError] = useState<ShownError | null>(null);
  useEffect(() => {
    void refreshAudit();
  }, [refreshAudit]);
  const accounts = useMemo(() => servers.flatMap((s) => s.accounts.map((a) => ({ id: a.id, label: `${s.definition.name} / ${a.label}` }))), [servers]);

  // The call Activity is focused on, named from its history once that is open.
  const focusedHistory = useAppStore((s) => s.history);
  const focused = filter.operationId && focusedHistory?.operation.operationId === filter.operationId ? focusedHistory.operation : null;

  const update = (patch: Partial<AuditFilter>) => {
    const next: AuditFilter = { ...filter, ...patch };
    for (const k of Object.keys(next) as Array<keyof AuditFilter>) if (next[k] === undefined || next[k] === '') delete next[k];
    setAuditFilter(next);
  };

  const doExport = async (format: 'jsonl' | 'csv') => {
    setExportError(null);
    try {
      const out = await exportAudit(format);
      setExported(out.path === null ? null : { path: out.path, rows: out.rows });
    } catch (e) {
      setExportError(toShownError(e));
    }
  };

  return (
    <ViewFrame id="activity" title="Activity" wide note={<p>Every decision and every state change of every tool call, from Warden's ledger.</p>}>
      <div className="toolbar filters" data-testid="activity-filters">
        <select className="input" value={filter.serverId ?? ''} onChange={(e) => update({ serverId: e.target.value || undefined })} aria-label="server" data-testid="activity-filter-server">
          <option value="">All servers</option>
          {servers.map((s) => (
            <option key={s.definition.id} value={s.definition.id}>
              {s.definition.name}
            </option>
          ))}
        </select>
        <select className="input" value={filter.accountId ?? ''} onChange={(e) => update({ accountId: e.target.value || undefined })} aria-label="account">
          <option value="">All accounts</option>
          {accounts.map((a) => (
            <option key={a.id} value={a.id}>
              {a.label}
            </option>
          ))}
        </select>
        <input className="input" placeholder="Tool name" value={filter.toolName ?? ''} onChange={(e) => update({ toolName: e.target.value || undefined })} aria-label="tool" data-testid="activity-filter-tool" />
        <select className="input" value={filter.decision ?? ''} onChange={(e) => update({ decision: (e.target.value || undefined) as AuditFilter['decision'] })} aria-label="decision" data-testid="activity-filter-decision">
          <option value="">Any decision</option>
          <option value="allow">Allow</option>
          <option value="ask">Ask</option>
          <option value="deny">Deny</option>
        </select>
        <label className="inline-label">
          From <input className="input" type="datetime-local" value={fromText} onChange={(e) => (setFromText(e.target.value), update({ from: toMs(e.target.value) }))} />
        </label>
        <label className="inline-label">
          To <input className="input" type="datetime-local" value={toText} onChange={(e) => (setToText(e.target.value), update({ to: toMs(e.target.value) }))} />
        </label>
        <span className="push-right inline-actions">
          <button type="button" className="button" onClick={() => void doExport('jsonl')} data-testid="activity-export-jsonl">
            Export JSONL
          </button>
          <button type="button" className="button" onClick={() => void doExport('csv')} data-testid="activity-export-csv">
            Export CSV
          </button>
        </span>
      </div>
      {filter.operationId ? (
        <p className="callout filter-focus" data-testid="activity-focus">
          {/* One span: the callout is a flex row, and the sentence must read as one line of text. */}
          <span>
            Showing the records of one call only
            {focused ? (
              <>
                : <code>{focused.toolName}</code> on {servers.find((s) => s.definition.id === focused.serverId)?.definition.name ?? 'a server that is no longer configured'}
              </>
            ) : null}
            .
          </span>
          <button type="button" className="button button-small" onClick={() => update({ operationId: undefined })}>
            Show every call
          </button>
        </p>
      ) : null}
      <ErrorNote error={error} testId="activity-error" />
      <ErrorNote error={exportError} />
      {exported ? (
        <div className="card export" data-testid="activity-export">
          <p>
            Saved {exported.rows} records to <code data-testid="activity-export-path">{exported.path}</code>.{' '}
            <button type="button" className="button button-small" onClick={() => setExported(null)}>
              Close
            </button>
          </p>
        </div>
      ) : null}
      <HistoryPanel />
      {total === 0 && Object.keys(filter).length === 0 ? (
        <EmptyState
          testId="activity-empty"
          title="No activity yet"
          actions={
            <button type="button" className="button" onClick={() => navigate('servers')}>
              Go to Servers
            </button>
          }
        >
          <p>
            Every call a model or you make is recorded here: what was asked, Warden's decision and why, and what happened. Connect a server and run
            one of its tools to see the first entries.
          </p>
        </EmptyState>
      ) : rows.length === 0 ? (
        <p className="empty" data-testid="activity-no-match">
          No records match these filters.{' '}
          <button type="button" className="link" onClick={() => (setFromText(''), setToText(''), setAuditFilter({}))}>
            Clear the filters
          </button>
        </p>
      ) : (
        <p className="muted" data-testid="activity-count">
          Showing {rows.length} of {total > 10_000 ? 'more than 10,000' : total} records (newest first).
        </p>
      )}
      <div className={rows.length === 0 ? 'table-scroll matrix-none' : 'table-scroll'} tabIndex={0} role="region" aria-label="Activity records">
        <table className="table" data-testid="activity-table">
          <thead>
            <tr>
              <th>Time</th>
              <th>Event</th>
              <th>Tool</th>
              <th>Server / account</th>
              <th>Decision</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.seq} data-testid="activity-row" data-operation={r.operationId ?? ''} data-to={r.to ?? ''}>
                <td>
                  <Time at={r.time} />
                </td>
                <td data-testid="activity-event" data-type={r.type}>
                  {eventWords(r)}
                </td>
                <td>{r.toolName ? <code>{r.toolName}</code> : null}</td>
                <td className="small">{r.serverId ? serverAccount(r.serverId, r.accountId) : ''}</td>
                <td>{r.decision ? <DecisionPill decision={r.decision} /> : null}</td>
                <td className="small">
                  <span className="muted">{r.reason}</span>
                  {/* In the reason's cell, so it stays in sight in a narrow window instead of a last column off to the side. */}
                  {r.operationId ? (
                    <>
                      {' '}
                      <button type="button" className="button button-small" onClick={() => void openHistory(r.operationId!)}>
                        Why?
                      </button>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </ViewFrame>
  );
}
