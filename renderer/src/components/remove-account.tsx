/**
 * Removing an account, wherever it is offered (the Permissions matrix and the Servers view): a
 * "Remove…" button that first asks main what removal deletes (the account's keychain secrets, its
 * rules and conversation overrides, the approvals it cancels) and shows that in a confirmation.
 *
 * Why one component: a person should read the same consequences before the same destructive
 * action, whichever view they started from.
 */
import { useState } from 'react';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { useAppStore } from '../store';
import { ErrorNote } from './common';

export function RemoveAccount({ serverId, accountId, label, serverLabel, testIdPrefix }: { serverId: string; accountId: string; label: string; serverLabel: string; testIdPrefix: string }) {
  const removeAccount = useAppStore((s) => s.removeAccount);
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
  const prefix = testIdPrefix;
  return (
    <>
      <button
        type="button"
        className="button button-small button-danger"
        data-testid={`${prefix}-remove`}
        data-server={serverId}
        aria-label={`Remove… the account ${label} of ${serverLabel}`}
        aria-expanded={impact !== null}
        onClick={() => void run(async () => setImpact(await unwrap(getWardenApi().accounts.removalImpact({ accountId }))))}
      >
        Remove…
      </button>
      {impact ? (
        <div className="confirm-box" role="group" aria-label={`Remove ${label}?`} data-testid={`${prefix}-confirm`}>
          <strong>
            Remove the account {label} of {serverLabel}?
          </strong>
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
                    await removeAccount(accountId);
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
    </>
  );
}
