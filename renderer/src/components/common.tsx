/**
 * Small building blocks shared by the views: error notes, status pills, untrusted-text blocks and
 * relative times. Styling only through classes in styles.css (strict CSP: no inline styles).
 */
import type { ReactNode } from 'react';
import type { ConnectionStatusView } from '../../../shared/contract/connections';
import type { ShownError } from '../api';
import { explainConnection, explainError, fieldSentence, type FieldNamer } from '../errors';

/**
 * A failure in words (errors.ts): the sentence with the fix, each wrong field named in words,
 * and the core's own message as a detail. The code stays in `data-code` for tests and support;
 * a person reads words, not codes.
 */
export function ErrorNote({ error, testId, fieldName }: { error: ShownError | null; testId?: string; fieldName?: FieldNamer }) {
  if (!error) return null;
  const { sentence, detail } = explainError(error);
  return (
    <div className="error-note" role="alert" data-testid={testId} data-code={error.code}>
      <p className="error-sentence">
        <Words text={sentence} />
      </p>
      {error.fields?.length ? (
        <ul className="error-fields">
          {error.fields.map((f, i) => (
            <li key={i}>{fieldSentence(f, fieldName ?? (() => null))}</li>
          ))}
        </ul>
      ) : null}
      {detail ? <p className="error-detail">{detail}</p> : null}
    </div>
  );
}

/** A connection state as a short coloured pill; `ConnectionProblem` says what went wrong in full. */
export function ConnectionPill({ status, testId }: { status: ConnectionStatusView | undefined; testId?: string }) {
  const s = status ?? { state: 'disconnected' as const };
  const text =
    s.state === 'connected'
      ? 'Connected'
      : s.state === 'connecting'
        ? `Connecting…${s.attempt > 1 ? ` (attempt ${s.attempt})` : ''}`
        : s.state === 'error'
          ? s.retryInMs !== undefined
            ? `Retrying in ${Math.max(1, Math.round(s.retryInMs / 1000))} s`
            : 'Couldn’t connect'
          : s.state === 'auth_required'
            ? 'Sign-in required'
            : 'Disconnected';
  return (
    <span className={`pill pill-${s.state}`} data-testid={testId} data-state={s.state}>
      {text}
    </span>
  );
}

/**
 * A sentence from errors.ts as the page shows it: `command` spans (a program, a name the person
 * typed) set as code, the rest as plain text.
 */
export function Words({ text }: { text: string }) {
  const parts = text.split('`');
  // An unmatched backtick is just a character.
  if (parts.length % 2 === 0) return <>{text}</>;
  return <>{parts.map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}

/** Why a connection failed or needs a sign-in, in a sentence with the fix (errors.ts); nothing otherwise. */
export function ConnectionProblem({ status, testId }: { status: ConnectionStatusView | undefined; testId?: string }) {
  if (!status || (status.state !== 'error' && status.state !== 'auth_required')) return null;
  return (
    <p className={status.state === 'error' ? 'connection-problem' : 'connection-problem connection-problem-auth'} role="status" data-testid={testId} data-kind={status.state === 'error' ? (status.failure?.kind ?? 'unknown') : 'auth'}>
      <Words text={explainConnection(status)} />
    </p>
  );
}

/** A decision (allow/ask/deny) as a pill, in the words of the mode that gives it (deny reads Disabled). */
export function DecisionPill({ decision, testId }: { decision: string | null | undefined; testId?: string }) {
  if (!decision) return <span className="pill pill-disconnected">—</span>;
  const label = decision === 'allow' ? 'Allow' : decision === 'ask' ? 'Ask' : decision === 'deny' ? 'Disabled' : decision;
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

/**
 * An empty view or list: what is missing, what to do next, and the buttons that do it.
 *
 * Why a component: every empty state should read the same way, so a person learns once where to
 * look for the next step.
 */
export function EmptyState({ testId, title, children, actions }: { testId: string; title: string; children?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="empty-state" data-testid={testId}>
      <h2>{title}</h2>
      {children}
      {actions ? <div className="form-actions">{actions}</div> : null}
    </div>
  );
}

/**
 * Ids and fingerprints, one click away instead of in the sentence a person reads.
 *
 * Why: names are what people recognise; the ids are still needed for support and exports, so they
 * are kept, closed, under "Technical details".
 */
export function TechnicalDetails({ facts, testId }: { facts: Array<[string, ReactNode]>; testId?: string }) {
  return (
    <details className="ids" data-testid={testId}>
      <summary>Technical details</summary>
      <dl className="facts">
        {facts.map(([label, value]) => (
          <div className="facts-row" key={label}>
            <dt>{label}</dt>
            <dd>
              <code className="small">{value}</code>
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}
