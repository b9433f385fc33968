/**
 * Add or edit a server: stdio (command, args, cwd, env) or HTTP (url, headers, auth).
 *
 * Secret values (env vars and headers marked "secret", a bearer token) live only in this form's
 * component state until Save; they travel once to main in the add/edit request, go to the OS
 * keychain there, and the form is then closed so nothing keeps them. A local server is saved only
 * after the person has seen the exact, untruncated command line that will run.
 */
import { useState, type FormEvent } from 'react';
import type { SecretInput } from '../../../shared/contract/servers';
import {
  BEARER_SECRET,
  displayCommandLine,
  envSecretName,
  headerSecretName,
  type ServerDraft,
  type ServerView,
} from '../../../shared/domain/servers';
import { toShownError, type ShownError } from '../api';
import { ErrorNote } from '../components/common';
import { describedBy, FieldProblem, FormField, problemsFromError, useFocusFirstProblem } from '../components/form-field';
import { plainIssue } from '../errors';
import { useAppStore } from '../store';
import { parseArgs } from './view-helpers';
import { mayBeSecretEnvName } from '../../../shared/domain/secret-env-names';

const FORM = 'server-form';

/**
 * The form's key for a field path of a servers:add / servers:edit request, or null: env and
 * header rows are `env.0.name`, the rest their own name (`url`, `command`, `clientId`).
 */
function fieldKey(path: readonly (string | number)[]): string | null {
  if (path[0] !== 'definition') return path[0] === 'accountLabel' ? 'name' : null;
  const [, field, index, part] = path;
  if ((field === 'env' || field === 'headers') && typeof index === 'number') return `${field === 'env' ? 'env' : 'header'}.${index}.${part === 'name' ? 'name' : 'value'}`;
  if (field === 'args') return 'args';
  if (field === 'auth') return index === 'scopes' ? 'scopes' : index === 'clientId' ? 'clientId' : 'auth';
  return typeof field === 'string' ? field : null;
}

/** A request's field path in the words the form uses for it. */
function fieldWords(path: readonly (string | number)[]): string | null {
  const key = fieldKey(path);
  if (key === null) return null;
  const row = /^(env|header)\.(\d+)\.(name|value)$/.exec(key);
  if (row) return `${row[1] === 'env' ? 'Environment variable' : 'Header'} ${Number(row[2]) + 1} ${row[3]}`;
  const words: Record<string, string> = {
    name: 'Name',
    command: 'Command',
    args: 'Arguments',
    cwd: 'Working directory',
    url: 'URL',
    clientId: 'Client id',
    scopes: 'Scopes',
    auth: 'Authentication',
    transport: 'Transport',
  };
  return words[key] ?? key;
}

/**
 * What is missing before the form can be sent, keyed by field: a name, the command or URL, a name
 * for every variable or header row that has one, a secret value that is not stored yet.
 *
 * Why before sending: an empty form should say what it needs, not be refused with a code.
 */
function missingFields(form: FormState, editing: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (!form.name.trim()) out.name = 'Enter a name: it is how this server appears in Warden.';
  if (form.transport === 'stdio' && !form.command.trim()) out.command = 'Enter the program to run, such as npx or uvx, or its full path.';
  if (form.transport === 'http' && !form.url.trim()) out.url = 'Enter the server’s address, such as https://example.com/mcp.';
  if (form.transport === 'http' && form.authKind === 'bearer' && !editing && form.bearer === '') out.bearer = 'Enter the token: it goes to the OS keychain.';
  const rows = (kind: 'env' | 'header', list: NamedRow[]) =>
    list.forEach((r, i) => {
      if (!r.name.trim()) out[`${kind}.${i}.name`] = kind === 'env' ? 'Enter the variable’s name, or remove this row.' : 'Enter the header’s name, or remove this row.';
      if (r.secret && !neverSecret(kind, r.name) && r.value === '' && !r.stored) out[`${kind}.${i}.value`] = 'Enter the secret value: it goes to the OS keychain.';
    });
  if (form.transport === 'stdio') rows('env', form.env);
  else rows('header', form.headers);
  return out;
}

interface NamedRow {
  name: string;
  value: string;
  secret: boolean;
  /** For edits: a secret that is already in the keychain (an empty value keeps it). */
  stored: boolean;
}

type AuthKind = 'none' | 'bearer' | 'oauth';

function rowsFrom(list: ReadonlyArray<{ name: string; value?: string; secret?: boolean }>): NamedRow[] {
  return list.map((e) => ({ name: e.name, value: e.value ?? '', secret: e.secret === true, stored: e.secret === true }));
}

/** Only a variable whose name says it holds a credential can be secret: the core refuses any other, so it is shown in full. */
const neverSecret = (kind: 'env' | 'header', name: string) => kind === 'env' && name.trim() !== '' && !mayBeSecretEnvName(name);
const envNeverSecret = (name: string) => neverSecret('env', name);

function RowsEditor({ rows, onChange, kind, problems }: { rows: NamedRow[]; onChange: (rows: NamedRow[]) => void; kind: 'env' | 'header'; problems: Record<string, string> }) {
  const update = (i: number, patch: Partial<NamedRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <div className="rows-editor" data-testid={`server-form-${kind}`}>
      {rows.map((row, i) => (
        <div className="row-edit" key={i}>
          <input
            className="input"
            aria-label={`${kind} name ${i + 1}`}
            placeholder={kind === 'env' ? 'NAME' : 'Header-Name'}
            value={row.name}
            onChange={(e) => update(i, { name: e.target.value })}
            {...describedBy(FORM, `${kind}.${i}.name`, problems)}
          />
          <input
            className="input"
            aria-label={`${kind} value ${i + 1}`}
            type={row.secret && !neverSecret(kind, row.name) ? 'password' : 'text'}
            autoComplete="off"
            placeholder={row.secret && row.stored ? 'stored in keychain (leave empty to keep)' : 'value'}
            value={row.value}
            onChange={(e) => update(i, { value: e.target.value })}
            {...describedBy(FORM, `${kind}.${i}.value`, problems)}
          />
          <label className="check">
            <input type="checkbox" checked={row.secret && !neverSecret(kind, row.name)} disabled={neverSecret(kind, row.name)} onChange={(e) => update(i, { secret: e.target.checked, stored: false })} /> secret
          </label>
          {neverSecret(kind, row.name) ? <span className="muted">shown in full: only a variable whose name says it holds a credential (such as GITHUB_TOKEN or OPENAI_API_KEY) can be secret</span> : null}
          <button type="button" className="button button-small" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            Remove
          </button>
          <FieldProblem formId={FORM} field={`${kind}.${i}.name`} problems={problems} />
          <FieldProblem formId={FORM} field={`${kind}.${i}.value`} problems={problems} />
        </div>
      ))}
      <button
        type="button"
        className="button button-small"
        onClick={() => onChange([...rows, { name: '', value: '', secret: false, stored: false }])}
        data-testid={`server-form-add-${kind}`}
      >
        Add {kind === 'env' ? 'variable' : 'header'}
      </button>
    </div>
  );
}

/** Builds the definition and the secrets to send; throws a plain Error naming the field on bad input. */
function buildRequest(form: FormState): { draft: ServerDraft; secrets: SecretInput[] } {
  const secrets: SecretInput[] = [];
  const collect = (rows: NamedRow[], secretName: (n: string) => string, plainOnly: (n: string) => boolean = () => false) =>
    rows.map((r) => {
      if (!r.secret || plainOnly(r.name)) return { name: r.name, value: r.value };
      if (r.value !== '') secrets.push({ name: secretName(r.name), value: r.value });
      else if (!r.stored) throw new Error(`${r.name || 'a secret value'}: enter the secret value (it goes to the OS keychain)`);
      return { name: r.name, secret: true };
    });
  if (form.transport === 'stdio') {
    const draft: ServerDraft = {
      name: form.name,
      transport: 'stdio',
      command: form.command,
      args: parseArgs(form.args),
      env: collect(form.env, envSecretName, envNeverSecret),
      ...(form.cwd.trim() ? { cwd: form.cwd } : {}),
    };
    return { draft, secrets };
  }
  const auth =
    form.authKind === 'oauth'
      ? {
          kind: 'oauth' as const,
          ...(form.clientId.trim() ? { clientId: form.clientId.trim() } : {}),
          ...(form.scopes.trim() ? { scopes: form.scopes.trim().split(/\s+/) } : {}),
        }
      : { kind: form.authKind };
  if (form.authKind === 'bearer' && form.bearer !== '') secrets.push({ name: BEARER_SECRET, value: form.bearer });
  const draft: ServerDraft = { name: form.name, transport: 'http', url: form.url, headers: collect(form.headers, headerSecretName), auth };
  return { draft, secrets };
}

interface FormState {
  name: string;
  transport: 'stdio' | 'http';
  command: string;
  args: string;
  cwd: string;
  env: NamedRow[];
  url: string;
  headers: NamedRow[];
  authKind: AuthKind;
  clientId: string;
  scopes: string;
  bearer: string;
}

function initialState(server: ServerView | null): FormState {
  const d = server?.definition;
  return {
    name: d?.name ?? '',
    transport: d?.transport === 'http' ? 'http' : 'stdio',
    command: d?.transport === 'stdio' ? d.command : '',
    args: d?.transport === 'stdio' ? d.args.join('\n') : '',
    cwd: d?.transport === 'stdio' ? (d.cwd ?? '') : '',
    env: d?.transport === 'stdio' ? rowsFrom(d.env) : [],
    url: d?.transport === 'http' ? d.url : '',
    headers: d?.transport === 'http' ? rowsFrom(d.headers) : [],
    authKind: d?.transport === 'http' ? d.auth.kind : 'none',
    clientId: d?.transport === 'http' && d.auth.kind === 'oauth' ? (d.auth.clientId ?? '') : '',
    scopes: d?.transport === 'http' && d.auth.kind === 'oauth' ? (d.auth.scopes ?? []).join(' ') : '',
    bearer: '',
  };
}

/**
 * The add/edit form. `server` null = add. Calls `onDone` after a successful save.
 *
 * Why a confirmation step for stdio: saving a local server allows that exact command to run on
 * this machine, so the person confirms the full command line, not a summary of it.
 */
export function ServerForm({ server, onDone }: { server: ServerView | null; onDone: (saved: ServerView | null) => void }) {
  const addServer = useAppStore((s) => s.addServer);
  const editServer = useAppStore((s) => s.editServer);
  const [form, setForm] = useState<FormState>(() => initialState(server));
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [missing, setMissing] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const formRef = useFocusFirstProblem<HTMLFormElement>(attempt);
  const patch = (p: Partial<FormState>) => {
    setForm({ ...form, ...p });
    setConfirming(false);
  };
  // Problems next to their fields: what the core refused, and what is missing (found here first).
  const problems = { ...problemsFromError(error, fieldKey, plainIssue), ...missing };
  const commandLine = form.transport === 'stdio' && form.command ? displayCommandLine(form.command, parseArgs(form.args)) : null;

  const save = async () => {
    setBusy(true);
    try {
      const { draft, secrets } = buildRequest(form);
      const saved = server
        ? await editServer(server.definition.id, draft, secrets, server.accounts[0]?.id)
        : await addServer(draft, secrets);
      // Drop every typed secret value before closing.
      setForm(initialState(null));
      onDone(saved);
    } catch (e) {
      setError(toShownError(e));
      setConfirming(false);
      setAttempt((n) => n + 1);
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const empty = missingFields(form, server !== null);
    setMissing(empty);
    if (Object.keys(empty).length > 0) {
      setConfirming(false);
      setAttempt((n) => n + 1);
      return;
    }
    if (form.transport === 'stdio' && !confirming) {
      setConfirming(true);
      return;
    }
    void save();
  };

  return (
    <form ref={formRef} className="card form" onSubmit={submit} data-testid="server-form">
      <h2>{server ? `Edit ${server.definition.name}` : 'Add a server'}</h2>
      <FormField formId={FORM} field="name" label="Name" problems={problems}>
        {(props) => <input className="input" data-testid="server-form-name" value={form.name} onChange={(e) => patch({ name: e.target.value })} {...props} />}
      </FormField>
      <fieldset className="field segmented" disabled={server !== null}>
        <legend>Transport</legend>
        <label className="check">
          <input type="radio" name="transport" checked={form.transport === 'stdio'} onChange={() => patch({ transport: 'stdio' })} /> Local
          (stdio)
        </label>
        <label className="check">
          <input type="radio" name="transport" data-testid="server-form-http" checked={form.transport === 'http'} onChange={() => patch({ transport: 'http' })} /> Remote
          (HTTP)
        </label>
      </fieldset>
      {form.transport === 'stdio' ? (
        <>
          <FormField formId={FORM} field="command" label="Command (run directly, never through a shell)" problems={problems}>
            {(props) => <input className="input mono" data-testid="server-form-command" value={form.command} onChange={(e) => patch({ command: e.target.value })} {...props} />}
          </FormField>
          <FormField formId={FORM} field="args" label="Arguments, one per line (exactly as typed)" problems={problems}>
            {(props) => <textarea className="input mono" rows={4} data-testid="server-form-args" value={form.args} onChange={(e) => patch({ args: e.target.value })} {...props} />}
          </FormField>
          <FormField formId={FORM} field="cwd" label="Working directory (optional)" problems={problems}>
            {(props) => <input className="input mono" data-testid="server-form-cwd" value={form.cwd} onChange={(e) => patch({ cwd: e.target.value })} {...props} />}
          </FormField>
          <div className="field">
            <span>Environment</span>
            <RowsEditor kind="env" rows={form.env} onChange={(env) => patch({ env })} problems={problems} />
          </div>
        </>
      ) : (
        <>
          <FormField formId={FORM} field="url" label="URL (https, or http on this machine only)" problems={problems}>
            {(props) => <input className="input mono" data-testid="server-form-url" value={form.url} onChange={(e) => patch({ url: e.target.value })} {...props} />}
          </FormField>
          <div className="field">
            <span>Headers</span>
            <RowsEditor kind="header" rows={form.headers} onChange={(headers) => patch({ headers })} problems={problems} />
          </div>
          <fieldset className="field segmented">
            <legend>Authentication</legend>
            {(['none', 'bearer', 'oauth'] as const).map((k) => (
              <label className="check" key={k}>
                <input type="radio" name="auth" checked={form.authKind === k} onChange={() => patch({ authKind: k })} />{' '}
                {k === 'none' ? 'None' : k === 'bearer' ? 'Bearer token' : 'OAuth'}
              </label>
            ))}
          </fieldset>
          {form.authKind === 'bearer' ? (
            <FormField formId={FORM} field="bearer" label={`Bearer token (stored in the OS keychain${server ? '; leave empty to keep the stored one' : ''})`} problems={problems}>
              {(props) => <input className="input" type="password" autoComplete="off" value={form.bearer} onChange={(e) => patch({ bearer: e.target.value })} {...props} />}
            </FormField>
          ) : null}
          {form.authKind === 'oauth' ? (
            <div className="field-row">
              <FormField formId={FORM} field="clientId" label="Client id (optional; empty = dynamic registration)" problems={problems}>
                {(props) => <input className="input" value={form.clientId} onChange={(e) => patch({ clientId: e.target.value })} {...props} />}
              </FormField>
              <FormField formId={FORM} field="scopes" label="Scopes (space separated, optional)" problems={problems}>
                {(props) => <input className="input" value={form.scopes} onChange={(e) => patch({ scopes: e.target.value })} {...props} />}
              </FormField>
            </div>
          ) : null}
        </>
      )}
      {commandLine !== null ? (
        <div className={confirming ? 'commandline commandline-confirm' : 'commandline'}>
          <span className="commandline-label">{confirming ? 'Saving allows exactly this command to run on this computer:' : 'Will run exactly:'}</span>
          <pre data-testid="server-form-commandline">{commandLine}</pre>
          {form.cwd.trim() ? <span className="muted">in {form.cwd}</span> : null}
        </div>
      ) : null}
      <ErrorNote error={error} testId="server-form-error" fieldName={fieldWords} />
      {Object.keys(missing).length > 0 ? (
        <p className="error-note error-sentence" role="alert" data-testid="server-form-missing">
          {Object.keys(missing).length === 1 ? 'One thing is missing' : `${Object.keys(missing).length} things are missing`}: see the marked {Object.keys(missing).length === 1 ? 'field' : 'fields'} above.
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="server-form-save">
          {form.transport === 'stdio' ? (confirming ? 'Confirm and save' : 'Review command…') : 'Save'}
        </button>
        <button type="button" className="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
