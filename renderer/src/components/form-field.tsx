/**
 * A form field's problem, shown under the field and tied to it for assistive technology.
 *
 * Forms keep one `problems` map (field key → sentence) filled from their own checks before
 * sending and from the core's `fields` after it refused a request, so a problem always sits next
 * to the field it is about, whoever found it.
 */
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import type { ShownError } from '../api';
import { asSentence } from '../errors';

/**
 * Moves the focus to the form's first field marked invalid each time `attempt` changes (a submit
 * that found problems), so the person lands on what to fix and a screen reader reads its problem.
 */
export function useFocusFirstProblem<T extends HTMLElement>(attempt: number): RefObject<T | null> {
  const ref = useRef<T | null>(null);
  useEffect(() => {
    if (attempt > 0) ref.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt]);
  return ref;
}

/** The id of a field's problem note: what `aria-describedby` points at. */
export const problemId = (formId: string, key: string): string => `${formId}-problem-${key.replace(/[^a-zA-Z0-9_-]/g, '-')}`;

/** Props that tie an input to its problem note (and mark it invalid) while there is one. */
export function describedBy(formId: string, key: string, problems: Readonly<Record<string, string>>, hintId?: string) {
  const problem = problems[key];
  const ids = [problem ? problemId(formId, key) : null, hintId ?? null].filter(Boolean).join(' ');
  return { 'aria-invalid': problem ? (true as const) : undefined, 'aria-describedby': ids || undefined };
}

/** The problem note under a field; nothing while the field is fine. */
export function FieldProblem({ formId, field, problems }: { formId: string; field: string; problems: Readonly<Record<string, string>> }) {
  const problem = problems[field];
  if (!problem) return null;
  const id = problemId(formId, field);
  return (
    <p id={id} className="field-problem" data-testid={id}>
      {problem}
    </p>
  );
}

/**
 * The core's field problems keyed for a form: `keyOf` maps a field path to the form's key for it
 * (null: not one of the form's fields; those stay in the error note's list).
 */
export function problemsFromError(error: ShownError | null, keyOf: (path: readonly (string | number)[]) => string | null, plain: (message: string) => string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of error?.fields ?? []) {
    const key = keyOf(issue.path);
    if (key !== null && out[key] === undefined) out[key] = asSentence(plain(issue.message));
  }
  return out;
}

/** The props a field's control gets: its id, and the ties to its hint and problem. */
export interface ControlProps {
  id: string;
  'aria-invalid': true | undefined;
  'aria-describedby': string | undefined;
}

/**
 * One labelled field: the label, the control (`children` gets the props to spread on it), an
 * optional hint shown as text (never only on hover), and the field's problem under it.
 *
 * Why the problem sits outside the <label>: inside it, the problem would become part of the
 * field's name for a screen reader; outside, it is read as the field's description.
 */
export function FormField({
  formId,
  field,
  label,
  hint,
  problems,
  children,
}: {
  formId: string;
  field: string;
  label: ReactNode;
  hint?: ReactNode;
  problems: Readonly<Record<string, string>>;
  children: (props: ControlProps) => ReactNode;
}) {
  const id = `${formId}-${field.replace(/[^a-zA-Z0-9_-]/g, '-')}`;
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, ...describedBy(formId, field, problems, hintId) })}
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
      <FieldProblem formId={formId} field={field} problems={problems} />
    </div>
  );
}

/**
 * A one-field inline form (an account's name, a secret's value): an empty entry is not sent; it
 * says what is missing under the field and keeps the form open with what was typed.
 */
export function InlineEntry({
  formId,
  label,
  initial = '',
  placeholder,
  secret = false,
  missing,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  formId: string;
  /** The field's label, shown before it ("Name of the new account"). */
  label: string;
  initial?: string;
  placeholder?: string;
  secret?: boolean;
  /** What to say when the field is empty. */
  missing: string;
  submitLabel: string;
  onSubmit: (value: string) => void;
  onCancel: () => void;
}) {
  const [value, setValue] = useState(initial);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const input = useRef<HTMLInputElement | null>(null);
  return (
    <form
      className="inline-entry"
      data-testid={formId}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const entered = secret ? value : value.trim();
        if (entered === '') {
          setProblems({ value: missing });
          input.current?.focus();
          return;
        }
        onSubmit(entered);
      }}
    >
      <span className="inline-actions">
        <label htmlFor={`${formId}-input`} className="inline-entry-label">
          {label}
        </label>
        <input
          ref={input}
          id={`${formId}-input`}
          className="input"
          type={secret ? 'password' : 'text'}
          autoComplete="off"
          placeholder={placeholder}
          value={value}
          data-testid={`${formId}-input`}
          onChange={(e) => {
            setValue(e.target.value);
            setProblems({});
          }}
          {...describedBy(formId, 'value', problems)}
        />
        <button type="submit" className="button button-small" data-testid={`${formId}-submit`}>
          {submitLabel}
        </button>
        <button type="button" className="button button-small" onClick={onCancel}>
          Cancel
        </button>
      </span>
      <FieldProblem formId={formId} field="value" problems={problems} />
    </form>
  );
}
