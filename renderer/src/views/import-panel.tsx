/**
 * Import servers from Claude Desktop, VS Code or Cursor configs: main shows its own open dialog
 * (this window never names a file), parses the chosen file and holds it under a preview id so the
 * import uses exactly what was shown; the exact command line of each local server, and a decision
 * for every value that looks secret (keychain / plain / omit). Secret-looking values are never
 * shown, only why they look secret.
 */
import { useState } from 'react';
import type { ImportPreview, ImportSource, SecretDecision } from '../../../shared/contract/servers';
import { toShownError, type ShownError } from '../api';
import { ErrorNote } from '../components/common';
import { describedBy, FieldProblem } from '../components/form-field';
import { useAppStore } from '../store';

const SOURCES: Array<{ id: ImportSource; label: string }> = [
  { id: 'claude-desktop', label: 'Claude Desktop' },
  { id: 'vscode-user', label: 'VS Code (user)' },
  { id: 'vscode-workspace', label: 'VS Code (workspace folder)' },
  { id: 'cursor', label: 'Cursor' },
  { id: 'file', label: 'Another config file' },
];

/** The import panel: choose a source, preview, confirm secrets, import. */
export function ImportPanel({ onDone }: { onDone: () => void }) {
  const importPreview = useAppStore((s) => s.importPreview);
  const importServers = useAppStore((s) => s.importServers);
  const [source, setSource] = useState<ImportSource>('claude-desktop');
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [decisions, setDecisions] = useState<Record<string, SecretDecision['action'] | undefined>>({});
  const [error, setError] = useState<ShownError | null>(null);
  const [done, setDone] = useState<string | null>(null);
  /** What the person still has to choose, by field, shown once they try to import without it. */
  const [missing, setMissing] = useState<Record<string, string>>({});

  const load = async () => {
    setError(null);
    setPreview(null);
    try {
      const p = await importPreview({ source });
      setPreview(p);
      setChosen(new Set(p.entries.filter((e) => !e.problem).map((e) => e.entryId)));
      setDecisions({});
    } catch (e) {
      const shown = toShownError(e);
      // Closing the file chooser is an answer, not an error.
      if (shown.code !== 'CANCELLED') setError(shown);
    }
  };

  const chosenEntries = preview?.entries.filter((e) => chosen.has(e.entryId)) ?? [];
  const undecided = chosenEntries.flatMap((e) => e.detectedSecrets).filter((s) => !decisions[s.valueId]);

  const doImport = async () => {
    if (!preview) return;
    setError(null);
    const empty: Record<string, string> = {};
    if (chosen.size === 0) empty.entries = 'Choose at least one server to import.';
    for (const s of undecided) empty[`secret.${s.valueId}`] = `Choose what to do with ${s.name}: move it to the keychain, keep it, or leave it out.`;
    setMissing(empty);
    if (Object.keys(empty).length > 0) return;
    try {
      const list: SecretDecision[] = chosenEntries.flatMap((e) => e.detectedSecrets.map((s) => ({ valueId: s.valueId, action: decisions[s.valueId]! })));
      const servers = await importServers(preview.previewId, [...chosen], list);
      setDone(`Imported ${servers.length} server${servers.length === 1 ? '' : 's'}.`);
      setPreview(null);
    } catch (e) {
      setError(toShownError(e));
    }
  };

  return (
    <div className="card form" data-testid="import-panel">
      <h2>Import servers</h2>
      <div className="field-row">
        <label className="field">
          <span>From</span>
          <select className="input" value={source} onChange={(e) => setSource(e.target.value as ImportSource)} data-testid="import-source">
            {SOURCES.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="button" onClick={() => void load()} data-testid="import-preview">
          Choose file…
        </button>
      </div>
      <p className="muted">
        Warden opens its own file chooser{source === 'file' || source === 'vscode-workspace' ? '' : ' at the usual location of this config'}; only the file you
        choose there is read. Files on network shares are not read.
      </p>
      <ErrorNote error={error} testId="import-error" />
      {done ? <p className="ok-note">{done}</p> : null}
      {preview ? (
        <div className="import-preview">
          <p className="muted">
            {preview.path} · {preview.entries.length} server{preview.entries.length === 1 ? '' : 's'} found
          </p>
          {preview.entries.map((entry) => (
            <div className="import-entry" key={entry.entryId}>
              <label className="check">
                <input
                  type="checkbox"
                  disabled={entry.problem !== null}
                  checked={chosen.has(entry.entryId)}
                  onChange={(e) => {
                    const next = new Set(chosen);
                    if (e.target.checked) next.add(entry.entryId);
                    else next.delete(entry.entryId);
                    setChosen(next);
                  }}
                  {...describedBy('import', 'entries', missing)}
                />{' '}
                <strong>{entry.sourceName}</strong>
              </label>
              {entry.problem ? <p className="error-note">Cannot import: {entry.problem}</p> : null}
              {entry.commandLine !== null ? (
                <div className="commandline">
                  <span className="commandline-label">Will run exactly:</span>
                  <pre>{entry.commandLine}</pre>
                </div>
              ) : entry.draft?.transport === 'http' ? (
                <div className="commandline">
                  <span className="commandline-label">Connects to:</span>
                  <pre>{entry.draft.url}</pre>
                </div>
              ) : null}
              {entry.notes.map((n, i) => (
                <p className="muted" key={i}>
                  {n}
                </p>
              ))}
              {entry.detectedSecrets.map((s) => (
                <div className="secret-row" key={s.valueId}>
                  <span>
                    {s.field === 'env' ? 'Environment variable' : 'Header'} <code>{s.name}</code> looks secret ({s.reasons.join('; ')}; {s.length} characters)
                  </span>
                  <select
                    className="input"
                    value={decisions[s.valueId] ?? ''}
                    onChange={(e) => {
                      setDecisions({ ...decisions, [s.valueId]: (e.target.value || undefined) as SecretDecision['action'] | undefined });
                      const { [`secret.${s.valueId}`]: _done, ...rest } = missing;
                      setMissing(rest);
                    }}
                    aria-label={`what to do with ${s.name}`}
                    {...describedBy('import', `secret.${s.valueId}`, missing)}
                  >
                    <option value="">Choose…</option>
                    <option value="keychain">Move to the OS keychain</option>
                    <option value="plain">Keep in plain settings (you confirm it in Warden's dialog)</option>
                    <option value="omit">Leave it out</option>
                  </select>
                  <FieldProblem formId="import" field={`secret.${s.valueId}`} problems={missing} />
                </div>
              ))}
            </div>
          ))}
          <FieldProblem formId="import" field="entries" problems={missing} />
          <div className="form-actions">
            <button type="button" className="button button-primary" onClick={() => void doImport()}>
              Import {chosen.size} server{chosen.size === 1 ? '' : 's'}
            </button>
            {undecided.length > 0 ? (
              <span className="muted" data-testid="import-undecided">
                {undecided.length === 1 ? 'One secret-looking value still needs' : `${undecided.length} secret-looking values still need`} your choice.
              </span>
            ) : null}
          </div>
        </div>
      ) : null}
      <div className="form-actions">
        <button type="button" className="button" onClick={onDone}>
          Close
        </button>
      </div>
    </div>
  );
}
