/**
 * Live core status: the status bar along the bottom of the frame, the safe-mode banner and the
 * contract-error banner. Every value shown comes from `core:status` or `core:status-changed`.
 *
 * The bar leads with what a person acts on (servers connected, calls waiting for them, whether
 * the activity log is sound), in words, each a button to the view that deals with it. What a
 * developer wants (core link, version, platform, start time, journal counts) is behind Details.
 */
import type { ReactNode } from 'react';
import { explainError } from '../errors';
import { useAppStore } from '../store';
import { Icon } from './icons';
import { connectionWords, ledgerWords, pendingWords, serversWords, type Tone } from './status-words';

function Dot({ tone }: { tone: Tone }) {
  return <span className={`dot dot-${tone}`} aria-hidden="true" />;
}

function Field({ label, testId, children }: { label: string; testId: string; children: ReactNode }) {
  return (
    <div className="status-field">
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </div>
  );
}

/** The status bar: what matters to a person, and developer details behind a toggle. */
export function StatusPanel() {
  const status = useAppStore((s) => s.status);
  const connection = useAppStore((s) => s.connection);
  const navigate = useAppStore((s) => s.navigate);
  const detailsOpen = useAppStore((s) => s.statusDetailsOpen);
  const toggleDetails = useAppStore((s) => s.toggleStatusDetails);
  const core = connectionWords(connection);
  const servers = status ? serversWords(status.servers) : null;
  const pending = status ? pendingWords(status.pendingApprovals) : null;
  const ledger = status ? ledgerWords(status) : null;
  return (
    <footer className="status-bar" aria-label="Status" data-testid="status-panel" data-connection={connection}>
      <div className="status-main">
        {connection !== 'live' ? (
          <span className={`status-item status-${core.tone}`} data-testid="status-core-problem">
            <Dot tone={core.tone} />
            {connection === 'connecting' ? "Connecting to Warden's core…" : "Warden's core is not answering"}
          </span>
        ) : null}
        {servers && pending && ledger ? (
          <>
            <button type="button" className="status-item" data-testid="status-servers" data-tone={servers.tone} onClick={() => navigate('servers')}>
              <Dot tone={servers.tone} />
              {servers.text}
            </button>
            <button type="button" className={`status-item status-${pending.tone}`} data-testid="status-pending" data-tone={pending.tone} onClick={() => navigate('approvals')}>
              <Dot tone={pending.tone} />
              {pending.text}
            </button>
            <button type="button" className={`status-item status-${ledger.tone}`} data-testid="status-ledger" data-tone={ledger.tone} onClick={() => navigate('settings')}>
              <Dot tone={ledger.tone} />
              {ledger.text}
            </button>
          </>
        ) : connection === 'live' ? (
          <span className="status-item">No status from the core yet.</span>
        ) : null}
      </div>
      <button
        type="button"
        className="status-item status-toggle"
        aria-expanded={detailsOpen}
        aria-controls="status-details"
        data-testid="status-details-toggle"
        onClick={toggleDetails}
      >
        <Icon name="details" size={16} />
        {detailsOpen ? 'Hide details' : 'Details'}
      </button>
      {detailsOpen ? (
        <dl id="status-details" className="status-fields" data-testid="status-details">
          <Field label="Core" testId="status-connection">
            {core.text}
          </Field>
          {status ? (
            <>
              <Field label="Version" testId="status-version">
                {status.version}
              </Field>
              <Field label="Platform" testId="status-platform">
                {status.platform}
              </Field>
              <Field label="Started" testId="status-started">
                <time dateTime={status.startedAt}>{new Date(status.startedAt).toLocaleString()}</time>
              </Field>
              <Field label="Journal" testId="status-journal">
                {status.journal.kind} · {status.journal.records} records
              </Field>
              <Field label="Servers" testId="status-servers-count">
                {status.servers.connected}/{status.servers.configured} connected
              </Field>
              <Field label="Pending" testId="status-pending-count">
                {status.pendingApprovals}
              </Field>
            </>
          ) : null}
        </dl>
      ) : null}
    </footer>
  );
}

/** Shown above every view while the core reports safe mode (a ledger record failed its check). */
export function SafeModeBanner() {
  const safeMode = useAppStore((s) => s.status?.safeMode === true);
  const navigate = useAppStore((s) => s.navigate);
  if (!safeMode) return null;
  const review = () => {
    navigate('settings');
    focusWhenShown('settings-ledger-title');
  };
  return (
    <div className="banner banner-danger" role="alert" data-testid="safe-mode-banner">
      <span>
        <strong>Safe mode.</strong> Warden found a problem with its ledger: records that fail their checksum, seal or the hash chain (damaged, or
        changed after they were written), records missing since Warden last noted where the ledger ended, or its key missing from the keychain.
        Every tool is held at Ask until you review the damage and leave safe mode in Settings.
      </span>
      <button type="button" className="button" onClick={review} data-testid="safe-mode-banner-review">
        Review in Settings
      </button>
    </div>
  );
}

/** Scrolls to and focuses an element of the view being opened, once React has drawn it. */
function focusWhenShown(id: string, framesLeft = 20): void {
  requestAnimationFrame(() => {
    const element = document.getElementById(id);
    if (element) {
      element.scrollIntoView({ block: 'start' });
      element.focus({ preventScroll: true });
    } else if (framesLeft > 0) focusWhenShown(id, framesLeft - 1);
  });
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
