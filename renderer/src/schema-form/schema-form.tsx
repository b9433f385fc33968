/**
 * The fields of a form generated from a tool's input schema (model.ts): text, numbers, yes/no,
 * choices, lists, nested groups and JSON boxes for what cannot be fields. Each field shows its
 * label, whether it is required, the schema's description and default as help text (visible, never
 * only on hover) and its problem right under it, tied with aria-describedby.
 */
import type { ReactNode } from 'react';
import { childPath, emptyDraft, visibleText, type Draft, type FieldSpec, type Problems } from './model';

/** An id for a field path that is safe in `id` and `aria-describedby` (no spaces). */
export function fieldDomId(formId: string, path: string): string {
  return `${formId}-field${path === '' ? '-root' : path.replace(/\s/g, '_')}`;
}
const problemDomId = (formId: string, path: string) => `${fieldDomId(formId, path)}-problem`;
const hintDomId = (formId: string, path: string) => `${fieldDomId(formId, path)}-hint`;

interface FieldProps {
  formId: string;
  spec: FieldSpec;
  draft: Draft;
  path: string;
  required: boolean;
  problems: Problems;
  onChange: (draft: Draft) => void;
  /** Shown instead of the spec's label (list items: "Item 2"). */
  label?: string;
  /** A list item: no required/optional mark (an item is there because the person added it). */
  item?: boolean;
}

function defaultText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The help under a field: the server's description, the default, the limits, in words. */
function hintOf(spec: FieldSpec): string | null {
  const parts: string[] = [];
  if (spec.description) parts.push(spec.description);
  if (spec.kind === 'string') {
    if (spec.minLength !== undefined && spec.maxLength !== undefined) parts.push(`${spec.minLength}–${spec.maxLength} characters.`);
    else if (spec.maxLength !== undefined) parts.push(`At most ${spec.maxLength} characters.`);
    else if (spec.minLength !== undefined && spec.minLength > 1) parts.push(`At least ${spec.minLength} characters.`);
    if (spec.format) parts.push(`Format: ${spec.format}.`);
  }
  if (spec.kind === 'number') {
    const lo = spec.minimum ?? spec.exclusiveMinimum;
    const hi = spec.maximum ?? spec.exclusiveMaximum;
    const kind = spec.integer ? 'A whole number' : 'A number';
    if (lo !== undefined && hi !== undefined) parts.push(`${kind} from ${lo} to ${hi}${spec.exclusiveMinimum !== undefined || spec.exclusiveMaximum !== undefined ? ' (limits excluded)' : ''}.`);
    else if (lo !== undefined) parts.push(`${kind}, ${spec.exclusiveMinimum !== undefined ? 'more than' : 'at least'} ${lo}.`);
    else if (hi !== undefined) parts.push(`${kind}, ${spec.exclusiveMaximum !== undefined ? 'less than' : 'at most'} ${hi}.`);
    else if (spec.integer) parts.push('A whole number.');
  }
  if (spec.kind === 'array' && (spec.minItems !== undefined || spec.maxItems !== undefined)) {
    parts.push(spec.minItems !== undefined && spec.maxItems !== undefined ? `${spec.minItems} to ${spec.maxItems} items.` : spec.minItems !== undefined ? `At least ${spec.minItems} items.` : `At most ${spec.maxItems} items.`);
  }
  if (spec.kind === 'json') parts.push(`Enter this as JSON: the form can't show it as fields because ${spec.why}.`);
  if (spec.default !== undefined && spec.kind !== 'object') parts.push(`Default: ${spec.kind === 'boolean' ? (spec.default ? 'yes' : 'no') : defaultText(spec.default)}.`);
  if (spec.nullable) parts.push('May be left empty (sent as null).');
  return parts.length ? parts.join(' ') : null;
}

function Mark({ required, item }: { required: boolean; item?: boolean }) {
  if (item) return null;
  return required ? <span className="required-mark"> (required)</span> : <span className="optional-mark"> (optional)</span>;
}

function Problem({ formId, path, problems }: { formId: string; path: string; problems: Problems }) {
  const problem = problems[path];
  if (!problem) return null;
  return (
    <p id={problemDomId(formId, path)} className="field-problem" data-testid={`run-problem-${path}`}>
      {problem}
    </p>
  );
}

function Hint({ formId, path, text }: { formId: string; path: string; text: string | null }) {
  if (!text) return null;
  return (
    <p id={hintDomId(formId, path)} className="field-hint">
      {text}
    </p>
  );
}

/** The props tying a control to its hint and problem. */
function controlProps(formId: string, path: string, hint: string | null, problems: Problems) {
  const described = [problems[path] ? problemDomId(formId, path) : null, hint ? hintDomId(formId, path) : null].filter(Boolean).join(' ');
  return {
    id: fieldDomId(formId, path),
    'aria-invalid': problems[path] ? (true as const) : undefined,
    'aria-describedby': described || undefined,
    'data-testid': `run-field-${path}`,
  };
}

/** One field of any kind (recursive for lists and groups). */
export function SchemaField(props: FieldProps): ReactNode {
  const { formId, spec, draft, path, required, problems, onChange } = props;
  const label = props.label ?? spec.label;
  const hint = hintOf(spec);
  const control = controlProps(formId, path, hint, problems);

  if (spec.kind === 'object' && draft.kind === 'object') {
    // An optional group is left out until the person adds it, so nothing they did not ask for is sent.
    if (!required && !draft.present) {
      return (
        <div className="schema-field" data-testid={`run-group-${path}`}>
          <span className="schema-label">
            {label}
            <Mark required={false} />
          </span>
          <Hint formId={formId} path={path} text={hint} />
          <div>
            <button type="button" className="button button-small" data-testid={`run-include-${path}`} onClick={() => onChange({ ...draft, present: true })}>
              Add {label.toLowerCase()}
            </button>
          </div>
        </div>
      );
    }
    return (
      <fieldset className="schema-group" data-testid={`run-group-${path}`} aria-describedby={control['aria-describedby']}>
        <legend>
          {label}
          <Mark required={required} item={props.item} />
        </legend>
        <Hint formId={formId} path={path} text={hint} />
        <Problem formId={formId} path={path} problems={problems} />
        <ObjectFields formId={formId} spec={spec} draft={draft} path={path} problems={problems} onChange={onChange} />
        {required ? null : (
          <div>
            <button type="button" className="button button-small" onClick={() => onChange({ ...draft, present: false })}>
              Leave out {label.toLowerCase()}
            </button>
          </div>
        )}
      </fieldset>
    );
  }
  if (spec.kind === 'array' && draft.kind === 'array') {
    const update = (i: number, item: Draft) => onChange({ kind: 'array', items: draft.items.map((d, j) => (j === i ? item : d)) });
    return (
      <fieldset className="schema-group" data-testid={`run-group-${path}`} aria-describedby={control['aria-describedby']}>
        <legend>
          {label}
          <Mark required={required} item={props.item} />
        </legend>
        <Hint formId={formId} path={path} text={hint} />
        <Problem formId={formId} path={path} problems={problems} />
        {draft.items.length === 0 ? <p className="muted small">No items yet.</p> : null}
        {draft.items.map((item, i) => (
          <div className="schema-array-item" key={i}>
            <SchemaField formId={formId} spec={spec.items} draft={item} path={childPath(path, i)} required item problems={problems} onChange={(d) => update(i, d)} label={`${spec.items.label} ${i + 1}`} />
            <button type="button" className="button button-small" onClick={() => onChange({ kind: 'array', items: draft.items.filter((_, j) => j !== i) })} aria-label={`Remove ${spec.items.label.toLowerCase()} ${i + 1} of ${label}`}>
              Remove
            </button>
          </div>
        ))}
        <div>
          <button type="button" className="button button-small" data-testid={`run-add-${path}`} onClick={() => onChange({ kind: 'array', items: [...draft.items, emptyDraft(spec.items)] })}>
            Add {spec.items.label.toLowerCase()}
          </button>
        </div>
      </fieldset>
    );
  }

  const labelEl = (
    <label htmlFor={control.id}>
      {label}
      <Mark required={required} item={props.item} />
    </label>
  );
  let input: ReactNode;
  if (spec.kind === 'string' && draft.kind === 'string') {
    const placeholder = spec.format === 'email' ? 'name@example.com' : spec.format === 'uri' || spec.format === 'url' ? 'https://…' : spec.format === 'date-time' ? '2025-01-31T12:00:00Z' : undefined;
    input = spec.multiline ? (
      <textarea className="input" rows={4} value={draft.text} onChange={(e) => onChange({ kind: 'string', text: e.target.value })} {...control} />
    ) : (
      <input className="input" type={spec.format === 'date' ? 'date' : 'text'} placeholder={placeholder} value={draft.text} onChange={(e) => onChange({ kind: 'string', text: e.target.value })} {...control} />
    );
  } else if (spec.kind === 'number' && draft.kind === 'number') {
    input = <input className="input" type="text" inputMode={spec.integer ? 'numeric' : 'decimal'} value={draft.text} onChange={(e) => onChange({ kind: 'number', text: e.target.value })} {...control} />;
  } else if (spec.kind === 'boolean' && draft.kind === 'boolean') {
    input = (
      <select className="input" value={draft.value === null ? '' : draft.value ? 'yes' : 'no'} onChange={(e) => onChange({ kind: 'boolean', value: e.target.value === '' ? null : e.target.value === 'yes' })} {...control}>
        <option value="">{required ? 'Choose…' : 'Not set'}</option>
        <option value="yes">Yes</option>
        <option value="no">No</option>
      </select>
    );
  } else if (spec.kind === 'enum' && draft.kind === 'enum') {
    input = (
      <select className="input" value={draft.index < 0 ? '' : String(draft.index)} onChange={(e) => onChange({ kind: 'enum', index: e.target.value === '' ? -1 : Number(e.target.value) })} {...control}>
        <option value="">{required ? 'Choose…' : 'Not set'}</option>
        {spec.options.map((o, i) => (
          <option key={i} value={String(i)}>
            {o.label}
          </option>
        ))}
      </select>
    );
  } else if (draft.kind === 'json') {
    input = <textarea className="input mono" rows={4} spellCheck={false} value={draft.text} onChange={(e) => onChange({ kind: 'json', text: e.target.value })} {...control} />;
  } else {
    input = <p className="muted">This field cannot be shown.</p>;
  }
  return (
    <div className="schema-field">
      {labelEl}
      {input}
      <Hint formId={formId} path={path} text={hint} />
      <Problem formId={formId} path={path} problems={problems} />
    </div>
  );
}

/** The properties of an object, one field each, plus the values from JSON the schema does not list. */
export function ObjectFields({
  formId,
  spec,
  draft,
  path,
  problems,
  onChange,
}: {
  formId: string;
  spec: Extract<FieldSpec, { kind: 'object' }>;
  draft: Extract<Draft, { kind: 'object' }>;
  path: string;
  problems: Problems;
  onChange: (draft: Draft) => void;
}) {
  const extra = Object.keys(draft.extra);
  return (
    <>
      {spec.properties.map((p) => (
        <SchemaField
          key={p.name}
          formId={formId}
          spec={p.spec}
          draft={draft.fields[p.name] ?? emptyDraft(p.spec, p.required)}
          path={childPath(path, p.name)}
          required={p.required}
          problems={problems}
          onChange={(d) => onChange({ ...draft, fields: { ...draft.fields, [p.name]: d } })}
        />
      ))}
      {extra.length ? (
        <p className="field-hint" data-testid={`run-extra-${path}`}>
          Also sent, from the JSON: {extra.map((k) => `“${visibleText(k, 200)}”`).join(', ')}. Edit or remove {extra.length === 1 ? 'it' : 'them'} in the JSON view.
        </p>
      ) : null}
    </>
  );
}
