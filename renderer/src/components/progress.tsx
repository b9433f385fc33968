/**
 * Progress of something that takes a while: a connect, or a running tool call.
 *
 * Nothing shows for the first second (most calls end sooner, and a flash of a bar is noise).
 * After that: a bar with "12 of 50" when the server sends progress with a total, an indeterminate
 * bar otherwise, always the elapsed time, and the server's progress message (its own words,
 * labelled as such). A running call has Stop: the call is cancelled the way Approvals cancels it,
 * so a call that was already sent ends "outcome unknown" (it may have happened), never "failed";
 * only a call to a tool Warden knows only reads (`readsOnly`) ends with nothing to check.
 */
import { useEffect, useState } from 'react';
import { useAppStore } from '../store';

/** The current time, refreshed every `everyMs` while `active`. */
export function useNow(active: boolean, everyMs = 500): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [active, everyMs]);
  return now;
}

/** "4 s", "1 min 5 s". */
export function elapsedWords(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
}

/** Shown only once something has taken longer than this. */
export const PROGRESS_AFTER_MS = 1000;

/** A bar (determinate when `total` is known) with elapsed time and an optional message. */
export function ProgressBar({ label, since, now, progress, total, message, testId }: { label: string; since: number; now: number; progress?: number; total?: number; message?: string; testId?: string }) {
  const determinate = progress !== undefined && total !== undefined && total > 0;
  const fraction = determinate ? Math.min(1, Math.max(0, progress / total)) : 0;
  return (
    <div className="progress" data-testid={testId} data-determinate={determinate ? 'true' : 'false'}>
      <div className="progress-line">
        {determinate ? (
          <progress className="progress-bar" value={fraction} max={1} aria-label={`${label}: ${progress} of ${total}`} />
        ) : (
          <progress className="progress-bar" aria-label={`${label}: working`} />
        )}
        <span className="progress-words">
          {determinate ? `${progress} of ${total} · ` : ''}
          {elapsedWords(now - since)}
        </span>
      </div>
      {message ? (
        <p className="progress-message" data-testid={testId ? `${testId}-message` : undefined}>
          <span className="muted">The server says: </span>
          {message}
        </p>
      ) : null}
    </div>
  );
}

/**
 * Progress and Stop for one running tool call. `startedAt` is when it began executing; Stop is
 * there from the start, the bar once it has run for a second (or the server reported progress).
 */
export function CallProgress({ operationId, startedAt, testId, stopTestId, readsOnly = false }: { operationId: string; startedAt: number; testId?: string; stopTestId?: string; readsOnly?: boolean }) {
  const now = useNow(true);
  const reported = useAppStore((s) => s.callProgress[operationId]);
  const cancel = useAppStore((s) => s.cancel);
  const [stopping, setStopping] = useState(false);
  const [stopError, setStopError] = useState<string | null>(null);
  const showBar = now - startedAt >= PROGRESS_AFTER_MS || reported !== undefined;
  return (
    <div className="call-progress" data-testid={testId}>
      {showBar ? (
        <ProgressBar
          label="Call progress"
          since={startedAt}
          now={now}
          testId={testId ? `${testId}-bar` : undefined}
          {...(reported ? { progress: reported.progress, ...(reported.total !== undefined ? { total: reported.total } : {}), ...(reported.message !== undefined ? { message: reported.message } : {}) } : {})}
        />
      ) : (
        <p className="progress-words">Running…</p>
      )}
      <div className="progress-actions">
        <button
          type="button"
          className="button button-small"
          disabled={stopping}
          data-testid={stopTestId ?? (testId ? `${testId}-stop` : undefined)}
          onClick={() => {
            setStopping(true);
            setStopError(null);
            cancel(operationId)
              .catch((e: unknown) => setStopError(e instanceof Error ? e.message : String(e)))
              .finally(() => setStopping(false));
          }}
        >
          {stopping ? 'Stopping…' : 'Stop'}
        </button>
        <span className="muted small">{readsOnly ? 'This tool only reads: stopping it leaves nothing to check.' : 'A stopped call may already have had its effect: its outcome is recorded as unknown.'}</span>
      </div>
      {stopError ? <p className="error-note">Could not stop it: {stopError}</p> : null}
    </div>
  );
}
