/**
 * What a connected server offers besides tools, in its account panel (Servers → server details):
 * its resources (page by page) and resource templates, its prompts, and the level of the log
 * messages it sends. Reading a resource or getting a prompt shows the server's whole text first,
 * marked as the server's; only then can the person attach it to a chat message, where it goes to
 * the model as the server's untrusted text (never as the person's words).
 *
 * Arguments of prompts and templates are filled in with labelled fields (the Run form's field
 * pattern), with the server's suggestions (completions) offered as a list under each field.
 */
import { useEffect, useState, type FormEvent } from 'react';
import type { LogLevel, PromptGotView, PromptView, ResourceReadView, ResourceTemplateView, ResourceView, ServerFeaturesView } from '../../../shared/contract/server-data';
import { expandTemplate } from '../../../shared/domain/uri-template';
import { getWardenApi, toShownError, type ShownError } from '../api';
import { ErrorNote, ServerClaim } from '../components/common';
import { FormField } from '../components/form-field';
import { useAppStore } from '../store';
import type { AppState } from '../store/types';
import { formatBytes } from './view-helpers';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

type Key = { serverId: string; accountId: string };

/** Runs an action and keeps its error for the note under it. */
function useErrand(): [ShownError | null, (work: () => Promise<unknown>) => Promise<void>] {
  const [error, setError] = useState<ShownError | null>(null);
  return [
    error,
    async (work) => {
      try {
        setError(null);
        await work();
      } catch (e) {
        setError(toShownError(e));
      }
    },
  ];
}

/**
 * Listens to a server's notices through the bridge; returns the way to stop. Without the bridge
 * there is nothing to hear (the core-error banner says why) and the view still draws.
 */
function onServerNotice(listen: (api: ReturnType<typeof getWardenApi>) => Array<() => void>): () => void {
  let offs: Array<() => void>;
  try {
    offs = listen(getWardenApi());
  } catch {
    return () => undefined;
  }
  return () => {
    for (const off of offs) off();
  };
}

export function ServerDataPanel({ serverId, accountId, serverName, testPrefix }: Key & { serverName: string; testPrefix: string }) {
  const serverFeatures = useAppStore((s) => s.serverFeatures);
  const [features, setFeatures] = useState<ServerFeaturesView | null>(null);
  const [error, run] = useErrand();
  useEffect(() => {
    void run(async () => setFeatures(await serverFeatures(serverId, accountId)));
  }, [serverId, accountId]);
  if (error) return <ErrorNote error={error} />;
  if (!features || (!features.resources && !features.prompts && !features.logging)) return null;
  const key = { serverId, accountId };
  return (
    <div className="server-data" data-testid={`${testPrefix}-data`}>
      {features.logging ? <LogLevelPicker {...key} initial={features.logLevel} serverName={serverName} testPrefix={testPrefix} /> : null}
      {features.resources ? <Resources {...key} serverName={serverName} features={features} testPrefix={testPrefix} /> : null}
      {features.prompts ? <Prompts {...key} serverName={serverName} completions={features.completions} testPrefix={testPrefix} /> : null}
    </div>
  );
}

function LogLevelPicker({ serverId, accountId, initial, serverName, testPrefix }: Key & { initial: LogLevel; serverName: string; testPrefix: string }) {
  const setLogLevel = useAppStore((s) => s.setLogLevel);
  const [level, setLevel] = useState<LogLevel>(initial);
  const [error, run] = useErrand();
  const id = `${testPrefix}-log-level`;
  return (
    <div className="field field-inline">
      <label htmlFor={id}>Log messages from {serverName}, from level</label>
      <select
        id={id}
        className="input"
        value={level}
        data-testid={id}
        onChange={(e) => {
          const next = e.target.value as LogLevel;
          setLevel(next);
          void run(() => setLogLevel(serverId, accountId, next));
        }}
      >
        {LEVELS.map((l) => (
          <option key={l} value={l}>
            {l}
          </option>
        ))}
      </select>
      <p className="field-hint">They appear in this account&apos;s log, marked [server].</p>
      <ErrorNote error={error} />
    </div>
  );
}

// ---- resources --------------------------------------------------------------------------------

function Resources({ serverId, accountId, serverName, features, testPrefix }: Key & { serverName: string; features: ServerFeaturesView; testPrefix: string }) {
  const listResources = useAppStore((s) => s.listResources);
  const listTemplates = useAppStore((s) => s.listTemplates);
  const readResource = useAppStore((s) => s.readResource);
  const [resources, setResources] = useState<ResourceView[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [templates, setTemplates] = useState<ResourceTemplateView[]>([]);
  const [read, setRead] = useState<ResourceReadView | null>(null);
  const [filling, setFilling] = useState<string | null>(null);
  const [error, run] = useErrand();
  const more = (after?: string) =>
    run(async () => {
      const page = await listResources({ serverId, accountId, ...(after ? { cursor: after } : {}) });
      setResources((r) => (after ? [...r, ...page.resources] : page.resources));
      setCursor(page.nextCursor);
    });
  useEffect(() => {
    void more();
    void run(async () => setTemplates((await listTemplates({ serverId, accountId })).templates));
  }, [serverId, accountId]);
  const [shownUri, setShownUri] = useState<string | null>(null);
  const open = (uri: string) =>
    run(async () => {
      setRead(await readResource({ serverId, accountId, uri }));
      setShownUri(uri);
    });
  // The server says its list changed: list again from the first page. A followed resource that
  // changed while it is shown is read again, so what is shown is what the server has now.
  useEffect(
    () =>
      onServerNotice((api) => [
        api.resources.onListChanged((e) => {
          if (e.serverId !== serverId || e.accountId !== accountId) return;
          void more();
          void run(async () => setTemplates((await listTemplates({ serverId, accountId })).templates));
        }),
        api.resources.onUpdated((e) => {
          if (e.serverId === serverId && e.accountId === accountId && e.uri === shownUri) void open(e.uri);
        }),
      ]),
    [serverId, accountId, shownUri],
  );
  return (
    <section className="server-data-section" aria-label={`Resources of ${serverName}`} data-testid={`${testPrefix}-resources`}>
      <h3>Resources</h3>
      <ErrorNote error={error} />
      {resources.length === 0 ? <p className="muted">No resources listed.</p> : null}
      <ul className="tool-list">
        {resources.map((r) => (
          <li key={r.displayUri} className="tool-item">
            <div className="tool-head">
              <strong>{r.title ?? r.name}</strong>
              <code className="resource-uri">{r.displayUri}</code>
              <span className="inline-actions push-right">
                {features.subscribe && r.uri ? <FollowButton serverId={serverId} accountId={accountId} uri={r.uri} name={r.title ?? r.name} /> : null}
                <button type="button" className="button button-small" disabled={!r.uri} onClick={() => void open(r.uri)} aria-label={`Read ${r.title ?? r.name}`}>
                  Read
                </button>
              </span>
            </div>
            {r.description ? (
              <div className="tool-desc">
                <ServerClaim>{r.description}</ServerClaim>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      {cursor ? (
        <button type="button" className="button button-small" onClick={() => void more(cursor)} data-testid={`${testPrefix}-resources-more`}>
          Show more resources
        </button>
      ) : null}
      {templates.length > 0 ? (
        <>
          <h4>Resource templates</h4>
          <ul className="tool-list">
            {templates.map((t) => (
              <li key={t.displayTemplate} className="tool-item">
                <div className="tool-head">
                  <strong>{t.title ?? t.name}</strong>
                  <code className="resource-uri">{t.displayTemplate}</code>
                  <button type="button" className="button button-small push-right" disabled={!t.uriTemplate} onClick={() => setFilling(filling === t.uriTemplate ? null : t.uriTemplate)}>
                    Fill in…
                  </button>
                </div>
                {t.description ? (
                  <div className="tool-desc">
                    <ServerClaim>{t.description}</ServerClaim>
                  </div>
                ) : null}
                {filling === t.uriTemplate ? (
                  <ArgumentsForm
                    formId={`${testPrefix}-template-${t.name}`.replace(/[^a-zA-Z0-9_-]/g, '-')}
                    fields={t.variables.map((name) => ({ name, description: null, required: true }))}
                    submitLabel="Read"
                    suggest={features.completions ? { serverId, accountId, ref: { type: 'resource-template', uriTemplate: t.uriTemplate } } : null}
                    onSubmit={(values) => open(expandTemplate(t.uriTemplate, values))}
                  />
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {read ? (
        <ReadPreview
          read={read}
          onClose={() => {
            setRead(null);
            setShownUri(null);
          }}
          testPrefix={testPrefix}
        />
      ) : null}
    </section>
  );
}

function FollowButton({ serverId, accountId, uri, name }: Key & { uri: string; name: string }) {
  const followResource = useAppStore((s) => s.followResource);
  const [following, setFollowing] = useState(false);
  const [error, run] = useErrand();
  return (
    <>
      <button
        type="button"
        className="button button-small"
        aria-pressed={following}
        aria-label={`${following ? 'Stop following' : 'Follow'} changes of ${name}`}
        onClick={() => void run(async () => setFollowing(await followResource({ serverId, accountId, uri }, !following)))}
      >
        {following ? 'Following changes' : 'Follow changes'}
      </button>
      <ErrorNote error={error} />
    </>
  );
}

/** How much of the server's text was kept, when it was cut. */
function CutNote({ truncated }: { truncated: ResourceReadView['truncated'] }) {
  if (!truncated) return null;
  return (
    <p className="muted small">
      Cut to {formatBytes(truncated.keptBytes)} of {formatBytes(truncated.totalBytes)}.
    </p>
  );
}

/** Attach the shown text to the next chat message (by the core's attachment id), or close it. */
function AttachActions({ attachment, label, testId, onClose }: { attachment: Parameters<AppState['attachToChat']>[0]; label: string; testId: string; onClose: () => void }) {
  const attachToChat = useAppStore((s) => s.attachToChat);
  const navigate = useAppStore((s) => s.navigate);
  return (
    <div className="inline-actions">
      <button
        type="button"
        className="button button-primary button-small"
        data-testid={testId}
        onClick={() => {
          attachToChat(attachment);
          navigate('chat');
        }}
      >
        {label}
      </button>
      <button type="button" className="button button-small" onClick={onClose}>
        Close
      </button>
    </div>
  );
}

/** What a person sees before attaching: the server's text, marked as the server's. */
function ReadPreview({ read, onClose, testPrefix }: { read: ResourceReadView; onClose: () => void; testPrefix: string }) {
  return (
    <div className="server-text" data-testid={`${testPrefix}-read`}>
      <p className="server-text-label">
        <strong>Written by the server {read.serverLabel}</strong> ({read.accountLabel}) — <code>{read.displayUri}</code>. Its own words, not Warden&apos;s and not yours.
      </p>
      {read.flags.length > 0 ? (
        <p className="answer-flag" role="note">
          <strong>Reads like instructions to an AI model.</strong> A model is given it only as the server&apos;s untrusted text. It {read.flags.join('; ')}.
        </p>
      ) : null}
      <CutNote truncated={read.truncated} />
      {read.contents.map((c, i) =>
        c.text !== null ? (
          <pre key={i} className="server-text-body" tabIndex={0} aria-label={`Text of ${c.displayUri}`}>
            {c.text}
          </pre>
        ) : (
          <p key={i} className="muted">
            Binary content{c.mimeType ? ` (${c.mimeType})` : ''}, {formatBytes(c.binaryBytes ?? 0)}: not shown, and not given to a model.
          </p>
        ),
      )}
      <AttachActions
        attachment={{ attachmentId: read.attachmentId, kind: 'resource', serverLabel: read.serverLabel, title: read.displayUri }}
        label="Attach to a chat message"
        testId={`${testPrefix}-read-attach`}
        onClose={onClose}
      />
    </div>
  );
}

// ---- prompts ----------------------------------------------------------------------------------

function Prompts({ serverId, accountId, serverName, completions, testPrefix }: Key & { serverName: string; completions: boolean; testPrefix: string }) {
  const listPrompts = useAppStore((s) => s.listPrompts);
  const getPrompt = useAppStore((s) => s.getPrompt);
  const [prompts, setPrompts] = useState<PromptView[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [using, setUsing] = useState<string | null>(null);
  const [got, setGot] = useState<PromptGotView | null>(null);
  const [error, run] = useErrand();
  const more = (after?: string) =>
    run(async () => {
      const page = await listPrompts({ serverId, accountId, ...(after ? { cursor: after } : {}) });
      setPrompts((p) => (after ? [...p, ...page.prompts] : page.prompts));
      setCursor(page.nextCursor);
    });
  useEffect(() => {
    void more();
  }, [serverId, accountId]);
  useEffect(
    () =>
      onServerNotice((api) => [
        api.prompts.onListChanged((e) => {
          if (e.serverId === serverId && e.accountId === accountId) void more();
        }),
      ]),
    [serverId, accountId],
  );
  return (
    <section className="server-data-section" aria-label={`Prompts of ${serverName}`} data-testid={`${testPrefix}-prompts`}>
      <h3>Prompts</h3>
      <ErrorNote error={error} />
      {prompts.length === 0 ? <p className="muted">No prompts listed.</p> : null}
      <ul className="tool-list">
        {prompts.map((p) => (
          <li key={p.name} className="tool-item" data-testid={`${testPrefix}-prompt-${p.name}`.replace(/[^a-zA-Z0-9_-]/g, '-')}>
            <div className="tool-head">
              <strong>{p.title}</strong>
              <button type="button" className="button button-small push-right" aria-label={`Use the prompt ${p.title}`} onClick={() => setUsing(using === p.name ? null : p.name)}>
                Use…
              </button>
            </div>
            {p.description ? (
              <div className="tool-desc">
                <ServerClaim>{p.description}</ServerClaim>
              </div>
            ) : null}
            {using === p.name ? (
              <ArgumentsForm
                formId={`${testPrefix}-prompt-form-${p.name}`.replace(/[^a-zA-Z0-9_-]/g, '-')}
                fields={p.arguments}
                submitLabel="Show the prompt's text"
                suggest={completions ? { serverId, accountId, ref: { type: 'prompt', name: p.name } } : null}
                onSubmit={(values) => run(async () => setGot(await getPrompt({ serverId, accountId, name: p.name, arguments: values })))}
              />
            ) : null}
          </li>
        ))}
      </ul>
      {cursor ? (
        <button type="button" className="button button-small" onClick={() => void more(cursor)}>
          Show more prompts
        </button>
      ) : null}
      {got ? <PromptPreview got={got} onClose={() => setGot(null)} testPrefix={testPrefix} /> : null}
    </section>
  );
}

/** A prompt's every message, each marked as written by the server (whatever role it gave it). */
function PromptPreview({ got, onClose, testPrefix }: { got: PromptGotView; onClose: () => void; testPrefix: string }) {
  return (
    <div className="server-text" data-testid={`${testPrefix}-prompt-text`}>
      <p className="server-text-label">
        <strong>Written by the server {got.serverLabel}</strong> ({got.accountLabel}) — the prompt {got.name}. Every message below is the server&apos;s text, even one it
        labels as yours; it reaches a model only as the server&apos;s untrusted text.
      </p>
      {got.flags.length > 0 ? (
        <p className="answer-flag" role="note">
          <strong>Reads like instructions to an AI model.</strong> It {got.flags.join('; ')}.
        </p>
      ) : null}
      <CutNote truncated={got.truncated} />
      <ol className="prompt-messages">
        {got.messages.map((m, i) => (
          <li key={i}>
            <p className="small">
              <strong>From {got.serverLabel}</strong> — the server labels it &ldquo;{m.serverRole}&rdquo;
            </p>
            <pre className="server-text-body" tabIndex={0} aria-label={`Message ${i + 1} from ${got.serverLabel}`}>
              {m.text}
            </pre>
          </li>
        ))}
      </ol>
      <AttachActions
        attachment={{ attachmentId: got.attachmentId, kind: 'prompt', serverLabel: got.serverLabel, title: got.name }}
        label="Add to a chat message"
        testId={`${testPrefix}-prompt-attach`}
        onClose={onClose}
      />
    </div>
  );
}

// ---- an arguments form with the server's suggestions ------------------------------------------------

type SuggestRef = Key & { ref: { type: 'prompt'; name: string } | { type: 'resource-template'; uriTemplate: string } };

function ArgumentsForm({
  formId,
  fields,
  submitLabel,
  suggest,
  onSubmit,
}: {
  formId: string;
  fields: ReadonlyArray<{ name: string; description: string | null; required: boolean }>;
  submitLabel: string;
  suggest: SuggestRef | null;
  onSubmit: (values: Record<string, string>) => Promise<void> | void;
}) {
  const complete = useAppStore((s) => s.suggest);
  const [values, setValues] = useState<Record<string, string>>({});
  const [suggestions, setSuggestions] = useState<Record<string, string[]>>({});
  const [problems, setProblems] = useState<Record<string, string>>({});
  const ask = (name: string, value: string, all: Record<string, string>) => {
    if (!suggest) return;
    const context = Object.fromEntries(Object.entries(all).filter(([k, v]) => k !== name && v !== ''));
    complete({ ...suggest, argument: { name, value }, ...(Object.keys(context).length ? { context } : {}) })
      .then((found) => setSuggestions((s) => ({ ...s, [name]: found })))
      .catch(() => undefined);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const missing = Object.fromEntries(fields.filter((f) => f.required && !(values[f.name] ?? '').trim()).map((f) => [f.name, `Enter a value for ${f.name}.`]));
    setProblems(missing);
    if (Object.keys(missing).length) return;
    void onSubmit(Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '')));
  };
  return (
    <form className="run-form" onSubmit={submit} data-testid={formId} noValidate>
      {fields.length === 0 ? <p className="muted small">This takes no arguments.</p> : null}
      {fields.map((f) => (
        <FormField
          key={f.name}
          formId={formId}
          field={f.name}
          label={`${f.name}${f.required ? ' (required)' : ''}`}
          hint={f.description ? <ServerClaim>{f.description}</ServerClaim> : suggest ? 'The server suggests values as you type.' : undefined}
          problems={problems}
        >
          {(props) => (
            <>
              <input
                {...props}
                className="input"
                list={`${props.id}-suggestions`}
                value={values[f.name] ?? ''}
                autoComplete="off"
                onFocus={() => ask(f.name, values[f.name] ?? '', values)}
                onChange={(e) => {
                  const next = { ...values, [f.name]: e.target.value };
                  setValues(next);
                  ask(f.name, e.target.value, next);
                }}
              />
              <datalist id={`${props.id}-suggestions`} data-testid={`${props.id}-suggestions`}>
                {(suggestions[f.name] ?? []).map((v) => (
                  <option key={v} value={v} />
                ))}
              </datalist>
            </>
          )}
        </FormField>
      ))}
      <button type="submit" className="button button-primary button-small">
        {submitLabel}
      </button>
    </form>
  );
}
