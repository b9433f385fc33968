/**
 * "May this server use your model?": the sampling setting of one account of a server, shown in its
 * account panel (Servers → server details) beside its folders.
 *
 * Off, Ask me each time, or Always, and whether its replies are shown first. A looser choice is
 * applied only after the person confirms it in Warden's native dialog (`sampling:set` answers
 * applied: false otherwise), so nothing a page does can turn sampling on by itself; the panel then
 * shows the setting as it really is.
 */
import { useEffect, useState } from 'react';
import type { SamplingMode, SamplingSettingView } from '../../../shared/contract/sampling';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { ErrorNote } from '../components/common';

interface State {
  setting: SamplingSettingView;
  limits: { requestsPerMinute: number; maxTokensPerRequest: number; tokensPerHour: number };
  model: string | null;
}

const MODES: Array<{ mode: SamplingMode; label: string; help: string }> = [
  { mode: 'off', label: 'Off', help: 'Its requests are refused.' },
  { mode: 'ask', label: 'Ask me each time', help: 'Warden shows you what it wants to send, and the model that would answer; Deny is the default.' },
  { mode: 'always', label: 'Always', help: 'Answered without asking, within the limits below. Every request is recorded in Activity.' },
];

export function SamplingPanel({ serverId, accountId, serverName, accountLabel, testPrefix }: { serverId: string; accountId: string; serverName: string; accountLabel: string; testPrefix: string }) {
  const [state, setState] = useState<State | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    const api = (() => {
      try {
        return getWardenApi();
      } catch {
        return null;
      }
    })();
    if (!api?.sampling) return;
    unwrap(api.sampling.get({ serverId, accountId })).then(
      (s) => live && setState(s),
      (e: unknown) => live && setError(toShownError(e)),
    );
    return () => {
      live = false;
    };
  }, [serverId, accountId]);
  const change = async (next: SamplingSettingView) => {
    setError(null);
    setNote(null);
    setBusy(true);
    try {
      const answer = await unwrap(getWardenApi().sampling.set({ serverId, accountId, ...next }));
      setState(answer);
      setNote(answer.applied ? 'Saved.' : 'Not changed: it was not confirmed in Warden’s dialog.');
    } catch (e) {
      setError(toShownError(e));
    } finally {
      setBusy(false);
    }
  };
  const headingId = `${testPrefix}-sampling-heading`;
  const name = `${testPrefix}-sampling-mode`;
  return (
    // Named with its account: every account of a server has this section, and each region's name must tell them apart.
    <section className="server-data-section sampling" aria-label={`May ${serverName} use your model, for ${accountLabel}`} data-testid={`${testPrefix}-sampling`}>
      <h3 id={headingId}>May this server use your model?</h3>
      <p className="muted">
        Some servers ask the app’s model to write text for them (MCP “sampling”). The server writes what your model is sent and gets the reply; it uses
        your model account. Making this looser asks you to confirm in a Warden dialog.
      </p>
      {state === null ? null : (
        <>
          <fieldset className="sampling-modes" disabled={busy}>
            <legend className="visually-hidden">Sampling for {serverName}</legend>
            {MODES.map((m) => (
              <label key={m.mode} className="sampling-mode">
                <input
                  type="radio"
                  name={name}
                  value={m.mode}
                  checked={state.setting.mode === m.mode}
                  onChange={() => void change({ ...state.setting, mode: m.mode })}
                  data-testid={`${testPrefix}-sampling-${m.mode}`}
                />
                <span>
                  <strong>{m.label}</strong> <span className="muted">{m.help}</span>
                </span>
              </label>
            ))}
            <label className="sampling-mode">
              <input
                type="checkbox"
                checked={state.setting.reviewReplies}
                disabled={state.setting.mode === 'off'}
                onChange={(e) => void change({ ...state.setting, reviewReplies: e.target.checked })}
                data-testid={`${testPrefix}-sampling-review`}
              />
              <span>Show me the model’s reply before it is sent to the server</span>
            </label>
          </fieldset>
          <p className="muted" data-testid={`${testPrefix}-sampling-limits`}>
            {state.model ? `The model that answers: ${state.model} (the model of your most recent conversation in Chat).` : 'No model is set up yet, so requests are refused.'} Limits:{' '}
            {state.limits.requestsPerMinute} requests a minute, {state.limits.maxTokensPerRequest} tokens per reply, {state.limits.tokensPerHour} tokens an hour.
            Warden never runs a tool because a server’s request says so: tools the model asks for go back to the server.
          </p>
        </>
      )}
      {note ? (
        <p className="muted" role="status">
          {note}
        </p>
      ) : null}
      <ErrorNote error={error} />
    </section>
  );
}
