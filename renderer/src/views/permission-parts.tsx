/**
 * Parts of the Permissions view: the mode control (buttons; arrow keys only move focus, Enter,
 * Space or a click commits), the changed-tool panel (before/after with its three answers) and the
 * account actions (make active, remove with a confirmation that says what is deleted).
 *
 * Nothing here can grant: every change that makes Warden ask less is confirmed by the person in
 * main's native dialog, which the core opens itself.
 */
import { useEffect, useState, type KeyboardEvent } from 'react';
import type { ToolChangeDetail } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { ErrorNote } from '../components/common';
import { useAppStore } from '../store';

export const MODE_WORDS: Record<PermissionMode, string> = { allow: 'Always Allow', ask: 'Ask', disabled: 'Disabled' };
const MODES: PermissionMode[] = ['allow', 'ask', 'disabled'];

/** Arrow keys move focus between the buttons of a group; they never press one. */
function moveFocus(e: KeyboardEvent<HTMLDivElement>) {
  if (!['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End'].includes(e.key)) return;
  const buttons = [...e.currentTarget.querySelectorAll('button')];
  const i = buttons.indexOf(document.activeElement as HTMLButtonElement);
  if (i < 0) return;
  e.preventDefault();
  const next = e.key === 'Home' ? 0 : e.key === 'End' ? buttons.length - 1 : (i + (e.key === 'ArrowLeft' || e.key === 'ArrowUp' ? -1 : 1) + buttons.length) % buttons.length;
  buttons[next]?.focus();
}

/**
 * The person's mode for one tool or group: three buttons and, when a mode is set, "Default".
 * `what` names the target in words for the accessible name and the "what happened" line.
 */
export function ModeButtons({ mode, what, onPick, testId, busy }: { mode: PermissionMode | null; what: string; onPick: (mode: PermissionMode | null) => void; testId: string; busy?: boolean }) {
  return (
    <div className="mode-buttons" role="group" aria-label={`Your mode for ${what}`} data-testid={testId} data-mode={mode ?? 'default'} onKeyDown={moveFocus}>
      {MODES.map((m) => (
        <button
          key={m}
          type="button"
          className={`mode-button mode-${m}${mode === m ? ' mode-on' : ''}`}
          aria-pressed={mode === m}
          disabled={busy}
          data-testid={`${testId}-${m}`}
          onClick={() => mode !== m && onPick(m)}
        >
          {MODE_WORDS[m]}
        </button>
      ))}
      {mode !== null ? (
        <button type="button" className="mode-button mode-default" disabled={busy} data-testid={`${testId}-default`} aria-label={`Default: remove your mode for ${what}`} onClick={() => onPick(null)}>
          Default
        </button>
      ) : null}
    </div>
  );
}

function DiffText({ parts }: { parts: ToolChangeDetail['fields'][number]['parts'] }) {
  return (
    <pre className="diff">
      {parts.map((p, i) =>
        p.kind === 'added' ? (
          <ins key={i} className="diff-added">
            {p.text}
          </ins>
        ) : p.kind === 'removed' ? (
          <del key={i} className="diff-removed">
            {p.text}
          </del>
        ) : (
          <span key={i}>{p.text}</span>
        ),
      )}
    </pre>
  );
}

const FIELD_WORDS: Record<ToolChangeDetail['fields'][number]['field'], string> = {
  title: 'Title',
  description: 'Description',
  inputSchema: 'Inputs (schema)',
  outputSchema: 'Output (schema)',
  annotations: 'Claims (annotations)',
  instructions: 'The server’s instructions',
};

/** Before and after of a changed tool, with its three answers (keep asking is the first). */
export function ChangePanel({ serverId, accountId, toolName, onClose }: { serverId: string; accountId: string; toolName: string; onClose: () => void }) {
  const refreshMatrix = useAppStore((s) => s.refreshMatrix);
  const say = useAppStore((s) => s.say);
  const [detail, setDetail] = useState<ToolChangeDetail | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    unwrap(getWardenApi().permissions.changeDetail({ serverId, accountId, toolName })).then(setDetail, (e: unknown) => setError(toShownError(e)));
  }, [serverId, accountId, toolName]);
  const answer = async (action: 'keep-asking' | 'allow-new' | 'disable') => {
    setBusy(true);
    try {
      const r = await unwrap(getWardenApi().permissions.resolveChange({ serverId, accountId, toolName, action }));
      say(`${toolName}: ${action === 'keep-asking' ? 'Warden keeps asking before each call' : action === 'disable' ? 'disabled' : 'the new version is allowed'}. ${r.explanation}.`);
      await refreshMatrix();
      onClose();
    } catch (e) {
      setError(toShownError(e));
    } finally {
      setBusy(false);
    }
  };
  const where = detail ? `${toolName} on ${detail.serverLabel} (${detail.accountLabel})` : toolName;
  return (
    <section className="card change-panel" aria-labelledby="change-panel-title" data-testid="change-panel">
      <header className="card-head">
        <h2 id="change-panel-title">What changed: {where}</h2>
        <button type="button" className="button button-small" onClick={onClose}>
          Close
        </button>
      </header>
      <ErrorNote error={error} testId="change-panel-error" />
      {detail ? (
        <>
          <p>
            {detail.kind === 'since-allowed' ? 'It changed after you allowed it, so Warden asks before each call again.' : 'It changed since it was last listed.'}{' '}
            <span className="muted">Now: {detail.explanation}.</span>
          </p>
          <ul className="change-summary" data-testid="change-summary">
            {detail.summary.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
          <p className="muted small">Below, text from the server is its claim (untrusted, not checked by Warden). Added text is underlined in green, removed text struck through in red.</p>
          {detail.fields.map((f) => (
            <div key={f.field} className="change-field" data-testid={`change-field-${f.field}`}>
              <h3>{FIELD_WORDS[f.field]}</h3>
              <div className="before-after">
                <div>
                  <div className="claim-label">Before (server’s text)</div>
                  <pre className="diff">{f.before ?? '(none)'}</pre>
                </div>
                <div>
                  <div className="claim-label">Now (server’s text)</div>
                  <pre className="diff">{f.after ?? '(none)'}</pre>
                </div>
              </div>
              <div className="claim-label">Differences</div>
              <DiffText parts={f.parts} />
            </div>
          ))}
          <div className="form-actions">
            <button type="button" className="button button-primary" disabled={busy} onClick={() => void answer('keep-asking')} data-testid="change-keep-asking">
              Keep asking
            </button>
            <button type="button" className="button" disabled={busy} onClick={() => void answer('allow-new')} data-testid="change-allow-new">
              Allow the new version…
            </button>
            <button type="button" className="button button-danger" disabled={busy} onClick={() => void answer('disable')} data-testid="change-disable">
              Disable it
            </button>
          </div>
          <p className="muted small">“Allow the new version…” opens Warden’s own dialog with this change first.</p>
        </>
      ) : null}
    </section>
  );
}

/** Make an account the active one; remove it after a confirmation that says what is deleted. */
export function AccountActions({ serverId, accountId, label, serverLabel, active }: { serverId: string; accountId: string; label: string; serverLabel: string; active: boolean }) {
  const refreshMatrix = useAppStore((s) => s.refreshMatrix);
  const say = useAppStore((s) => s.say);
  const [impact, setImpact] = useState<{ lines: string[]; blocked: string | null } | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const run = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(toShownError(e));
    }
  };
  const prefix = `perm-account-${serverId}-${accountId}`;
  return (
    <div className="account-actions">
      {active ? null : (
        <button
          type="button"
          className="button button-small"
          data-testid={`${prefix}-activate`}
          aria-label={`Make active: ${label} of ${serverLabel}`}
          onClick={() =>
            void run(async () => {
              const r = await unwrap(getWardenApi().accounts.setActive({ serverId, accountId }));
              say(r.message);
              await refreshMatrix();
            })
          }
        >
          Make active
        </button>
      )}
      <button
        type="button"
        className="button button-small button-danger"
        data-testid={`${prefix}-remove`}
        aria-label={`Remove… the account ${label} of ${serverLabel}`}
        onClick={() => void run(async () => setImpact(await unwrap(getWardenApi().accounts.removalImpact({ accountId }))))}
      >
        Remove…
      </button>
      {impact ? (
        <div className="confirm-box" role="group" aria-label={`Remove ${label}?`} data-testid={`${prefix}-confirm`}>
          <strong>Remove the account {label} of {serverLabel}?</strong>
          <ul>
            {impact.lines.map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
          {impact.blocked ? <p>{impact.blocked}.</p> : null}
          <div className="form-actions">
            <button type="button" className="button button-small" onClick={() => setImpact(null)} data-testid={`${prefix}-cancel`}>
              Keep it
            </button>
            {impact.blocked ? null : (
              <button
                type="button"
                className="button button-small button-danger"
                data-testid={`${prefix}-confirm-remove`}
                onClick={() =>
                  void run(async () => {
                    await unwrap(getWardenApi().accounts.remove({ accountId }));
                    setImpact(null);
                    say(`The account ${label} of ${serverLabel} was removed, with its secrets and rules.`);
                    await refreshMatrix();
                  })
                }
              >
                Remove {label}
              </button>
            )}
          </div>
        </div>
      ) : null}
      <ErrorNote error={error} />
    </div>
  );
}

