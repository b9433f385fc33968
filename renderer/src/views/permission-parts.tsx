/**
 * Parts of the Permissions view: the mode control (a radio group, one Tab stop), the changed-tool panel (before/after with its three answers) and the
 * account actions (make active; remove, through the one confirmation that says what is deleted).
 *
 * Nothing here can grant: every change that makes Warden ask less is confirmed by the person in
 * main's native dialog, which the core opens itself.
 */
import { useEffect, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { CheckVerdict, MatrixRow, ToolChangeDetail } from '../../../shared/contract/permissions';
import type { ArgumentConstraint } from '../../../shared/domain/policy';
import type { PermissionMode } from '../../../shared/domain/operations';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { ErrorNote } from '../components/common';
import { RemoveAccount } from '../components/remove-account';
import { useAppStore } from '../store';
import { buildArguments, draftFrom, emptyDraft, fieldsFor, jsonProblems, labelAt, type Draft, type FieldSpec, type Problems } from '../schema-form/model';
import { ObjectFields } from '../schema-form/schema-form';

type ObjectSpec = Extract<FieldSpec, { kind: 'object' }>;
type ObjectDraft = Extract<Draft, { kind: 'object' }>;

export const MODE_WORDS: Record<PermissionMode, string> = { allow: 'Always Allow', ask: 'Ask', disabled: 'Disabled' };

/** The modes in the order a person reads them: the default first, then the looser, then off. */
const MODES: PermissionMode[] = ['ask', 'allow', 'disabled'];

/**
 * The mode of one tool or group as one radio group (the WAI-ARIA radio group pattern): one Tab
 * stop, the checked mode; Left and Right move to the next mode and choose it, Space chooses the
 * focused one, a click chooses. Enter opens the row's details (`onEnter`) instead of choosing.
 *
 * `value` is the mode in force for the target: its own when `own`, else the one it follows
 * (drawn lighter). `data-mode` is the own mode or `default`. A change is shown at once and put
 * back when the core refuses it (a loosening the person declines in Warden's own dialog).
 * `locked` names who decides instead of the person (the organization): the radios can be
 * focused, to reach the details, but not changed.
 */
export function ModeRadios({
  value,
  own,
  what,
  onPick,
  onEnter,
  testId,
  locked,
}: {
  value: PermissionMode;
  own: boolean;
  what: string;
  onPick: (mode: PermissionMode) => Promise<unknown>;
  onEnter?: () => void;
  testId: string;
  locked?: string;
}) {
  const [pending, setPending] = useState<PermissionMode | null>(null);
  const checked = pending ?? value;
  // Choosing the mode a target only follows makes it the target's own (it stays when the one it follows changes).
  const pick = (m: PermissionMode) => {
    if (locked || (m === checked && own) || pending) return;
    setPending(m);
    void onPick(m).finally(() => setPending(null));
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      onEnter?.();
      return;
    }
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    if (locked) return;
    const next = MODES[(MODES.indexOf(checked) + (e.key === 'ArrowLeft' ? -1 : 1) + MODES.length) % MODES.length]!;
    e.currentTarget.querySelector<HTMLButtonElement>(`[data-value="${next}"]`)?.focus();
    pick(next);
  };
  return (
    <div
      className={`mode-radios${own || pending ? '' : ' mode-follows'}${locked ? ' mode-locked' : ''}`}
      role="radiogroup"
      aria-label={locked ? `Mode of ${what}, set by ${locked}` : `Mode of ${what}`}
      aria-keyshortcuts="Enter"
      data-testid={testId}
      data-mode={own ? value : 'default'}
      onKeyDown={onKeyDown}
    >
      {MODES.map((m) => (
        <button
          key={m}
          type="button"
          role="radio"
          aria-checked={checked === m}
          aria-disabled={locked ? true : undefined}
          tabIndex={checked === m ? 0 : -1}
          className={`mode-radio${checked === m ? ' mode-on' : ''}`}
          data-value={m}
          data-testid={`${testId}-${m}`}
          onClick={() => pick(m)}
        >
          {MODE_WORDS[m]}
        </button>
      ))}
    </div>
  );
}

/**
 * A box of the server's text that scrolls when long: focusable and named, so a keyboard alone can
 * scroll it and a screen reader says which text it is.
 */
function TextBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    <pre className="diff" tabIndex={0} role="region" aria-label={label}>
      {children}
    </pre>
  );
}

function DiffText({ parts, label }: { parts: ToolChangeDetail['fields'][number]['parts']; label: string }) {
  return (
    <TextBox label={label}>
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
    </TextBox>
  );
}

const FIELD_WORDS: Record<ToolChangeDetail['fields'][number]['field'], string> = {
  title: 'Title',
  description: 'Description',
  inputSchema: 'Inputs',
  outputSchema: 'Output (schema)',
  annotations: 'Claims (annotations)',
  instructions: 'The server’s instructions',
};

/** The parts of a contract that are JSON (their changes are said in sentences first). */
const JSON_FIELDS = new Set<ToolChangeDetail['fields'][number]['field']>(['inputSchema', 'outputSchema', 'annotations']);

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
          {detail.fields.map((f) => {
            const sides = (
              <>
                <div className="before-after">
                  <div>
                    <div className="claim-label">Before (server’s text)</div>
                    <TextBox label={`${FIELD_WORDS[f.field]} before (server’s text)`}>{f.before ?? '(none)'}</TextBox>
                  </div>
                  <div>
                    <div className="claim-label">Now (server’s text)</div>
                    <TextBox label={`${FIELD_WORDS[f.field]} now (server’s text)`}>{f.after ?? '(none)'}</TextBox>
                  </div>
                </div>
                <div className="claim-label">Differences</div>
                <DiffText parts={f.parts} label={`${FIELD_WORDS[f.field]}: differences`} />
              </>
            );
            // Schemas and claims are JSON: the sentences above say what changed in them, the JSON is one click away.
            return (
              <div key={f.field} className="change-field" data-testid={`change-field-${f.field}`}>
                <h3>{FIELD_WORDS[f.field]}</h3>
                {JSON_FIELDS.has(f.field) ? (
                  <details className="show-json">
                    <summary>Show JSON</summary>
                    {sides}
                  </details>
                ) : (
                  sides
                )}
              </div>
            );
          })}
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
  const [error, setError] = useState<ShownError | null>(null);
  const prefix = `perm-account-${serverId}-${accountId}`;
  const activate = async () => {
    setError(null);
    try {
      const r = await unwrap(getWardenApi().accounts.setActive({ serverId, accountId }));
      say(r.message);
      await refreshMatrix();
    } catch (e) {
      setError(toShownError(e));
    }
  };
  return (
    <div className="account-actions">
      {active ? null : (
        <button type="button" className="button button-small" data-testid={`${prefix}-activate`} aria-label={`Make active: ${label} of ${serverLabel}`} onClick={() => void activate()}>
          Make active
        </button>
      )}
      <RemoveAccount serverId={serverId} accountId={accountId} label={label} serverLabel={serverLabel} testIdPrefix={prefix} />
      <ErrorNote error={error} />
    </div>
  );
}

/** Sample arguments to start from when the schema has no form: its property names with empty values of their type. */
function sampleArguments(inputSchema: Record<string, unknown>): string {
  const props = inputSchema.properties;
  if (!props || typeof props !== 'object') return '{}';
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(props as Record<string, { type?: unknown } | null>)) {
    const t = schema?.type;
    out[name] = t === 'string' ? '' : t === 'number' || t === 'integer' ? 0 : t === 'boolean' ? false : t === 'array' ? [] : null;
  }
  return JSON.stringify(out, null, 2);
}

type Op = 'pathUnder' | 'equals' | 'oneOf' | 'matches' | 'range' | 'maxLength';
const OP_WORDS: Record<Op, string> = {
  pathUnder: 'is a path under the folder',
  equals: 'is exactly',
  oneOf: 'is one of (one per line)',
  matches: 'matches the pattern (*, **, ?)',
  range: 'is a number between',
  maxLength: 'is at most this long',
};

/** A typed value: JSON when it parses as JSON (42, true, "x"), the text itself otherwise. */
function typed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The constraints the form describes, or a sentence saying what is missing. */
function constraintsOf(field: string, op: Op, value: string, upper: string): ArgumentConstraint[] | string {
  if (!field) return 'Choose the argument the rule looks at.';
  const number = (t: string) => (t.trim() === '' || Number.isNaN(Number(t)) ? null : Number(t));
  switch (op) {
    case 'pathUnder':
    case 'matches':
      return value.trim() ? [{ op, field, value: value.trim() }] : op === 'pathUnder' ? 'Choose or type a folder.' : 'Type a pattern.';
    case 'equals':
      return value === '' ? 'Type the value.' : [{ op, field, value: typed(value) as never }];
    case 'oneOf': {
      const values = value.split('\n').filter((v) => v.trim() !== '');
      return values.length ? [{ op, field, value: values.map((v) => typed(v.trim())) as never }] : 'Type at least one value, one per line.';
    }
    case 'range': {
      const lo = number(value);
      const hi = number(upper);
      if (lo === null && hi === null) return 'Type a lowest or a highest number (or both).';
      return [...(lo !== null ? [{ op: 'min' as const, field, value: lo }] : []), ...(hi !== null ? [{ op: 'max' as const, field, value: hi }] : [])];
    }
    case 'maxLength': {
      const n = number(value);
      return n === null || n < 0 || !Number.isInteger(n) ? 'Type a whole number of characters.' : [{ op, field, value: n }];
    }
  }
}

/**
 * Rules on a tool's arguments ("Always Allow when path is under /work/docs"), with a live "would
 * this call be allowed?" answered by the real gate for sample arguments, before anything is saved.
 */
export function ConstraintEditor({ row }: { row: Pick<MatrixRow, 'serverId' | 'accountId' | 'toolName' | 'serverLabel' | 'accountLabel' | 'constraintRules'> }) {
  const applyChanges = useAppStore((s) => s.applyChanges);
  const revokeRule = useAppStore((s) => s.revokeRule);
  const [fields, setFields] = useState<string[]>([]);
  const [field, setField] = useState('');
  const [op, setOp] = useState<Op>('pathUnder');
  const [value, setValue] = useState('');
  const [upper, setUpper] = useState('');
  const [mode, setMode] = useState<PermissionMode>('allow');
  // The sample call: a form built from the tool's schema, or JSON when the person asks for it (or the schema has no form).
  const [spec, setSpec] = useState<ObjectSpec | null>(null);
  const [draft, setDraft] = useState<ObjectDraft | null>(null);
  const [asJson, setAsJson] = useState(false);
  const [sample, setSample] = useState('{}');
  const [sampleProblems, setSampleProblems] = useState<Problems>({});
  const [verdict, setVerdict] = useState<CheckVerdict | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const key = { serverId: row.serverId, accountId: row.accountId, toolName: row.toolName };
  const id = `${row.serverId}-${row.accountId}-${row.toolName}`;
  const testerId = `tester-${id}`.replace(/[^a-zA-Z0-9_-]/g, '-');
  useEffect(() => {
    unwrap(getWardenApi().permissions.toolSchema(key)).then(
      ({ inputSchema }) => {
        const props = Object.keys((inputSchema.properties as Record<string, unknown> | undefined) ?? {});
        setFields(props);
        setField((f) => f || props[0] || '');
        const form = fieldsFor(inputSchema) as ObjectSpec | null;
        setSpec(form);
        setDraft(form ? (emptyDraft(form) as ObjectDraft) : null);
        setAsJson(form === null);
        setSample(sampleArguments(inputSchema));
      },
      (e: unknown) => setError(toShownError(e)),
    );
    // The key's parts identify the tool; the object itself is new on every render.
  }, [row.serverId, row.accountId, row.toolName]);
  const constraints = constraintsOf(field, op, value, upper);
  const check = async () => {
    setVerdict(null);
    setProblem(null);
    let args: Record<string, unknown>;
    if (!asJson && spec && draft) {
      const built = buildArguments(spec, draft);
      setSampleProblems(built.problems);
      const found = Object.entries(built.problems);
      if (found.length) return setProblem(`The sample call is not complete: ${found.map(([path, words]) => `${labelAt(spec, path)}: ${words}`).join('; ')}`);
      args = built.args;
    } else {
      const checked = jsonProblems(spec, sample);
      if (checked.value === null || checked.problems.length) return setProblem(`The sample arguments: ${checked.problems.join(' ')}`);
      args = checked.value;
    }
    if (typeof constraints === 'string') return setProblem(constraints);
    try {
      setVerdict(await unwrap(getWardenApi().permissions.check({ ...key, conversationId: null, arguments: args, draft: { constraints, mode, anyAccount: false } })));
    } catch (e) {
      setError(toShownError(e));
    }
  };
  // Switching keeps what was typed: the form's values become the JSON, JSON that parses fills the form.
  const showJson = (on: boolean) => {
    setProblem(null);
    if (!spec) return;
    if (on) {
      if (draft) setSample(JSON.stringify(buildArguments(spec, draft).args, null, 2));
      return setAsJson(true);
    }
    const checked = jsonProblems(spec, sample);
    if (checked.value === null) return setProblem(`Fix the JSON before going back to the form, so nothing you typed is lost: ${checked.problems.join(' ')}`);
    setDraft(draftFrom(spec, checked.value).draft as ObjectDraft);
    setAsJson(false);
  };
  const save = async () => {
    if (typeof constraints === 'string') return setProblem(constraints);
    const words = `${MODE_WORDS[mode]} for ${row.toolName} on ${row.serverLabel} (${row.accountLabel}) when ${field} ${OP_WORDS[op]} ${op === 'range' ? `${value || '…'} and ${upper || '…'}` : value}`;
    await applyChanges([{ scope: 'tool-constraint', ...key, constraints, mode }], `rule saved: ${words}`);
  };
  const chooseFolder = async () => {
    try {
      const { path } = await unwrap(getWardenApi().permissions.chooseFolder({ title: `Folder for ${row.toolName} on ${row.serverLabel}` }));
      if (path) setValue(path);
    } catch (e) {
      setError(toShownError(e));
    }
  };
  return (
    <div className="constraint-editor" data-testid={`perm-constraints-${id}`}>
      <p className="details-title">Rules for specific arguments</p>
      {(row.constraintRules ?? []).length === 0 ? <p className="muted">None yet.</p> : null}
      <ul>
        {(row.constraintRules ?? []).map((c) => (
          <li key={c.ruleId}>
            {c.mode ? MODE_WORDS[c.mode] : 'Disabled'} when {c.words}
            {c.anyAccount ? ' (every account)' : ''}{' '}
            <button type="button" className="button button-small" onClick={() => void revokeRule(c.ruleId)} aria-label={`Remove the rule: ${c.mode ? MODE_WORDS[c.mode] : 'Disabled'} when ${c.words}`}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <div className="constraint-form">
        <label>
          Mode
          <select className="input input-small" value={mode} onChange={(e) => setMode(e.target.value as PermissionMode)} data-testid={`perm-constraint-mode-${id}`}>
            {(['allow', 'ask', 'disabled'] as const).map((m) => (
              <option key={m} value={m}>
                {MODE_WORDS[m]}
              </option>
            ))}
          </select>
        </label>
        <label>
          when the argument
          <select className="input input-small" value={field} onChange={(e) => setField(e.target.value)} data-testid={`perm-constraint-field-${id}`}>
            {fields.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="visually-hidden">condition</span>
          <select className="input input-small" value={op} onChange={(e) => setOp(e.target.value as Op)} data-testid={`perm-constraint-op-${id}`} aria-label="condition">
            {(Object.keys(OP_WORDS) as Op[]).map((o) => (
              <option key={o} value={o}>
                {OP_WORDS[o]}
              </option>
            ))}
          </select>
        </label>
        {op === 'oneOf' ? (
          <textarea className="input" rows={3} value={value} onChange={(e) => setValue(e.target.value)} aria-label="values, one per line" data-testid={`perm-constraint-value-${id}`} />
        ) : (
          <input className="input input-small" value={value} onChange={(e) => setValue(e.target.value)} aria-label={op === 'range' ? 'lowest number' : 'value'} data-testid={`perm-constraint-value-${id}`} />
        )}
        {op === 'range' ? <input className="input input-small" value={upper} onChange={(e) => setUpper(e.target.value)} aria-label="highest number" /> : null}
        {op === 'pathUnder' ? (
          <button type="button" className="button button-small" onClick={() => void chooseFolder()} data-testid={`perm-constraint-folder-${id}`}>
            Choose folder…
          </button>
        ) : null}
      </div>
      <fieldset className="constraint-tester" data-testid={`perm-constraint-tester-${id}`}>
        <legend>Would this call be allowed? Fill in a sample call</legend>
        {asJson || !spec || !draft ? (
          <label className="field">
            <span>Sample arguments (JSON)</span>
            <textarea className="input code-input" rows={4} value={sample} onChange={(e) => setSample(e.target.value)} data-testid={`perm-constraint-sample-${id}`} />
          </label>
        ) : spec.properties.length === 0 ? (
          <p className="muted">This tool takes no arguments.</p>
        ) : (
          <div className="schema-form">
            <ObjectFields formId={testerId} spec={spec} draft={draft} path="" problems={sampleProblems} onChange={(next) => (setDraft(next as ObjectDraft), setSampleProblems({}))} />
          </div>
        )}
        <label className="schema-check">
          <input type="checkbox" checked={asJson} disabled={!spec} onChange={(e) => showJson(e.target.checked)} data-testid={`perm-constraint-json-${id}`} />
          Type the sample as JSON instead
        </label>
      </fieldset>
      <div className="form-actions">
        <button type="button" className="button button-small" onClick={() => void check()} data-testid={`perm-constraint-check-${id}`}>
          Check with this rule
        </button>
        <button type="button" className="button button-small button-primary" onClick={() => void save()} data-testid={`perm-constraint-save-${id}`}>
          Save rule
        </button>
      </div>
      {problem ? (
        <p className="error-note" role="alert" data-testid={`perm-constraint-problem-${id}`}>
          {problem}
        </p>
      ) : null}
      {verdict ? (
        <p className="verdict" role="status" data-testid={`perm-constraint-verdict-${id}`}>
          <strong>{verdict.outcome === 'allow' ? 'Would run without asking' : verdict.outcome === 'ask' ? 'Would ask you first' : verdict.outcome === 'deny' ? 'Would be blocked' : 'Invalid arguments'}</strong>: {verdict.summary ? `${verdict.summary}. ` : ''}
          {verdict.reason}
        </p>
      ) : null}
      <ErrorNote error={error} />
    </div>
  );
}

/**
 * Conversation overrides of one tool: the ones that apply (with Remove), and a form to set one —
 * "Always Allow in this conversation" or "Disabled in this conversation". An override ends with
 * its conversation. Allowing is confirmed in main's native dialog like any other loosening;
 * removing a Disabled override is too (the core decides which changes loosen).
 */
export function ConversationOverrides({ row }: { row: Pick<MatrixRow, 'serverId' | 'accountId' | 'toolName' | 'serverLabel' | 'accountLabel' | 'conversationOverrides'> }) {
  const applyChanges = useAppStore((s) => s.applyChanges);
  const revokeRule = useAppStore((s) => s.revokeRule);
  const [conversations, setConversations] = useState<Array<{ id: string; title: string }> | null>(null);
  const [picked, setPicked] = useState('');
  const [error, setError] = useState<ShownError | null>(null);
  const id = `${row.serverId}-${row.accountId}-${row.toolName}`;
  useEffect(() => {
    unwrap(getWardenApi().chat.list({})).then(
      ({ conversations: list }) => {
        setConversations(list.map((c) => ({ id: c.id, title: c.title })));
        setPicked((p) => p || list[0]?.id || '');
      },
      (e: unknown) => setError(toShownError(e)),
    );
  }, []);
  const titleOf = (conversationId: string) => conversations?.find((c) => c.id === conversationId)?.title || 'a conversation without a title';
  const what = `${row.toolName} on ${row.serverLabel} (${row.accountLabel})`;
  const set = (mode: 'allow' | 'disabled') =>
    void applyChanges(
      [{ scope: 'conversation', conversationId: picked, serverId: row.serverId, accountId: row.accountId, toolName: row.toolName, mode }],
      `${what} ${mode === 'allow' ? 'allowed without asking' : 'disabled'} in the conversation “${titleOf(picked)}”`,
    );
  const overrides = row.conversationOverrides ?? [];
  return (
    <div className="conversation-overrides" data-testid={`perm-conv-${id}`}>
      <p className="details-title">In one conversation</p>
      <p className="muted">A setting for one conversation wins over your other rules there (not over your organization’s) and ends with that conversation.</p>
      {overrides.length === 0 ? <p className="muted">No conversation has its own setting for this tool.</p> : null}
      <ul>
        {overrides.map((o) => (
          <li key={o.ruleId} data-testid={`perm-conv-override-${o.conversationId}`}>
            {o.mode ? MODE_WORDS[o.mode] : 'Disabled'} in “{o.conversationTitle}”{' '}
            <button
              type="button"
              className="button button-small"
              onClick={() => void revokeRule(o.ruleId)}
              aria-label={`Remove the setting ${o.mode ? MODE_WORDS[o.mode] : 'Disabled'} for ${what} in “${o.conversationTitle}”`}
              data-testid={`perm-conv-remove-${o.conversationId}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {conversations && conversations.length === 0 ? <p className="muted">There are no conversations yet; start one in Chat to give it its own setting.</p> : null}
      {conversations && conversations.length > 0 ? (
        <div className="constraint-form">
          <label>
            Conversation
            <select className="input input-small" value={picked} onChange={(e) => setPicked(e.target.value)} data-testid={`perm-conv-pick-${id}`}>
              {conversations.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.title || 'Untitled conversation'}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="button button-small" onClick={() => set('allow')} data-testid={`perm-conv-allow-${id}`} aria-label={`Always Allow there… (${what}, in the chosen conversation)`}>
            Always Allow there…
          </button>
          <button type="button" className="button button-small" onClick={() => set('disabled')} data-testid={`perm-conv-disable-${id}`} aria-label={`Disable there (${what}, in the chosen conversation)`}>
            Disable there
          </button>
        </div>
      ) : null}
      <ErrorNote error={error} />
    </div>
  );
}
