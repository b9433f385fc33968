/**
 * Small building blocks shared by the views: error notes, status pills, untrusted-text blocks and
 * relative times. Styling only through classes in styles.css (strict CSP: no inline styles).
 */
import type { ReactNode } from 'react';
import type { ConnectionStatusView } from '../../../shared/contract/connections';
import type { ShownError } from '../api';

/** A contract failure with its stable code, or nothing. */
export function ErrorNote({ error, testId }: { error: ShownError | null; testId?: string }) {
  if (!error) return null;
  return (
    <p className="error-note" role="alert" data-testid={testId}>
      <code>{error.code}</code> {error.message}
    </p>
  );
}

/** A connection state as a coloured pill; errors and auth-required carry their reason. */
export function ConnectionPill({ status, testId }: { status: ConnectionStatusView | undefined; testId?: string }) {
  const s = status ?? { state: 'disconnected' as const };
  const text =
    s.state === 'connected'
      ? 'Connected'
      : s.state === 'connecting'
        ? `Connecting…${s.attempt > 1 ? ` (attempt ${s.attempt})` : ''}`
        : s.state === 'error'
          ? `Error: ${s.reason}${s.retryInMs !== undefined ? ` (retrying in ${Math.round(s.retryInMs / 1000)} s)` : ''}`
          : s.state === 'auth_required'
            ? `Sign-in required: ${s.reason}`
            : 'Disconnected';
  return (
    <span className={`pill pill-${s.state}`} data-testid={testId} data-state={s.state}>
      {text}
    </span>
  );
}

/** A decision (allow/ask/deny) as a pill. */
export function DecisionPill({ decision, testId }: { decision: string | null | undefined; testId?: string }) {
  if (!decision) return <span className="pill pill-disconnected">—</span>;
  const label = decision === 'allow' ? 'Allow' : decision === 'ask' ? 'Ask' : decision === 'deny' ? 'Deny' : decision;
  return (
    <span className={`pill pill-decision-${decision}`} data-testid={testId}>
      {label}
    </span>
  );
}

/** An operation state as a pill. */
export function StatePill({ state, testId }: { state: string; testId?: string }) {
  return (
    <span className={`pill pill-op pill-op-${state}`} data-testid={testId} data-state={state}>
      {state.replace(/_/g, ' ')}
    </span>
  );
}

/**
 * Text that came from a server (descriptions, instructions): already sanitized by main, shown as
 * plain text (never HTML) and labelled as the server's claim. `flags` (main's plain-words reasons
 * why the text reads like instructions to an AI model) are shown under it as a note on the page.
 */
export function ServerClaim({ children, testId, flags }: { children: ReactNode; testId?: string; flags?: readonly string[] }) {
  if (children === null || children === undefined || children === '') return <span className="muted">No description.</span>;
  return (
    <span className="claim" data-testid={testId}>
      <span className="claim-label">Server says:</span> {children}
      {flags && flags.length > 0 ? (
        <span className="answer-flag claim-flag" role="note" data-testid={testId ? `${testId}-flag` : undefined}>
          <strong>Reads like instructions to an AI model.</strong> Warden gives a model this text only as the server&apos;s untrusted words, and nothing in it
          can change what Warden allows. It {flags.join('; ')}.
        </span>
      ) : null}
    </span>
  );
}

/** A time as a local date-time string, with the ISO form in the title. */
export function Time({ at }: { at: number }) {
  const d = new Date(at);
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()}>
      {d.toLocaleString()}
    </time>
  );
}

/** A view's frame: title, an optional note, and content. */
export function ViewFrame({ id, title, note, actions, children, wide }: { id: string; title: string; note?: ReactNode; actions?: ReactNode; children: ReactNode; wide?: boolean }) {
  return (
    <section className={wide ? 'view view-wide' : 'view'} data-testid={`view-${id}`} aria-labelledby={`view-title-${id}`}>
      <header className="view-header">
        <h1 id={`view-title-${id}`}>{title}</h1>
        <div className="view-actions">{actions}</div>
      </header>
      {note ? <div className="view-note">{note}</div> : null}
      {children}
    </section>
  );
}
