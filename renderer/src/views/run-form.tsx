/**
 * "Run a tool": a person's own tool call, filled in with a form generated from the tool's input
 * schema (or as raw JSON, an advanced view that stays in sync with the form). It PROPOSES the call
 * (tools:run, source 'user'); the gate decides exactly as for a model. If the policy says Ask, the
 * call waits in Approvals, where only main's native dialog can approve it.
 */
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import type { ToolView } from '../../../shared/contract/connections';
import { toShownError, type ShownError } from '../api';
import { ErrorNote, ServerClaim, StatePill } from '../components/common';
import { useFocusFirstProblem } from '../components/form-field';
import { argumentsProblem, type ShownError as OperationError } from '../errors';
import { buildArguments, draftFrom, emptyDraft, fieldsFor, jsonProblems, labelAt, visibleText, type Draft, type FieldSpec, type Problems } from '../schema-form/model';
import { ObjectFields } from '../schema-form/schema-form';
import { ServerAnswer } from '../components/server-answer';
import { useAppStore } from '../store';
import { CallProgress } from '../components/progress';
import { OutcomeUnknownNote } from '../components/outcome-unknown';

type ObjectSpec = Extract<FieldSpec, { kind: 'object' }>;
type ObjectDraft = Extract<Draft, { kind: 'object' }>;

/** The Run form for one tool of one (server, account). */
export function RunForm({ tool, onClose }: { tool: ToolView; onClose: () => void }) {
  const runTool = useAppStore((s) => s.runTool);
  const navigate = useAppStore((s) => s.navigate);
  const showOperationInActivity = useAppStore((s) => s.showOperationInActivity);
  const spec = useMemo(() => fieldsFor(tool.inputSchema) as ObjectSpec | null, [tool.inputSchema]);
  const formId = `run-${tool.serverId}-${tool.accountId}-${tool.name}`.replace(/[^a-zA-Z0-9_-]/g, '-');
  const [draft, setDraft] = useState<ObjectDraft | null>(() => (spec ? (emptyDraft(spec) as ObjectDraft) : null));
  // The JSON view: its text is the source while it is open; the form follows every edit that parses.
  const [asJson, setAsJson] = useState(spec === null);
  const [jsonText, setJsonText] = useState(() => JSON.stringify(spec && draft ? buildArguments(spec, draft).args : {}, null, 2));
  const [misfits, setMisfits] = useState<string[]>([]);
  const [problems, setProblems] = useState<Problems>({});
  const [jsonIssues, setJsonIssues] = useState<string[]>([]);
  const [error, setError] = useState<ShownError | null>(null);
  const [operationId, setOperationId] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const formRef = useFocusFirstProblem<HTMLFormElement>(attempt);
  const operation = useAppStore((s) => (operationId ? (s.operations.find((o) => o.operationId === operationId) ?? null) : null));

  // What the gate refused in the arguments (it validates against the whole schema): next to its
  // field while the form is showing, and in words under the result either way.
  const refused = operation?.error?.code === 'VALIDATION_FAILED' ? argumentsProblem(operation.error.message) : null;
  useEffect(() => {
    if (refused && refused.path !== '' && !asJson) setProblems((p) => ({ ...p, [refused.path]: refused.words }));
    // Once per refused operation (keyed by its id and field): later edits clear it like any problem.
  }, [operation?.operationId, refused?.path]);
  const operationError: OperationError | null = operation?.error
    ? {
        ...operation.error,
        source: 'operation',
        ...(refused ? { fields: [{ path: refused.path.split('/').slice(1), message: refused.words }] } : {}),
      }
    : null;
  const nameField = (path: readonly (string | number)[]) => (spec ? labelAt(spec, path.map((p) => `/${String(p)}`).join('')) : null);

  const changeDraft = (next: Draft) => {
    setDraft(next as ObjectDraft);
    // A field's problem goes away as soon as the person changes the form; the rest stay until Run.
    if (Object.keys(problems).length) setProblems(spec ? buildArguments(spec, next).problems : {});
  };

  const changeJson = (text: string) => {
    setJsonText(text);
    setJsonIssues([]);
    if (!spec) return;
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        const filled = draftFrom(spec, value);
        setDraft(filled.draft as ObjectDraft);
        setMisfits(filled.misfits);
      }
    } catch {
      // Half-typed JSON: the form keeps the last arguments that parsed.
    }
  };

  const showJson = (on: boolean) => {
    if (on) {
      if (spec && draft) setJsonText(JSON.stringify(buildArguments(spec, draft).args, null, 2));
      setMisfits([]);
      setJsonIssues([]);
      setAsJson(true);
      return;
    }
    const checked = jsonProblems(spec, jsonText);
    if (checked.value === null) {
      setJsonIssues([...checked.problems, 'Fix the JSON before going back to the form, so nothing you typed is lost.']);
      return;
    }
    if (misfits.length) {
      setJsonIssues([
        `Some values don't fit the form's fields: ${misfits.map((p) => (spec ? labelAt(spec, p) : p)).join(', ')}. Fix them here, or they would be dropped in the form.`,
      ]);
      return;
    }
    setAsJson(false);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    let args: Record<string, unknown>;
    if (asJson || !spec || !draft) {
      const checked = jsonProblems(spec, jsonText);
      setJsonIssues(checked.problems);
      if (checked.value === null || checked.problems.length) {
        setAttempt((n) => n + 1);
        return;
      }
      args = checked.value;
    } else {
      const built = buildArguments(spec, draft);
      setProblems(built.problems);
      if (Object.keys(built.problems).length) {
        setAttempt((n) => n + 1);
        return;
      }
      args = built.args;
    }
    try {
      const op = await runTool({ serverId: tool.serverId, accountId: tool.accountId, toolName: tool.name, arguments: args });
      setOperationId(op.operationId);
    } catch (e) {
      setError(toShownError(e));
    }
  };

  const problemCount = Object.keys(problems).length;
  const title = tool.title ? visibleText(tool.title, 200) : null;
  return (
    <form ref={formRef} className="card form run-form" onSubmit={submit} data-testid="run-form" aria-labelledby={`${formId}-title`} noValidate>
      <h3 id={`${formId}-title`}>
        Run {title ?? <code>{tool.name}</code>}
        {title ? (
          <>
            {' '}
            <code className="small">{tool.name}</code>
          </>
        ) : null}
      </h3>
      <p className="muted">
        Your call goes through Warden's gate like any model call: Always Allow runs it, Ask sends it to Approvals, Disabled refuses it.
      </p>
      <p>
        <ServerClaim flags={tool.flags}>{tool.description}</ServerClaim>
      </p>
      <div className="run-mode">
        <label className="schema-check">
          <input type="checkbox" checked={asJson} disabled={!spec} onChange={(e) => showJson(e.target.checked)} data-testid="run-form-json-toggle" />
          Edit as JSON (advanced)
        </label>
        {!spec ? <span className="muted small">This tool's input schema can't be shown as a form, so its arguments are entered as JSON.</span> : null}
      </div>
      {asJson || !spec || !draft ? (
        <div className="field">
          <label htmlFor={`${formId}-json`}>Arguments (JSON)</label>
          <textarea
            id={`${formId}-json`}
            className="input mono run-json"
            rows={8}
            spellCheck={false}
            value={jsonText}
            onChange={(e) => changeJson(e.target.value)}
            data-testid="run-form-arguments"
            aria-invalid={jsonIssues.length ? true : undefined}
            aria-describedby={jsonIssues.length ? `${formId}-json-problems` : undefined}
          />
          {jsonIssues.length ? (
            <ul id={`${formId}-json-problems`} className="field-problem" data-testid="run-form-json-problems">
              {jsonIssues.map((p, i) => (
                <li key={i}>{p}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : spec.properties.length === 0 ? (
        <p className="muted" data-testid="run-form-no-arguments">
          This tool takes no arguments.
        </p>
      ) : (
        <div className="schema-form" data-testid="run-form-fields">
          <ObjectFields formId={formId} spec={spec} draft={draft} path="" problems={problems} onChange={changeDraft} />
        </div>
      )}
      {problemCount > 0 && !asJson ? (
        <p className="error-note error-sentence" role="alert" data-testid="run-form-problems">
          {problemCount === 1 ? 'One field needs' : `${problemCount} fields need`} your attention before this can run: see the marked {problemCount === 1 ? 'field' : 'fields'} above.
        </p>
      ) : null}
      <ErrorNote error={error} testId="run-form-error" />
      <div className="form-actions">
        <button type="submit" className="button button-primary" data-testid="run-form-submit">
          Run
        </button>
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
      {operation ? (
        <div className="run-result" data-testid="run-form-result" aria-live="polite">
          <div>
            <StatePill state={operation.state} testId="run-form-state" />{' '}
            <button type="button" className="button button-small" data-testid="run-form-activity" onClick={() => void showOperationInActivity(operation.operationId)}>
              Open it in Activity
            </button>
          </div>
          {refused ? null : <p className="muted">{operation.reason}</p>}
          {operation.state === 'outcome_unknown' ? <OutcomeUnknownNote testId="run-form-unknown" /> : null}
          {operation.state === 'awaiting_approval' ? (
            <p>
              Waiting for your approval.{' '}
              <button type="button" className="link" onClick={() => navigate('approvals')}>
                Open Approvals
              </button>
            </p>
          ) : null}
          {operation.state === 'executing' ? (
            <CallProgress operationId={operation.operationId} startedAt={operation.history.find((h) => h.to === 'executing')?.at ?? operation.requestedAt} testId="run-form-progress" stopTestId="run-form-stop" />
          ) : null}
          {operation.result ? <ServerAnswer result={operation.result} testId="run-form" /> : null}
          {operation.state === 'outcome_unknown' ? null : <ErrorNote error={operationError} testId="run-form-operation-error" fieldName={nameField} />}
        </div>
      ) : null}
    </form>
  );
}
