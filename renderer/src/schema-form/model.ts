/**
 * A tool's input schema as a form: which fields to show (`fieldsFor`), what a person typed
 * (`Draft`), the arguments that makes (`buildArguments`), whether they fit the schema
 * (`checkValue`) and the way back from arguments to a filled form (`draftFrom`) so the raw JSON
 * editor and the form stay in sync.
 *
 * The schema is the server's (untrusted): every text taken from it is shown through
 * `visibleText`, and nothing here runs a server-supplied regular expression (`pattern` is left to
 * the gate, which checks it in linear time). What the form cannot show as fields (`oneOf` of
 * objects, tuples, recursive `$ref`s, …) becomes a JSON box for just that value, so every schema
 * can still be filled in.
 *
 * Pure (no React, no DOM), so unit and property tests can drive it.
 */
import { makeHiddenVisible } from '../../../shared/display';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

/** What every field spec carries besides its kind. */
interface Common {
  /** Title or humanized property name, hidden characters made visible. */
  label: string;
  /** The schema's description (the server's words), hidden characters made visible. */
  description: string | null;
  /** The schema's default, if it is one the field can hold. */
  default?: Json;
  /** `null` is an accepted value (`type: [x, "null"]`, `anyOf: [x, {type: "null"}]`). */
  nullable: boolean;
}

/** One field of the form. */
export type FieldSpec = Common &
  (
    | { kind: 'string'; minLength?: number; maxLength?: number; format?: string; multiline: boolean }
    | { kind: 'number'; integer: boolean; minimum?: number; maximum?: number; exclusiveMinimum?: number; exclusiveMaximum?: number }
    | { kind: 'boolean' }
    | { kind: 'enum'; options: Array<{ value: Json; label: string }> }
    | { kind: 'array'; items: FieldSpec; minItems?: number; maxItems?: number }
    | { kind: 'object'; properties: PropertySpec[]; additional: boolean }
    /** A value the form shows as a JSON box (schemas it cannot show as fields). */
    | { kind: 'json'; why: string }
  );

/** A property of an object field. */
export interface PropertySpec {
  name: string;
  required: boolean;
  spec: FieldSpec;
}

/** What a person typed, per field; the shape follows the spec. */
export type Draft =
  | { kind: 'string'; text: string }
  | { kind: 'number'; text: string }
  /** `null`: not set (an optional boolean without a default). */
  | { kind: 'boolean'; value: boolean | null }
  /** Index into the options; -1: none chosen. */
  | { kind: 'enum'; index: number }
  | { kind: 'array'; items: Draft[] }
  /**
   * `present`: whether an optional group is sent at all (the person added it); always true for a
   * required one. `extra`: values from the JSON editor for properties the schema does not list
   * (kept as they are).
   */
  | { kind: 'object'; present: boolean; fields: Record<string, Draft>; extra: Record<string, Json> }
  | { kind: 'json'; text: string };

/** Problems by field path (`/files/0/name`; '' is the whole arguments object). */
export type Problems = Record<string, string>;

const MAX_DEPTH = 8;
const MAX_FIELDS = 400;

/** Text from the schema as it may be shown: hidden and direction-changing characters made visible, length capped. */
export function visibleText(text: string, max = 2000): string {
  const visible = makeHiddenVisible(text);
  return visible.length > max ? `${visible.slice(0, max)}…` : visible;
}

/** "file_path" → "File path", "maxResults" → "Max results". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? visibleText(words[0]!.toUpperCase() + words.slice(1), 200) : visibleText(name, 200);
}

/** A path in words for messages: `/files/0/name` → "files › 1 › name". */
export function pathWords(path: string): string {
  if (path === '') return 'the arguments';
  return path
    .split('/')
    .slice(1)
    .map((p) => unescapePointer(p))
    .map((p) => (/^\d+$/.test(p) ? String(Number(p) + 1) : visibleText(p, 200)))
    .join(' › ');
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
/** The path of a child: property name or index appended, JSON-pointer escaped. */
export const childPath = (path: string, key: string | number) => `${path}/${escapePointer(String(key))}`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

/** Resolves a local `$ref` (`#/$defs/X`, `#/definitions/X`) against the root schema. */
function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    if (!isObject(at)) return undefined;
    at = at[unescapePointer(part)];
  }
  return isObject(at) ? at : undefined;
}

/**
 * The form for a tool's input schema: the top-level object's properties, or null when the schema
 * is not an object schema the form can show (the Run form then offers only the JSON editor).
 */
export function fieldsFor(inputSchema: Record<string, unknown>): FieldSpec | null {
  const budget = { fields: 0 };
  const spec = specOf(inputSchema, inputSchema, 'Arguments', 0, budget, new Set());
  return spec.kind === 'object' ? spec : null;
}

function specOf(schema: unknown, root: Schema, name: string, depth: number, budget: { fields: number }, refs: Set<string>): FieldSpec {
  budget.fields += 1;
  const base = (s: Schema, nullable: boolean): Common => ({
    label: typeof s.title === 'string' && s.title.trim() ? visibleText(s.title.trim(), 200) : humanize(name),
    description: typeof s.description === 'string' && s.description.trim() ? visibleText(s.description.trim()) : null,
    nullable,
  });
  const json = (s: Schema, why: string): FieldSpec => ({ ...base(s, false), kind: 'json', why });
  if (!isObject(schema)) return { label: humanize(name), description: null, nullable: false, kind: 'json', why: 'the schema gives no type' };
  const s: Schema = schema;
  if (depth > MAX_DEPTH || budget.fields > MAX_FIELDS) return json(s, 'it is nested too deeply for a form');

  // $ref (local only); a cycle is shown as JSON.
  if (typeof s.$ref === 'string') {
    if (refs.has(s.$ref)) return json(s, 'it refers to itself');
    const target = resolveRef(root, s.$ref);
    if (!target) return json(s, `it refers to ${visibleText(s.$ref, 200)}, which the form cannot follow`);
    const { $ref: _ref, ...rest } = s;
    return specOf({ ...target, ...rest }, root, name, depth, budget, new Set([...refs, s.$ref]));
  }
  // A single allOf is a wrapper (older Pydantic output); anything else would need merging.
  if (Array.isArray(s.allOf)) {
    if (s.allOf.length !== 1) return json(s, 'it combines several schemas (allOf)');
    const { allOf, ...rest } = s;
    return specOf({ ...(allOf[0] as Schema), ...rest }, root, name, depth, budget, refs);
  }

  // anyOf/oneOf: "X or null" is a nullable X; consts with titles are an enum; anything else is JSON.
  let nullable = false;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (!Array.isArray(options)) continue;
    if (options.every((o) => isObject(o) && 'const' in o)) {
      const out: Array<{ value: Json; label: string }> = options.map((o) => {
        const v = (o as Schema).const as Json;
        return { value: v, label: typeof (o as Schema).title === 'string' ? visibleText(String((o as Schema).title), 200) : optionLabel(v) };
      });
      return { ...base(s, false), kind: 'enum', options: out, ...defaultIf(s.default, (d) => out.some((o) => sameJson(o.value, d))) };
    }
    const nonNull = options.filter((o) => !(isObject(o) && o.type === 'null'));
    if (nonNull.length === 1 && options.length === 2) {
      const { [key]: _opts, ...rest } = s;
      const inner = specOf({ ...(nonNull[0] as Schema), ...rest }, root, name, depth, budget, refs);
      return { ...inner, nullable: true };
    }
    return json(s, `it accepts one of several shapes (${key})`);
  }

  let type = s.type;
  if (Array.isArray(type)) {
    const kinds = type.filter((t) => t !== 'null');
    nullable = kinds.length < type.length;
    type = kinds.length === 1 ? kinds[0] : kinds.length === 2 && kinds.includes('integer') && kinds.includes('number') ? 'number' : undefined;
    if (type === undefined) return json(s, 'it accepts values of several types');
  }
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    const options = (s.enum as Json[]).filter((v) => v !== null || nullable).map((v) => ({ value: v, label: optionLabel(v) }));
    return { ...base(s, nullable), kind: 'enum', options, ...defaultIf(s.default, (d) => options.some((o) => sameJson(o.value, d))) };
  }
  if ('const' in s) return { ...base(s, nullable), kind: 'enum', options: [{ value: s.const as Json, label: optionLabel(s.const as Json) }], default: s.const as Json };
  if (type === undefined && isObject(s.properties)) type = 'object';

  switch (type) {
    case 'string': {
      const format = typeof s.format === 'string' ? s.format : undefined;
      const maxLength = count(s.maxLength);
      return {
        ...base(s, nullable),
        kind: 'string',
        ...(count(s.minLength) !== undefined ? { minLength: count(s.minLength) } : {}),
        ...(maxLength !== undefined ? { maxLength } : {}),
        ...(format ? { format } : {}),
        multiline: maxLength === undefined || maxLength > 200 ? /(text|body|content|description|message|query|prompt|code|script|markdown|notes?)$/i.test(name) : false,
        ...defaultIf(s.default, (d) => typeof d === 'string'),
      };
    }
    case 'number':
    case 'integer':
      return {
        ...base(s, nullable),
        kind: 'number',
        integer: type === 'integer',
        ...(finite(s.minimum) !== undefined ? { minimum: finite(s.minimum) } : {}),
        ...(finite(s.maximum) !== undefined ? { maximum: finite(s.maximum) } : {}),
        ...(finite(s.exclusiveMinimum) !== undefined ? { exclusiveMinimum: finite(s.exclusiveMinimum) } : {}),
        ...(finite(s.exclusiveMaximum) !== undefined ? { exclusiveMaximum: finite(s.exclusiveMaximum) } : {}),
        ...defaultIf(s.default, (d) => typeof d === 'number' && Number.isFinite(d) && (type !== 'integer' || Number.isInteger(d))),
      };
    case 'boolean':
      return { ...base(s, nullable), kind: 'boolean', ...defaultIf(s.default, (d) => typeof d === 'boolean') };
    case 'array': {
      if (Array.isArray(s.items) || Array.isArray(s.prefixItems)) return json(s, 'it is a list with a fixed shape per position');
      const items = specOf(s.items ?? {}, root, `${name} item`, depth + 1, budget, refs);
      return {
        ...base(s, nullable),
        kind: 'array',
        items: { ...items, label: isObject(s.items) && typeof s.items.title === 'string' ? items.label : 'Item' },
        ...(count(s.minItems) !== undefined ? { minItems: count(s.minItems) } : {}),
        ...(count(s.maxItems) !== undefined ? { maxItems: count(s.maxItems) } : {}),
        ...defaultIf(s.default, (d) => Array.isArray(d)),
      };
    }
    case 'object': {
      const props = isObject(s.properties) ? s.properties : {};
      const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
      const properties: PropertySpec[] = Object.entries(props).map(([prop, sub]) => ({
        name: prop,
        required: required.has(prop),
        spec: specOf(sub, root, prop, depth + 1, budget, refs),
      }));
      // Required properties the schema does not describe still need a value: a JSON box each.
      for (const r of required) if (!(r in props)) properties.push({ name: r, required: true, spec: { label: humanize(r), description: null, nullable: false, kind: 'json', why: 'the schema requires it without describing it' } });
      return { ...base(s, nullable), kind: 'object', properties, additional: s.additionalProperties !== false, ...defaultIf(s.default, isObject) };
    }
    default:
      return json(s, 'the schema gives no type');
  }
}

function defaultIf(value: unknown, fits: (v: unknown) => boolean): { default?: Json } {
  return value !== undefined && fits(value) ? { default: value as Json } : {};
}

function optionLabel(v: Json): string {
  return typeof v === 'string' ? visibleText(v, 200) : JSON.stringify(v);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---- drafts --------------------------------------------------------------------------------

/**
 * The empty form for a spec, filled with the schema's defaults. An optional group starts left out
 * (its defaults show once the person adds it): a group nobody asked for is never sent.
 */
export function emptyDraft(spec: FieldSpec, required = true): Draft {
  if (spec.kind === 'object' && !required) return { kind: 'object', present: false, fields: Object.fromEntries(spec.properties.map((p) => [p.name, emptyDraft(p.spec, p.required)])), extra: {} };
  if (spec.default !== undefined) {
    const filled = draftFrom(spec, spec.default);
    if (filled.misfits.length === 0) return filled.draft;
  }
  switch (spec.kind) {
    case 'string':
      return { kind: 'string', text: '' };
    case 'number':
      return { kind: 'number', text: '' };
    case 'boolean':
      return { kind: 'boolean', value: null };
    case 'enum':
      return { kind: 'enum', index: -1 };
    case 'array':
      // A required list starts with the items it needs; an optional one empty (left out).
      return { kind: 'array', items: Array.from({ length: required ? (spec.minItems ?? 0) : 0 }, () => emptyDraft(spec.items)) };
    case 'object':
      return { kind: 'object', present: true, fields: Object.fromEntries(spec.properties.map((p) => [p.name, emptyDraft(p.spec, p.required)])), extra: {} };
    case 'json':
      return { kind: 'json', text: '' };
  }
}

/**
 * A filled form for `value` (the JSON editor's arguments), and the paths whose value the form
 * cannot hold as it is: a text where a number is expected, a value not among the choices, or an
 * empty value the form would leave out (an optional "" or [], a null where the field cannot send
 * one). Those are reported, never changed silently: with no misfits, the form builds exactly
 * `value` again (a property test holds this).
 */
export function draftFrom(spec: FieldSpec, value: unknown, path = ''): { draft: Draft; misfits: string[] } {
  const misfits: string[] = [];
  const draft = fill(spec, value, path, true, misfits);
  return { draft, misfits };
}

function fill(spec: FieldSpec, value: unknown, path: string, required: boolean, misfits: string[]): Draft {
  if (value === undefined) return emptyDraftNoDefault(spec, required);
  if (value === null && spec.kind !== 'json' && spec.kind !== 'enum') {
    // The form sends null only for an empty, required, nullable text or number field.
    if (!(spec.nullable && required && (spec.kind === 'string' || spec.kind === 'number'))) misfits.push(path);
    return emptyDraftNoDefault(spec, required);
  }
  switch (spec.kind) {
    case 'string':
      if (typeof value !== 'string' || value === '') return misfit(spec, path, misfits);
      return { kind: 'string', text: value };
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value) || Object.is(value, -0)) return misfit(spec, path, misfits);
      return { kind: 'number', text: String(value) };
    case 'boolean':
      if (typeof value !== 'boolean') return misfit(spec, path, misfits);
      return { kind: 'boolean', value };
    case 'enum': {
      const index = spec.options.findIndex((o) => sameJson(o.value, value));
      if (index < 0) misfits.push(path);
      return { kind: 'enum', index };
    }
    case 'array':
      if (!Array.isArray(value) || (value.length === 0 && !required)) return misfit(spec, path, misfits);
      return { kind: 'array', items: value.map((v, i) => fill(spec.items, v, childPath(path, i), true, misfits)) };
    case 'object': {
      if (!isObject(value)) return misfit(spec, path, misfits);
      const fields: Record<string, Draft> = {};
      for (const p of spec.properties) fields[p.name] = fill(p.spec, value[p.name], childPath(path, p.name), p.required, misfits);
      const extra: Record<string, Json> = {};
      for (const [k, v] of Object.entries(value)) if (!spec.properties.some((p) => p.name === k)) extra[k] = v as Json;
      if (!spec.additional && Object.keys(extra).length) misfits.push(...Object.keys(extra).map((k) => childPath(path, k)));
      return { kind: 'object', present: true, fields, extra };
    }
    case 'json':
      return { kind: 'json', text: JSON.stringify(value, null, 2) };
  }
}

function misfit(spec: FieldSpec, path: string, misfits: string[]): Draft {
  misfits.push(path);
  return emptyDraftNoDefault(spec);
}

function emptyDraftNoDefault(spec: FieldSpec, required = true): Draft {
  return emptyDraft({ ...spec, default: undefined } as FieldSpec, required);
}

// ---- from the form to arguments ------------------------------------------------------------

/** Marks "no value": the property is left out of the arguments. */
const ABSENT = Symbol('absent');
type Built = Json | typeof ABSENT;

/**
 * The arguments the form makes, and every problem found on the way (a number that is not one, a
 * required field left empty, a value out of range), by field path.
 *
 * Why both: the Run button sends only when there are no problems, and each problem is shown next
 * to its field; the JSON view shows the arguments as they are so far.
 */
export function buildArguments(spec: FieldSpec, draft: Draft): { args: Record<string, unknown>; problems: Problems } {
  const problems: Problems = {};
  const built = build(spec, draft, '', true, problems);
  const args = built === ABSENT || !isObject(built) ? {} : built;
  for (const [path, problem] of Object.entries(checkValue(spec, args))) problems[path] ??= problem;
  return { args, problems };
}

function build(spec: FieldSpec, draft: Draft, path: string, required: boolean, problems: Problems): Built {
  switch (draft.kind) {
    case 'string':
      if (draft.text === '') return spec.nullable && required ? null : ABSENT;
      return draft.text;
    case 'number': {
      const text = draft.text.trim();
      if (text === '') return spec.nullable && required ? null : ABSENT;
      const n = Number(text);
      if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text) || !Number.isFinite(n)) {
        problems[path] = spec.kind === 'number' && spec.integer ? 'Enter a whole number, such as 3.' : 'Enter a number, such as 3 or 2.5.';
        return ABSENT;
      }
      return n;
    }
    case 'boolean':
      return draft.value === null ? ABSENT : draft.value;
    case 'enum':
      if (spec.kind !== 'enum' || draft.index < 0 || draft.index >= spec.options.length) return ABSENT;
      return spec.options[draft.index]!.value;
    case 'array': {
      if (spec.kind !== 'array') return ABSENT;
      if (draft.items.length === 0 && !required) return ABSENT;
      return draft.items.map((item, i) => {
        const v = build(spec.items, item, childPath(path, i), true, problems);
        return v === ABSENT ? null : v;
      });
    }
    case 'object': {
      if (spec.kind !== 'object' || (!draft.present && !required)) return ABSENT;
      const out: Record<string, Json> = {};
      for (const p of spec.properties) {
        const field = draft.fields[p.name];
        if (!field) continue;
        const v = build(p.spec, field, childPath(path, p.name), p.required, problems);
        if (v !== ABSENT) out[p.name] = v;
      }
      for (const [k, v] of Object.entries(draft.extra)) if (!(k in out)) out[k] = v;
      return out;
    }
    case 'json': {
      if (draft.text.trim() === '') return ABSENT;
      try {
        return JSON.parse(draft.text) as Json;
      } catch (error) {
        problems[path] = `This isn't valid JSON (${error instanceof Error ? error.message : String(error)}).`;
        return ABSENT;
      }
    }
  }
}

// ---- checking arguments against the form's rules ------------------------------------------

/**
 * What is wrong with `value` under `spec`, by path: missing required values, wrong types, values
 * out of range or not among the choices. The same rules for the form and the JSON editor.
 *
 * Not checked here: `pattern` (a server's regular expression is only ever run by the gate, in
 * linear time) and formats; the gate checks the whole schema again before anything is sent.
 */
export function checkValue(spec: FieldSpec, value: unknown, path = ''): Problems {
  const problems: Problems = {};
  check(spec, value, path, problems);
  return problems;
}

function check(spec: FieldSpec, value: unknown, path: string, problems: Problems): void {
  if (value === null) {
    if (!spec.nullable && !(spec.kind === 'enum' && spec.options.some((o) => o.value === null)) && spec.kind !== 'json') problems[path] = 'This cannot be empty (null).';
    return;
  }
  switch (spec.kind) {
    case 'string':
      if (typeof value !== 'string') problems[path] = 'Enter text here.';
      else if (spec.minLength !== undefined && [...value].length < spec.minLength) problems[path] = `Enter at least ${spec.minLength} character${spec.minLength === 1 ? '' : 's'}.`;
      else if (spec.maxLength !== undefined && [...value].length > spec.maxLength) problems[path] = `Use at most ${spec.maxLength} character${spec.maxLength === 1 ? '' : 's'}.`;
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) problems[path] = spec.integer ? 'Enter a whole number, such as 3.' : 'Enter a number, such as 3 or 2.5.';
      else if (spec.integer && !Number.isInteger(value)) problems[path] = 'Enter a whole number, such as 3.';
      else if (spec.minimum !== undefined && value < spec.minimum) problems[path] = `Enter ${spec.minimum} or more.`;
      else if (spec.maximum !== undefined && value > spec.maximum) problems[path] = `Enter ${spec.maximum} or less.`;
      else if (spec.exclusiveMinimum !== undefined && value <= spec.exclusiveMinimum) problems[path] = `Enter more than ${spec.exclusiveMinimum}.`;
      else if (spec.exclusiveMaximum !== undefined && value >= spec.exclusiveMaximum) problems[path] = `Enter less than ${spec.exclusiveMaximum}.`;
      return;
    case 'boolean':
      if (typeof value !== 'boolean') problems[path] = 'Choose yes or no.';
      return;
    case 'enum':
      if (!spec.options.some((o) => sameJson(o.value, value))) problems[path] = `Choose one of: ${spec.options.map((o) => o.label).join(', ')}.`;
      return;
    case 'array':
      if (!Array.isArray(value)) {
        problems[path] = 'This should be a list.';
        return;
      }
      if (spec.minItems !== undefined && value.length < spec.minItems) problems[path] = `Add at least ${spec.minItems} item${spec.minItems === 1 ? '' : 's'}.`;
      else if (spec.maxItems !== undefined && value.length > spec.maxItems) problems[path] = `Use at most ${spec.maxItems} item${spec.maxItems === 1 ? '' : 's'}.`;
      value.forEach((v, i) => check(spec.items, v, childPath(path, i), problems));
      return;
    case 'object': {
      if (!isObject(value)) {
        problems[path] = 'This should be a group of named values (a JSON object).';
        return;
      }
      for (const p of spec.properties) {
        const v = value[p.name];
        if (v === undefined) {
          if (p.required) problems[childPath(path, p.name)] = 'This is required.';
        } else check(p.spec, v, childPath(path, p.name), problems);
      }
      if (!spec.additional) {
        for (const k of Object.keys(value)) if (!spec.properties.some((p) => p.name === k)) problems[childPath(path, k)] = `The tool does not take “${visibleText(k, 200)}”.`;
      }
      return;
    }
    case 'json':
      return;
  }
}

/**
 * A field path in the form's words: each step's label ("Options › Depth"), falling back to the
 * property name or item number where the form has no field for it.
 */
export function labelAt(spec: FieldSpec, path: string): string {
  if (path === '') return 'The arguments';
  const words: string[] = [];
  let at: FieldSpec | undefined = spec;
  for (const raw of path.split('/').slice(1)) {
    const step = unescapePointer(raw);
    if (at?.kind === 'object') {
      const prop: PropertySpec | undefined = at.properties.find((p) => p.name === step);
      words.push(prop ? prop.spec.label : visibleText(step, 200));
      at = prop?.spec;
    } else if (at?.kind === 'array') {
      words.push(`${at.items.label} ${Number(step) + 1}`);
      at = at.items;
    } else {
      words.push(/^\d+$/.test(step) ? String(Number(step) + 1) : visibleText(step, 200));
      at = undefined;
    }
  }
  return words.join(' › ');
}

/**
 * Arguments typed as JSON, checked as the form checks its fields: the value, or null when the
 * text is not JSON or not an object; and every problem in words naming the field ("City: …").
 */
export function jsonProblems(spec: FieldSpec | null, text: string): { value: Record<string, unknown> | null; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { value: null, problems: [`This isn't valid JSON yet (${error instanceof Error ? error.message : String(error)}).`] };
  }
  if (!isObject(value)) return { value: null, problems: ['The arguments must be a JSON object, such as {"path": "notes.txt"}.'] };
  const found = spec ? checkValue(spec, value) : {};
  return { value, problems: Object.entries(found).map(([path, problem]) => `${spec ? labelAt(spec, path) : path}: ${problem}`) };
}
