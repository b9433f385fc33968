/**
 * Questions servers ask the person (form-mode elicitation), shown above the current view, and
 * warnings about forms Warden refused because they asked for a secret.
 *
 * Each question says which server and account asks (Warden's names, never the server's own), shows
 * the server's message as the server's words, and a form generated from the requested schema.
 * Send, Decline and Cancel answer that server only: nothing here can approve a tool call. A form
 * the core judged as maybe asking for a secret carries a warning, shown above its fields; its
 * answer is confirmed again in main's native dialog before it is sent.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ElicitationQuestion, RefusedFormView } from '../../../shared/contract/elicitation';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { ErrorNote } from '../components/common';
import { buildArguments, emptyDraft, fieldsFor, visibleText, type Draft, type FieldSpec, type Problems } from '../schema-form/model';
import { ObjectFields } from '../schema-form/schema-form';

type ObjectSpec = Extract<FieldSpec, { kind: 'object' }>;
type ObjectDraft = Extract<Draft, { kind: 'object' }>;

/** Pending questions and refused-form warnings, following `elicitation:changed`. */
export function ServerQuestions() {
  const [state, setState] = useState<{ questions: ElicitationQuestion[]; refused: RefusedFormView[] }>({ questions: [], refused: [] });
  const refresh = useCallback(() => {
    Promise.resolve()
      .then(() => unwrap(getWardenApi().elicitation.list({})))
      .then(setState)
      .catch(() => undefined);
  }, []);
  useEffect(() => {
    // Without the contract bridge there is nothing to ask: the core-error banner says why, and
    // the rest of the window must still draw.
    let off: () => void;
    try {
      off = getWardenApi().elicitation.onChanged(refresh);
    } catch {
      return undefined;
    }
    refresh();
    return off;
  }, [refresh]);
  if (state.questions.length === 0 && state.refused.length === 0) return null;
  return (
    <div className="server-questions" data-testid="server-questions">
      {state.refused.map((r) => (
        <RefusedNotice key={r.noticeId} notice={r} onDone={refresh} />
      ))}
      {state.questions.map((q) => (
        <QuestionForm key={q.questionId} question={q} onDone={refresh} />
      ))}
    </div>
  );
}

function RefusedNotice({ notice, onDone }: { notice: RefusedFormView; onDone: () => void }) {
  const dismiss = () => {
    unwrap(getWardenApi().elicitation.dismiss({ noticeId: notice.noticeId }))
      .then(onDone)
      .catch(onDone);
  };
  return (
    <div className="banner banner-danger" role="alert" data-testid="refused-form">
      <span>
        <strong>
          Warden refused a form from {notice.serverLabel} ({notice.accountLabel}).
        </strong>{' '}
        The field “{visibleText(notice.field, 200)}” was refused because {notice.why}. Servers must not ask for passwords, tokens or keys in a form,
        and Warden never does: don't type a secret into any form a server shows you. The server was told it was refused.
        <span className="server-words" data-testid="refused-form-message">
          The server said (its own words, not Warden's): {visibleText(notice.message, 2000)}
        </span>
      </span>
      <span className="banner-actions">
        <button type="button" className="button" data-testid="refused-form-dismiss" onClick={dismiss}>
          Dismiss
        </button>
      </span>
    </div>
  );
}

function QuestionForm({ question, onDone }: { question: ElicitationQuestion; onDone: () => void }) {
  const spec = useMemo(() => fieldsFor(question.schema) as ObjectSpec | null, [question.schema]);
  const formId = `question-${question.questionId}`.replace(/[^a-zA-Z0-9_-]/g, '-');
  const [draft, setDraft] = useState<ObjectDraft | null>(() => (spec ? (emptyDraft(spec) as ObjectDraft) : null));
  const [problems, setProblems] = useState<Problems>({});
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const headingId = `${formId}-heading`;

  const answer = async (action: 'accept' | 'decline' | 'cancel') => {
    let content: Record<string, unknown> | undefined;
    if (action === 'accept' && spec && draft) {
      const built = buildArguments(spec, draft);
      setProblems(built.problems);
      if (Object.keys(built.problems).length) return;
      content = built.args;
    }
    setBusy(true);
    setError(null);
    try {
      await unwrap(getWardenApi().elicitation.answer({ questionId: question.questionId, action, ...(content ? { content: content as never } : {}) }));
      onDone();
    } catch (e) {
      setError(toShownError(e));
      onDone();
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="card question-card"
      aria-labelledby={headingId}
      data-testid="question"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void answer('accept');
      }}
    >
      <h2 id={headingId} data-testid="question-heading">
        {question.serverLabel} ({question.accountLabel}) asks you a question
      </h2>
      <p className="server-words" data-testid="question-message">
        <span className="server-words-label">The server says (its own words, not Warden's):</span> {visibleText(question.message, 4000)}
      </p>
      <p className="muted" data-testid="question-note">
        Your answer goes only to {question.serverLabel}. It does not approve any tool call: those are approved only in Warden's own dialog.
      </p>
      {question.warning ? (
        <div className="banner banner-danger" role="alert" data-testid="question-warning">
          <span>
            <strong>This form may be asking for a secret:</strong> {visibleText(question.warning, 600)}. Servers must not ask for passwords, tokens, keys
            or one-time codes in a form, and Warden never does. If you send an answer, Warden asks you once more before it leaves.
          </span>
        </div>
      ) : null}
      {question.problem ? (
        <p className="error-note error-sentence" role="alert" data-testid="question-problem">
          The last answer did not fit the form: {visibleText(question.problem, 1000)}
        </p>
      ) : null}
      {spec && draft ? (
        spec.properties.length ? (
          <div className="schema-form" data-testid="question-fields">
            <ObjectFields
              formId={formId}
              spec={spec}
              draft={draft}
              path=""
              problems={problems}
              onChange={(next) => {
                setDraft(next as ObjectDraft);
                if (Object.keys(problems).length) setProblems(buildArguments(spec, next).problems);
              }}
            />
          </div>
        ) : (
          <p className="muted">The form has no fields.</p>
        )
      ) : (
        <p className="error-note" data-testid="question-unshowable">
          Warden can't show this form. Decline or cancel it.
        </p>
      )}
      <ErrorNote error={error} testId="question-error" />
      <div className="form-actions">
        <button type="submit" className="button button-primary" data-testid="question-send" disabled={busy || !spec}>
          Send answer
        </button>
        <button type="button" className="button" data-testid="question-decline" disabled={busy} onClick={() => void answer('decline')}>
          Decline
        </button>
        <button type="button" className="button" data-testid="question-cancel" disabled={busy} onClick={() => void answer('cancel')}>
          Cancel
        </button>
      </div>
    </form>
  );
}
