/**
 * Recovery: calls whose outcome is unknown because Warden stopped while they were running (or no
 * answer came). Warden never resends them on its own; the person records what happened (with a
 * reason, kept in the audit log) or retries as a NEW operation that gets a fresh decision from the
 * gate — and then sees where that retry went.
 *
 * Also the banner the app frame shows after a crash left calls unknown, pointing here.
 */
import { useEffect, useState } from 'react';
import type { OperationView } from '../../../shared/domain/ledger';
import type { ShownError } from '../api';
import { toShownError } from '../api';
import { argumentTextOfJson } from '../../../shared/argument-words';
import { ArgumentWords } from '../components/argument-words';
import { EmptyState, ErrorNote, StatePill, Time, ViewFrame } from '../components/common';
import { useAppStore } from '../store';

/** "Close issue on GitHub (account Work)": names from the servers list, ids only when a server is gone. */
function useWhere(): (op: Pick<OperationView, 'serverId' | 'accountId'>) => string {
  const servers = useAppStore((s) => s.servers);
  return (op) => {
    const server = servers.find((s) => s.definition.id === op.serverId);
    if (!server) return `a server that is no longer configured (${op.serverId})`;
    const account = server.accounts.find((a) => a.id === op.accountId);
    return server.accounts.length > 1 || !account ? `${server.definition.name} (account ${account?.label ?? op.accountId})` : server.definition.name;
  };
}

/** Loads the servers list once if nothing has (the names above come from it). */
function useServersLoaded(): void {
  const refreshServers = useAppStore((s) => s.refreshServers);
  const loaded = useAppStore((s) => s.servers.length > 0);
  useEffect(() => {
    if (!loaded) void refreshServers();
  }, [loaded, refreshServers]);
}

/** What a state means for the person, in a sentence. */
function stateSentence(state: string, reason: string): string {
  switch (state) {
    case 'awaiting_approval':
      return 'It is waiting for your approval.';
    case 'approved':
    case 'executing':
      return 'It is running.';
    case 'succeeded':
      return 'It ran and the server answered.';
    case 'failed':
      return `It failed: ${reason}`;
    case 'denied':
      return `Warden's rules refused it: ${reason}`;
    case 'validation_failed':
      return `It was not sent: ${reason}`;
    case 'rejected':
      return 'You rejected it, so it was not sent.';
    case 'expired':
      return 'Nobody approved it in time, so it was not sent.';
    case 'invalidated':
    case 'cancelled':
      return `It was not sent: ${reason}`;
    case 'outcome_unknown':
      return 'No answer came back again, so its outcome is unknown too.';
    default:
      return reason;
  }
}

/**
 * Where a retry went: its new operation, its state (live while this window follows the core's
 * events), and links to it in Activity and, while it waits, to Approvals.
 */
function RetryTrace({ retryOperationId, testId }: { retryOperationId: string; testId: string }) {
  const live = useAppStore((s) => s.operations.find((o) => o.operationId === retryOperationId));
  const loadOperationView = useAppStore((s) => s.loadOperationView);
  const showOperationInActivity = useAppStore((s) => s.showOperationInActivity);
  const navigate = useAppStore((s) => s.navigate);
  const [stored, setStored] = useState<OperationView | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  // Not among this window's recent operations (e.g. retried before a restart): ask the ledger.
  useEffect(() => {
    if (live) return;
    loadOperationView(retryOperationId).then(setStored, (e: unknown) => setError(toShownError(e)));
  }, [live, retryOperationId, loadOperationView]);
  const state = live?.state ?? stored?.state ?? null;
  const reason = live?.reason ?? stored?.reason ?? '';
  return (
    <div className="retry-trace" data-testid={testId} data-retry={retryOperationId} data-state={state ?? ''}>
      <p>
        <strong>Retried as a new call.</strong> {state ? <StatePill state={state} testId={`${testId}-state`} /> : <span className="muted">Looking it up…</span>}
      </p>
      {state ? <p data-testid={`${testId}-sentence`}>{stateSentence(state, reason)}</p> : null}
      <p className="muted small">It was decided afresh by your current rules, like any call; Activity has its whole record.</p>
      <div className="inline-actions">
        <button type="button" className="button button-small" data-testid={`${testId}-activity`} onClick={() => void showOperationInActivity(retryOperationId)}>
          Open it in Activity
        </button>
        {state === 'awaiting_approval' ? (
          <button type="button" className="button button-small button-primary" data-testid={`${testId}-approvals`} onClick={() => navigate('approvals')}>
            Open Approvals
          </button>
        ) : null}
      </div>
      <ErrorNote error={error} />
    </div>
  );
}

/** What the call was sent with (secrets replaced), so the person knows what to look for at the server. */
function SentArguments({ operationId }: { operationId: string }) {
  const loadOperationHistory = useAppStore((s) => s.loadOperationHistory);
  const [sent, setSent] = useState<{ words: string; json: string } | null>(null);
  useEffect(() => {
    loadOperationHistory(operationId).then(
      (h) => {
        let json = h.arguments;
        try {
          json = JSON.stringify(JSON.parse(h.arguments), null, 2);
        } catch {
          // Not JSON (a damaged record): the words below show the text itself, escaped.
        }
        setSent({ words: argumentTextOfJson(h.arguments), json });
      },
      () => setSent(null),
    );
  }, [operationId, loadOperationHistory]);
  if (sent === null) return null;
  return <ArgumentWords label="Sent with these arguments" text={sent.words} json={sent.json} testId={`recovery-${operationId}-arguments`} />;
}

function RecoveryCard({ op }: { op: OperationView }) {
  const reconcile = useAppStore((s) => s.reconcile);
  const where = useWhere();
  const [reason, setReason] = useState('');
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const reasonId = `recovery-${op.operationId}-reason`;
  const act = async (outcome: 'succeeded' | 'failed' | 'retry') => {
    if (!reason.trim()) {
      setMissing(true);
      return;
    }
    setMissing(false);
    setBusy(true);
    try {
      await reconcile(op.operationId, outcome, reason.trim());
    } finally {
      setBusy(false);
    }
  };
  return (
    <article className="card" data-testid={`recovery-${op.operationId}`} aria-labelledby={`${reasonId}-title`}>
      <header className="card-head">
        <h2 id={`${reasonId}-title`}>
          <code>{op.toolName}</code> on {where(op)}
        </h2>
        <StatePill state={op.state} />
      </header>
      <p className="muted">
        Requested <Time at={op.requestedAt} />; last change <Time at={op.updatedAt} />. {op.reason}
      </p>
      <p>{op.reachedExecuting ? 'The request may have reached the server: check there before retrying.' : 'It never reached the server.'}</p>
      <SentArguments operationId={op.operationId} />
      <div className="field">
        <label htmlFor={reasonId}>What happened, or why you retry (required; recorded in the audit log)</label>
        <input
          id={reasonId}
          className="input"
          value={reason}
          onChange={(e) => (setReason(e.target.value), setMissing(false))}
          data-testid={reasonId}
          aria-invalid={missing ? true : undefined}
          aria-describedby={missing ? `${reasonId}-problem` : undefined}
        />
        {missing ? (
          <p id={`${reasonId}-problem`} className="field-problem" data-testid={`${reasonId}-problem`}>
            Say what you found (or why you retry) first: it is kept with this call in the audit log.
          </p>
        ) : null}
      </div>
      <div className="form-actions">
        <button type="button" className="button" disabled={busy} onClick={() => void act('succeeded')}>
          Mark succeeded
        </button>
        <button type="button" className="button" disabled={busy} onClick={() => void act('failed')}>
          Mark failed
        </button>
        <button type="button" className="button button-primary" disabled={busy} onClick={() => void act('retry')} data-testid={`recovery-${op.operationId}-retry`}>
          Retry as a new call
        </button>
      </div>
    </article>
  );
}

/** A settled operation: what the person recorded, and where a retry went. */
function SettledCard({ op }: { op: OperationView }) {
  const where = useWhere();
  const r = op.reconciled!;
  return (
    <article className="card" data-testid={`recovery-settled-${op.operationId}`}>
      <header className="card-head">
        <h2>
          <code>{op.toolName}</code> on {where(op)}
        </h2>
        <span className={r.outcome === 'retried' ? 'pill pill-hint' : `pill pill-op pill-op-${r.outcome}`}>
          {r.outcome === 'retried' ? 'retried' : `marked ${r.outcome}`}
        </span>
      </header>
      <p className="muted">
        Requested <Time at={op.requestedAt} />; settled <Time at={r.at} /> by {r.by === 'user' ? 'you' : r.by}: “{r.reason}”
      </p>
      {r.retryOperationId ? <RetryTrace retryOperationId={r.retryOperationId} testId={`recovery-settled-${op.operationId}-retry`} /> : null}
    </article>
  );
}

/** The Recovery view. */
export function RecoveryView() {
  const operations = useAppStore((s) => s.recoveryOperations);
  const settled = useAppStore((s) => s.settledRecovery);
  const lastRecovery = useAppStore((s) => s.lastRecovery);
  const error = useAppStore((s) => s.recoveryError);
  const refreshRecovery = useAppStore((s) => s.refreshRecovery);
  useServersLoaded();
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
          Calls whose outcome is unknown because Warden stopped while they were running, or no answer came. Warden never resends them on its own: check
          what happened, record it, or start a new call that needs its own decision.
        </p>
      }
    >
      <ErrorNote error={error} testId="recovery-error" />
      {lastRecovery && lastRecovery.outcomeUnknown.length + lastRecovery.cancelled.length + lastRecovery.denied.length + lastRecovery.requeued.length > 0 ? (
        <p className="muted" data-testid="recovery-last">
          When Warden last started: {lastRecovery.outcomeUnknown.length} outcome unknown, {lastRecovery.cancelled.length} cancelled, {lastRecovery.denied.length} denied,{' '}
          {lastRecovery.requeued.length} waiting for approval again.
        </p>
      ) : null}
      {operations.length === 0 ? (
        <EmptyState testId="recovery-empty" title="Nothing to recover">
          <p>
            If Warden stops while a call is running (a crash, a power cut), it cannot know whether the call happened. Such calls show up here so
            you can check with the server and record what happened, or start the call again as a new one. Warden never sends them again on its
            own.
          </p>
        </EmptyState>
      ) : (
        operations.map((op) => <RecoveryCard key={op.operationId} op={op} />)
      )}
      {settled.length > 0 ? (
        <section aria-labelledby="recovery-settled-title" data-testid="recovery-settled">
          <h2 id="recovery-settled-title" className="section-title">
            Settled
          </h2>
          {settled.map((op) => (
            <SettledCard key={op.operationId} op={op} />
          ))}
        </section>
      ) : null}
    </ViewFrame>
  );
}

/**
 * Shown above every view (but Recovery itself) when the last start found calls that were running
 * when Warden stopped and nobody has settled yet: they may or may not have happened.
 */
export function RecoveryBanner() {
  const unknown = useAppStore((s) => s.recoveryOperations);
  const lastRecovery = useAppStore((s) => s.lastRecovery);
  const dismissed = useAppStore((s) => s.recoveryBannerDismissed);
  const dismiss = useAppStore((s) => s.dismissRecoveryBanner);
  const view = useAppStore((s) => s.view);
  const navigate = useAppStore((s) => s.navigate);
  const fromCrash = unknown.filter((o) => lastRecovery?.outcomeUnknown.includes(o.operationId));
  if (dismissed || view === 'recovery' || fromCrash.length === 0) return null;
  const n = fromCrash.length;
  return (
    <div className="banner banner-recovery" role="status" data-testid="recovery-banner">
      <span>
        <strong>
          Warden stopped while {n === 1 ? '1 call was' : `${n} calls were`} running.
        </strong>{' '}
        {n === 1 ? 'It' : 'They'} may or may not have happened, and Warden won't send {n === 1 ? 'it' : 'them'} again on its own. Check and settle{' '}
        {n === 1 ? 'it' : 'them'} in Recovery.
      </span>
      <span className="banner-actions">
        <button type="button" className="button button-primary" data-testid="recovery-banner-open" onClick={() => navigate('recovery')}>
          Open Recovery
        </button>
        <button type="button" className="button" data-testid="recovery-banner-dismiss" onClick={dismiss}>
          Later
        </button>
      </span>
    </div>
  );
}
