/**
 * Live core status: the status bar along the bottom of the frame, the safe-mode banner and the
 * contract-error banner. Every value shown comes from `core:status` or `core:status-changed`.
 */
import type { ReactNode } from 'react';
import { explainError } from '../errors';
import { useAppStore } from '../store';

function Field({ label, testId, children }: { label: string; testId: string; children: ReactNode }) {
  return (
    <div className="status-field">
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </div>
  );
}

/** The status bar: connection state, version, platform, start time, journal, servers, approvals. */
export function StatusPanel() {
  const status = useAppStore((s) => s.status);
  const connection = useAppStore((s) => s.connection);
  const label = connection === 'live' ? 'Live' : connection === 'connecting' ? 'Connecting…' : 'Error';
  return (
    <footer className="status-bar" aria-label="Core status" data-testid="status-panel">
      <span className={`conn conn-${connection}`} data-testid="status-connection">
        <span className="conn-dot" aria-hidden="true" />
        {label}
      </span>
      {status ? (
        <dl className="status-fields">
          <Field label="Version" testId="status-version">
            {status.version}
          </Field>
          <Field label="Platform" testId="status-platform">
            {status.platform}
          </Field>
          <Field label="Started" testId="status-started">
            <time dateTime={status.startedAt} title={status.startedAt}>
              {status.startedAt}
            </time>
          </Field>
          <Field label="Journal" testId="status-journal">
            {status.journal.kind} · {status.journal.records} records
          </Field>
          <Field label="Servers" testId="status-servers">
            {status.servers.connected}/{status.servers.configured} connected
          </Field>
          <Field label="Pending approvals" testId="status-pending">
            {status.pendingApprovals}
          </Field>
        </dl>
      ) : (
        <span className="status-empty">No status from the core yet.</span>
      )}
    </footer>
  );
}

/** Shown above every view while the core reports safe mode (a ledger record failed its check). */
export function SafeModeBanner() {
  const safeMode = useAppStore((s) => s.status?.safeMode === true);
  if (!safeMode) return null;
  return (
    <div className="banner banner-danger" role="alert" data-testid="safe-mode-banner">
      <span>
        <strong>Safe mode.</strong> Warden found records in its ledger that fail their checksum or the hash chain: damaged, or changed after they were written. Every tool is held at Ask until
        this is resolved; see Recovery and Activity.
      </span>
    </div>
  );
}

/** Shows the last contract failure with its code, and a retry. */
export function CoreErrorBanner() {
  const error = useAppStore((s) => s.coreError);
  const refresh = useAppStore((s) => s.refreshStatus);
  if (!error) return null;
  return (
    <div className="banner banner-error" role="alert" data-testid="core-error">
      <span>
        <strong>Warden's core did not answer as expected.</strong> {explainError(error).sentence}{' '}
        <details className="banner-details">
          <summary>Details</summary>
          <code data-testid="core-error-code">{error.code}</code> <span data-testid="core-error-message">{error.message}</span>
        </details>
      </span>
      <button type="button" className="button" onClick={() => void refresh()}>
        Retry
      </button>
    </div>
  );
}
