/**
 * Models: the model providers Warden can chat through. A person adds a provider (Anthropic, or
 * any OpenAI-compatible server such as OpenAI, OpenRouter, Ollama, LM Studio or vLLM), enters its
 * API key, picks the default model and tests the connection.
 *
 * Self-contained (it loads and follows the providers itself), so the Models view and a later
 * Settings view can both host it. An API key lives in a form's component state only until it is
 * sent; it goes straight to main and the OS keychain, the field is emptied, and afterwards the
 * panel can only say that a key is saved — nothing in this window can read it back.
 */
import { useEffect, useState, type FormEvent } from 'react';
import type { ModelInfoView } from '../../../shared/contract/models';
import type { ProviderKind, ProviderView } from '../../../shared/domain/model-providers';
import { toShownError, type ShownError } from '../api';
import { ErrorNote, Words } from '../components/common';
import { describedBy, FieldProblem, FormField, problemsFromError } from '../components/form-field';
import { explainError, plainIssue } from '../errors';
import { useAppStore } from '../store';
import type { ProviderTestResult } from '../store/models-slice';

/** A starting point for the add form: which API it speaks and where it usually lives. */
interface Preset {
  id: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  /** What the person should know about keys for this one. */
  keyHint: string;
}

const PRESETS: readonly Preset[] = [
  { id: 'anthropic', name: 'Anthropic', kind: 'anthropic', baseUrl: 'https://api.anthropic.com', keyHint: 'Needs an API key from the Anthropic Console.' },
  { id: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'https://api.openai.com/v1', keyHint: 'Needs an API key from the OpenAI platform.' },
  { id: 'openrouter', name: 'OpenRouter', kind: 'openai', baseUrl: 'https://openrouter.ai/api/v1', keyHint: 'Needs an OpenRouter API key.' },
  { id: 'ollama', name: 'Ollama on this computer', kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', keyHint: 'Runs on this computer; usually no key.' },
  { id: 'lmstudio', name: 'LM Studio on this computer', kind: 'openai', baseUrl: 'http://127.0.0.1:1234/v1', keyHint: 'Runs on this computer; usually no key.' },
  { id: 'custom', name: 'Other OpenAI-compatible server (vLLM, …)', kind: 'openai', baseUrl: '', keyHint: 'Enter a key if the server asks for one.' },
];

const KIND_LABELS: Record<ProviderView['kind'], string> = {
  anthropic: 'Anthropic Messages API',
  openai: 'OpenAI-compatible API',
  demo: 'Built in, offline',
};

/** The host part of a URL for sentences ("api.openai.com"); the input itself when it is not a URL. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Runs an action, reporting a failure instead of throwing. */
function useAction(): [ShownError | null, (work: () => Promise<unknown>) => Promise<void>, boolean] {
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>) => {
    setError(null);
    setBusy(true);
    try {
      await work();
    } catch (e) {
      setError(toShownError(e));
    } finally {
      setBusy(false);
    }
  };
  return [error, run, busy];
}

/** The add form's fields as the core names them in a refused request, and in words. */
const ADD_FIELDS: Record<string, string> = { label: 'Name', baseUrl: 'Base URL', apiKey: 'API key' };
const ADD_FORM = 'models-add';

/** The add-provider form. The key is sent with the add request and then forgotten. */
function AddProviderForm({ onDone }: { onDone: () => void }) {
  const addProvider = useAppStore((s) => s.addProvider);
  const [presetId, setPresetId] = useState(PRESETS[0]!.id);
  const preset = PRESETS.find((p) => p.id === presetId)!;
  const [label, setLabel] = useState(preset.name);
  const [baseUrl, setBaseUrl] = useState(preset.baseUrl);
  const [apiKey, setApiKey] = useState('');
  const [missing, setMissing] = useState<Record<string, string>>({});
  const [error, run, busy] = useAction();
  // What the core refused, next to the field it is about; what is missing, found before sending.
  const fieldKey = (path: readonly (string | number)[]) => (typeof path[0] === 'string' && path[0] in ADD_FIELDS ? path[0] : null);
  const problems = { ...problemsFromError(error, fieldKey, plainIssue), ...missing };

  const choose = (id: string) => {
    const next = PRESETS.find((p) => p.id === id)!;
    setPresetId(id);
    setLabel(next.id === 'custom' ? '' : next.name);
    setBaseUrl(next.baseUrl);
    setMissing({});
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const key = apiKey;
    const empty: Record<string, string> = {};
    if (!label.trim()) empty.label = 'Enter a name: it is how this provider appears in the model picker.';
    if (!baseUrl.trim()) empty.baseUrl = 'Enter the address of the server, such as https://api.example.com/v1.';
    setMissing(empty);
    if (Object.keys(empty).length) return;
    void run(async () => {
      await addProvider({ kind: preset.kind, label, baseUrl, ...(key.trim() ? { apiKey: key } : {}) });
      setApiKey('');
      onDone();
    });
  };

  return (
    <form className="card form" onSubmit={submit} data-testid="models-add-form" aria-labelledby="models-add-title">
      <h2 id="models-add-title">Add a model provider</h2>
      <label className="field">
        <span>Provider</span>
        <select className="input" data-testid="models-add-preset" value={presetId} onChange={(e) => choose(e.target.value)}>
          {PRESETS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
        <span className="muted small">
          Speaks the {KIND_LABELS[preset.kind]}. {preset.keyHint}
        </span>
      </label>
      <FormField formId={ADD_FORM} field="label" label="Name (shown in the model picker)" problems={problems}>
        {(props) => <input className="input" data-testid="models-add-label" value={label} onChange={(e) => setLabel(e.target.value)} {...props} />}
      </FormField>
      <FormField formId={ADD_FORM} field="baseUrl" label="Base URL (https, or http only on this computer)" problems={problems}>
        {(props) => <input className="input mono" data-testid="models-add-base-url" value={baseUrl} placeholder="https://…/v1" onChange={(e) => setBaseUrl(e.target.value)} {...props} />}
      </FormField>
      <FormField formId={ADD_FORM} field="apiKey" label={`API key (goes straight to the OS keychain; it is only ever sent to ${hostOf(baseUrl) || 'this host'})`} problems={problems}>
        {(props) => (
          <input className="input" type="password" autoComplete="off" spellCheck={false} data-testid="models-add-key" value={apiKey} placeholder="Leave empty if the server needs none" onChange={(e) => setApiKey(e.target.value)} {...props} />
        )}
      </FormField>
      <ErrorNote error={error} testId="models-add-error" fieldName={(path) => ADD_FIELDS[String(path[0])] ?? null} />
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={busy} data-testid="models-add-save">
          Add provider
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Key state and Enter/Replace/Remove key. Shows only whether a key is saved, never the key. */
function KeyControls({ provider }: { provider: ProviderView }) {
  const setProviderKey = useAppStore((s) => s.setProviderKey);
  const clearProviderKey = useAppStore((s) => s.clearProviderKey);
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState('');
  const [missing, setMissing] = useState<Record<string, string>>({});
  const [error, run, busy] = useAction();
  const id = provider.providerId;
  const host = provider.baseUrl ? hostOf(provider.baseUrl) : '';
  const formId = `models-${id}-key-form`;
  return (
    <div className="model-key">
      <span className="model-key-state" data-testid={`models-${id}-key`} data-has-key={provider.hasKey ? 'true' : 'false'}>
        {provider.hasKey ? (
          <span className="pill pill-connected">Key saved in the keychain</span>
        ) : provider.keyRequired ? (
          <span className="pill pill-warn">No key yet</span>
        ) : (
          <span className="pill pill-disconnected">No key (usually not needed on this computer)</span>
        )}
        {provider.hasKey ? <span className="muted small">Sent only to {host}.</span> : null}
      </span>
      {editing ? (
        <form
          className="inline-actions"
          onSubmit={(e) => {
            e.preventDefault();
            const key = value;
            if (key.trim() === '') {
              setMissing({ key: `Paste the API key for ${host || provider.label} first.` });
              return;
            }
            setMissing({});
            setValue('');
            void run(async () => {
              await setProviderKey(id, key);
              setEditing(false);
            });
          }}
        >
          <input
            className="input"
            type="password"
            autoComplete="off"
            spellCheck={false}
            aria-label={`API key for ${provider.label}`}
            data-testid={`models-${id}-key-input`}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            {...describedBy(formId, 'key', missing)}
          />
          <button type="submit" className="button button-small button-primary" disabled={busy} data-testid={`models-${id}-key-save`}>
            Save key
          </button>
          <button type="button" className="button button-small" onClick={() => (setValue(''), setMissing({}), setEditing(false))}>
            Cancel
          </button>
          <FieldProblem formId={formId} field="key" problems={missing} />
        </form>
      ) : (
        <span className="inline-actions">
          <button type="button" className="button button-small" data-testid={`models-${id}-key-edit`} onClick={() => setEditing(true)}>
            {provider.hasKey ? 'Replace key…' : 'Enter key…'}
          </button>
          {provider.hasKey ? (
            <button type="button" className="button button-small" data-testid={`models-${id}-key-clear`} onClick={() => run(() => clearProviderKey(id))}>
              Remove key
            </button>
          ) : null}
        </span>
      )}
      <ErrorNote error={error} testId={`models-${id}-key-error`} />
    </div>
  );
}

/** The default model: chosen from the provider's list when it can list them, typed otherwise. */
function DefaultModel({ provider }: { provider: ProviderView }) {
  const listProviderModels = useAppStore((s) => s.listProviderModels);
  const updateProvider = useAppStore((s) => s.updateProvider);
  const [models, setModels] = useState<ModelInfoView[] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [problem, setProblem] = useState<ShownError | null>(null);
  const [typed, setTyped] = useState(provider.defaultModel ?? '');
  const [missing, setMissing] = useState<Record<string, string>>({});
  const [error, run, busy] = useAction();
  const id = provider.providerId;
  const formId = `models-${id}-model-form`;

  useEffect(() => setTyped(provider.defaultModel ?? ''), [provider.defaultModel]);

  const load = () =>
    run(async () => {
      setProblem(null);
      const listed = await listProviderModels(id);
      if (listed.problem) {
        setProblem({ code: listed.problem.code, message: listed.problem.message, source: 'model', ...(listed.problem.failure ? { failure: listed.problem.failure } : {}) });
        return;
      }
      setModels(listed.models);
      setNote(listed.models === null ? 'This provider cannot list its models; type the model id.' : `${listed.models.length} models available.`);
    });
  const save = (model: string) => run(() => updateProvider({ providerId: id, defaultModel: model.trim() === '' ? null : model.trim() }));

  return (
    <div className="model-default" data-testid={`models-${id}-default`}>
      <span>
        <span className="model-default-label">Default model:</span>{' '}
        <strong data-testid={`models-${id}-default-model`}>{provider.defaultModel ?? 'none chosen yet'}</strong>
      </span>
      {provider.builtin ? null : (
        <div className="inline-actions">
          {models && models.length > 0 ? (
            <select
              className="input"
              aria-label={`Default model for ${provider.label}`}
              data-testid={`models-${id}-model-select`}
              value={provider.defaultModel ?? ''}
              disabled={busy}
              onChange={(e) => void save(e.target.value)}
            >
              <option value="">Choose a model…</option>
              {models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.label === m.id ? m.id : `${m.label} (${m.id})`}
                </option>
              ))}
            </select>
          ) : (
            <form
              className="inline-actions"
              onSubmit={(e) => {
                e.preventDefault();
                if (typed.trim() === '') {
                  setMissing({ model: 'Type the id of a model this provider offers, such as llama3.1:8b.' });
                  return;
                }
                setMissing({});
                void save(typed);
              }}
            >
              <input
                className="input mono"
                aria-label={`Model id for ${provider.label}`}
                data-testid={`models-${id}-model-input`}
                placeholder="model id, e.g. llama3.1:8b"
                value={typed}
                onChange={(e) => setTyped(e.target.value)}
                {...describedBy(formId, 'model', missing)}
              />
              <button type="submit" className="button button-small" disabled={busy}>
                Use this model
              </button>
              <FieldProblem formId={formId} field="model" problems={missing} />
            </form>
          )}
          <button type="button" className="button button-small" data-testid={`models-${id}-load-models`} disabled={busy} onClick={() => void load()}>
            {models ? 'Reload the list' : 'Choose from the provider’s list'}
          </button>
        </div>
      )}
      {note ? <p className="muted small">{note}</p> : null}
      <ErrorNote error={problem ?? error} testId={`models-${id}-models-error`} />
    </div>
  );
}

/** Test connection: what was checked and what came back, in one sentence. */
function TestConnection({ provider }: { provider: ProviderView }) {
  const testProvider = useAppStore((s) => s.testProvider);
  const [result, setResult] = useState<ProviderTestResult | null>(null);
  const [error, run, busy] = useAction();
  const id = provider.providerId;
  return (
    <div className="model-test">
      <button
        type="button"
        className="button button-small"
        data-testid={`models-${id}-test`}
        disabled={busy}
        onClick={() =>
          void run(async () => {
            setResult(null);
            setResult(await testProvider(id));
          })
        }
      >
        {busy ? 'Testing…' : 'Test connection'}
      </button>
      {result ? (
        <p className={result.ok ? 'ok-note' : 'error-note'} role="status" data-testid={`models-${id}-test-result`} data-ok={result.ok ? 'true' : 'false'}>
          {result.problem ? (
            <strong>
              <Words text={explainError({ code: result.problem.code, message: '', source: 'model', ...(result.problem.failure ? { failure: result.problem.failure } : {}) }).sentence} />
            </strong>
          ) : null}{' '}
          {result.message}{' '}
          <span className="muted small">({result.latencyMs} ms)</span>
        </p>
      ) : null}
      <ErrorNote error={error} />
    </div>
  );
}

/** Rename or move a provider. Moving to another host removes the saved key, and the form says so first. */
function EditProvider({ provider, onDone }: { provider: ProviderView; onDone: (keyRemoved: boolean) => void }) {
  const updateProvider = useAppStore((s) => s.updateProvider);
  const [label, setLabel] = useState(provider.label);
  const [baseUrl, setBaseUrl] = useState(provider.baseUrl ?? '');
  const [missing, setMissing] = useState<Record<string, string>>({});
  const [error, run, busy] = useAction();
  const id = provider.providerId;
  const formId = `models-${id}-edit`;
  const fieldKey = (path: readonly (string | number)[]) => (path[0] === 'label' || path[0] === 'baseUrl' ? path[0] : null);
  const problems = { ...problemsFromError(error, fieldKey, plainIssue), ...missing };
  let hostChanges = false;
  try {
    hostChanges = provider.hasKey && new URL(baseUrl).origin !== new URL(provider.baseUrl ?? '').origin;
  } catch {
    hostChanges = false;
  }
  return (
    <form
      className="form model-edit"
      data-testid={`models-${id}-edit-form`}
      onSubmit={(e) => {
        e.preventDefault();
        const empty: Record<string, string> = {};
        if (!label.trim()) empty.label = 'Enter a name: it is how this provider appears in the model picker.';
        if (!baseUrl.trim()) empty.baseUrl = 'Enter the address of the server, such as https://api.example.com/v1.';
        setMissing(empty);
        if (Object.keys(empty).length) return;
        void run(async () => {
          const { keyRemoved } = await updateProvider({ providerId: id, label, ...(baseUrl !== provider.baseUrl ? { baseUrl } : {}) });
          onDone(keyRemoved);
        });
      }}
    >
      <FormField formId={formId} field="label" label="Name" problems={problems}>
        {(props) => <input className="input" data-testid={`models-${id}-edit-label`} value={label} onChange={(e) => setLabel(e.target.value)} {...props} />}
      </FormField>
      <FormField formId={formId} field="baseUrl" label="Base URL" problems={problems}>
        {(props) => <input className="input mono" data-testid={`models-${id}-edit-base-url`} value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} {...props} />}
      </FormField>
      {hostChanges ? (
        <p className="callout" data-testid={`models-${id}-edit-key-warning`}>
          The key saved for {hostOf(provider.baseUrl ?? '')} will be removed: a key is only ever sent to the host it was entered for. Enter the key for {hostOf(baseUrl)} after saving.
        </p>
      ) : null}
      <ErrorNote error={error} testId={`models-${id}-edit-error`} fieldName={(path) => ADD_FIELDS[String(path[0])] ?? null} />
      <div className="form-actions">
        <button type="submit" className="button button-small button-primary" disabled={busy} data-testid={`models-${id}-edit-save`}>
          Save
        </button>
        <button type="button" className="button button-small" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function ProviderCard({ provider }: { provider: ProviderView }) {
  const removeProvider = useAppStore((s) => s.removeProvider);
  const [editing, setEditing] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, run] = useAction();
  const id = provider.providerId;
  // The "key removed" notice asks for a new key; once one is saved it has done its job.
  useEffect(() => {
    if (provider.hasKey) setNotice(null);
  }, [provider.hasKey]);
  return (
    <article className="card model-card" data-testid={`models-${id}`} aria-labelledby={`models-${id}-title`}>
      <header className="card-head">
        <h2 id={`models-${id}-title`}>{provider.label}</h2>
        <span className="pill pill-hint">{KIND_LABELS[provider.kind]}</span>
        {provider.builtin ? null : (
          <span className="inline-actions push-right">
            <button type="button" className="button button-small" data-testid={`models-${id}-edit`} onClick={() => setEditing(!editing)}>
              Edit…
            </button>
            {confirmRemove ? (
              <>
                <button type="button" className="button button-small button-danger" data-testid={`models-${id}-remove-confirm`} onClick={() => run(() => removeProvider(id))}>
                  Remove provider and its key
                </button>
                <button type="button" className="button button-small" onClick={() => setConfirmRemove(false)}>
                  Keep
                </button>
              </>
            ) : (
              <button type="button" className="button button-small button-danger" data-testid={`models-${id}-remove`} onClick={() => setConfirmRemove(true)}>
                Remove…
              </button>
            )}
          </span>
        )}
      </header>
      {provider.builtin ? (
        <p className="muted">Runs inside Warden with no network and no key. Its replies are a fixed script, so you can try tools and approvals safely.</p>
      ) : (
        <p className="mono small model-url" data-testid={`models-${id}-base-url`}>
          {provider.baseUrl}
        </p>
      )}
      {editing ? (
        <EditProvider
          provider={provider}
          onDone={(keyRemoved) => {
            setEditing(false);
            setNotice(keyRemoved ? 'The address moved to another host, so the saved key was removed. Enter the key for the new host.' : null);
          }}
        />
      ) : null}
      {notice ? (
        <p className="callout" role="status" data-testid={`models-${id}-notice`}>
          {notice}
        </p>
      ) : null}
      {provider.builtin ? null : <KeyControls provider={provider} />}
      <DefaultModel provider={provider} />
      {provider.builtin ? null : <TestConnection provider={provider} />}
      <ErrorNote error={error} />
    </article>
  );
}

/**
 * The providers and the add form; loads them on mount and follows `models:changed` while shown.
 */
export function ModelsPanel() {
  const providers = useAppStore((s) => s.providers);
  const settingsProblem = useAppStore((s) => s.modelsSettingsProblem);
  const keychainProblem = useAppStore((s) => s.modelsKeychainProblem);
  const error = useAppStore((s) => s.modelsError);
  const refreshProviders = useAppStore((s) => s.refreshProviders);
  const watchModels = useAppStore((s) => s.watchModels);
  const [adding, setAdding] = useState(false);

  useEffect(() => {
    const off = watchModels();
    void refreshProviders();
    return off;
  }, [watchModels, refreshProviders]);

  return (
    <div className="models-panel" data-testid="models-panel">
      {settingsProblem ? (
        <p className="banner banner-error" role="alert">
          {settingsProblem}
        </p>
      ) : null}
      {keychainProblem ? (
        <p className="banner banner-error" role="alert">
          {keychainProblem}
        </p>
      ) : null}
      <ErrorNote error={error} />
      <div className="toolbar">
        {adding ? null : (
          <button type="button" className="button button-primary" data-testid="models-add" onClick={() => setAdding(true)}>
            Add a provider…
          </button>
        )}
      </div>
      {adding ? <AddProviderForm onDone={() => setAdding(false)} /> : null}
      <div className="model-list">
        {providers.map((p) => (
          <ProviderCard key={p.providerId} provider={p} />
        ))}
      </div>
      {providers.every((p) => p.builtin) && !adding ? (
        <p className="empty" data-testid="models-empty">
          No provider of your own yet. Add one to chat with Anthropic, OpenAI or a model on this computer.
        </p>
      ) : null}
    </div>
  );
}
