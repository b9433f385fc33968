/**
 * The Run form generated from a tool's input schema (renderer/src/schema-form/model.ts): which
 * fields a schema becomes, the arguments a filled form makes, the problems it reports, the way
 * back from JSON to the form — and, as properties over random schemas, that arguments the form
 * accepts always validate against the schema (ajv, as the gate checks them) and that JSON the form
 * says it can hold comes back unchanged.
 */
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildArguments,
  checkValue,
  draftFrom,
  emptyDraft,
  fieldsFor,
  labelAt,
  type Draft,
  type FieldSpec,
} from '../../../renderer/src/schema-form/model';

type ObjectSpec = Extract<FieldSpec, { kind: 'object' }>;
const ajv = new Ajv({ strict: false, allErrors: true });
const validates = (schema: object, value: unknown) => ajv.validate(schema, value) === true;

/** A schema that uses every kind the form supports. */
const ISSUE_SCHEMA = {
  type: 'object',
  properties: {
    repo: { type: 'string', description: 'owner/name of the repository', minLength: 3 },
    number: { type: 'integer', minimum: 1, description: 'The issue number' },
    weight: { type: 'number', exclusiveMaximum: 10 },
    notify: { type: 'boolean', default: true },
    state: { type: 'string', enum: ['open', 'closed'], default: 'open' },
    labels: { type: 'array', items: { type: 'string' }, maxItems: 3 },
    options: {
      type: 'object',
      properties: { reason: { type: 'string', title: 'Why' }, depth: { type: 'integer', default: 2 } },
      required: ['reason'],
    },
    priority: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    color: { oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }] },
    assignee: { $ref: '#/$defs/User' },
    payload: { oneOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'array' }] },
  },
  required: ['repo', 'number'],
  $defs: { User: { type: 'object', title: 'Assignee', properties: { login: { type: 'string' } }, required: ['login'] } },
} as const;

const fill = (spec: ObjectSpec, patch: Record<string, Draft>): Draft => {
  const empty = emptyDraft(spec) as Extract<Draft, { kind: 'object' }>;
  return { ...empty, fields: { ...empty.fields, ...patch } };
};

describe('a tool schema becomes a form', () => {
  const spec = fieldsFor(ISSUE_SCHEMA) as ObjectSpec;
  const prop = (name: string) => spec.properties.find((p) => p.name === name)!;

  it('each property becomes a field of its kind, with required marks, descriptions as help and defaults', () => {
    expect(spec.properties.map((p) => [p.name, p.spec.kind, p.required])).toEqual([
      ['repo', 'string', true],
      ['number', 'number', true],
      ['weight', 'number', false],
      ['notify', 'boolean', false],
      ['state', 'enum', false],
      ['labels', 'array', false],
      ['options', 'object', false],
      ['priority', 'number', false],
      ['color', 'enum', false],
      ['assignee', 'object', false],
      ['payload', 'json', false],
    ]);
    expect(prop('repo').spec).toMatchObject({ label: 'Repo', description: 'owner/name of the repository', minLength: 3 });
    expect(prop('number').spec).toMatchObject({ integer: true, minimum: 1 });
    expect(prop('priority').spec).toMatchObject({ nullable: true, integer: true });
    expect(prop('color').spec).toMatchObject({ options: [{ value: 'r', label: 'Red' }, { value: 'g', label: 'Green' }] });
    expect(prop('assignee').spec).toMatchObject({ label: 'Assignee', properties: [{ name: 'login', required: true }] });
    expect(prop('payload').spec).toMatchObject({ why: 'it accepts one of several shapes (oneOf)' });
    // Defaults fill the empty form.
    expect(buildArguments(spec, emptyDraft(spec)).args).toEqual({ notify: true, state: 'open' });
  });

  it('an empty form says what is missing, field by field, and sends nothing', () => {
    const { problems } = buildArguments(spec, emptyDraft(spec));
    expect(problems).toEqual({ '/repo': 'This is required.', '/number': 'This is required.' });
  });

  it('typed values become arguments of the schema’s types; bad ones are problems at their field', () => {
    const good = fill(spec, {
      repo: { kind: 'string', text: 'acme/mobile' },
      number: { kind: 'number', text: '42' },
      labels: { kind: 'array', items: [{ kind: 'string', text: 'bug' }] },
      options: { kind: 'object', present: true, fields: { reason: { kind: 'string', text: 'fixed' }, depth: { kind: 'number', text: '2' } }, extra: {} },
    });
    const built = buildArguments(spec, good);
    expect(built.problems).toEqual({});
    expect(built.args).toEqual({ repo: 'acme/mobile', number: 42, notify: true, state: 'open', labels: ['bug'], options: { reason: 'fixed', depth: 2 } });
    expect(validates(ISSUE_SCHEMA, built.args)).toBe(true);

    const bad = fill(spec, {
      repo: { kind: 'string', text: 'ab' },
      number: { kind: 'number', text: '4.5' },
      weight: { kind: 'number', text: 'ten' },
      labels: { kind: 'array', items: ['a', 'b', 'c', 'd'].map((text) => ({ kind: 'string' as const, text })) },
      options: { kind: 'object', present: true, fields: { reason: { kind: 'string', text: '' }, depth: { kind: 'number', text: '3' } }, extra: {} },
      payload: { kind: 'json', text: '{oops' },
    });
    const { problems } = buildArguments(spec, bad);
    expect(problems['/repo']).toBe('Enter at least 3 characters.');
    expect(problems['/number']).toBe('Enter a whole number, such as 3.');
    expect(problems['/weight']).toBe('Enter a number, such as 3 or 2.5.');
    expect(problems['/labels']).toBe('Use at most 3 items.');
    expect(problems['/options/reason']).toBe('This is required.');
    expect(problems['/payload']).toMatch(/^This isn't valid JSON/);
    expect(labelAt(spec, '/options/reason')).toBe('Options › Why');
    expect(labelAt(spec, '/labels/1')).toBe('Labels › Item 2');
  });

  it('an optional group is left out until it is added, defaults and all', () => {
    const built = buildArguments(spec, fill(spec, { repo: { kind: 'string', text: 'a/b' }, number: { kind: 'number', text: '1' } }));
    expect(built.args).not.toHaveProperty('options');
    expect(built.args).not.toHaveProperty('assignee');
  });

  it('JSON comes back into the form; values the form cannot hold are reported, not dropped silently', () => {
    const ok = draftFrom(spec, { repo: 'acme/mobile', number: 7, options: { reason: 'x' }, extraThing: 1 });
    expect(ok.misfits).toEqual([]);
    expect(buildArguments(spec, ok.draft).args).toEqual({ repo: 'acme/mobile', number: 7, options: { reason: 'x' }, extraThing: 1 });
    expect(draftFrom(spec, { repo: 5, number: 'x', state: 'merged', labels: [] }).misfits.sort()).toEqual(['/labels', '/number', '/repo', '/state']);
  });

  it('server text in the schema is shown with hidden characters made visible', () => {
    const s = fieldsFor({ type: 'object', properties: { p: { type: 'string', title: 'file\u202Egpj.sh', description: 'ok\u200Bthen' } } }) as ObjectSpec;
    expect(s.properties[0]!.spec.label).toBe('file\\u202egpj.sh');
    expect(s.properties[0]!.spec.description).toBe('ok\\u200bthen');
  });

  it('recursive $refs and shapes the form cannot show become JSON boxes, so every schema can be filled', () => {
    const tree = fieldsFor({ type: 'object', properties: { node: { $ref: '#/$defs/Node' } }, $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } } }) as ObjectSpec;
    const node = tree.properties[0]!.spec as ObjectSpec;
    expect(node.properties[0]!.spec).toMatchObject({ kind: 'json', why: 'it refers to itself' });
    expect(fieldsFor({ type: 'string' })).toBeNull();
    expect(fieldsFor({ type: 'object' })).toMatchObject({ kind: 'object', properties: [] });
  });

  it('the JSON editor’s values are checked with the same rules', () => {
    expect(checkValue(spec, { repo: 'abc' })).toEqual({ '/number': 'This is required.' });
    expect(checkValue(spec, { repo: 'abc', number: 0, state: 'merged' })).toEqual({ '/number': 'Enter 1 or more.', '/state': 'Choose one of: open, closed.' });
  });
});

// ---- properties over random schemas -----------------------------------------------------------

/** Random schemas in the subset the form shows as fields (plus JSON boxes), depth-limited. */
const schemaArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ node: Record<string, unknown>; object: Record<string, unknown> }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constant('string'), minLength: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), maxLength: fc.option(fc.integer({ min: 3, max: 8 }), { nil: undefined }) }, { requiredKeys: ['type'] }),
    fc.record({ type: fc.constantFrom('number', 'integer'), minimum: fc.option(fc.integer({ min: -50, max: 0 }), { nil: undefined }), maximum: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) }, { requiredKeys: ['type'] }),
    fc.constant({ type: 'boolean' }),
    fc.record({ type: fc.constant('string'), enum: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }) }),
    fc.record({ type: fc.constant(['string', 'null']) }),
    tie('node').map((items) => ({ type: 'array', items })),
    fc.record({ type: fc.constant('array'), items: tie('node'), minItems: fc.integer({ min: 0, max: 2 }), maxItems: fc.integer({ min: 2, max: 4 }) }),
    fc.constant({ description: 'anything, as JSON' }),
    tie('object'),
  ),
  object: fc
    .dictionary(fc.constantFrom('a', 'b', 'c', 'name', 'n'), tie('node'), { maxKeys: 4 })
    .chain((properties) =>
      fc.record({
        type: fc.constant('object'),
        properties: fc.constant(properties),
        required: fc.subarray(Object.keys(properties)),
        additionalProperties: fc.boolean(),
      }),
    ),
})).object;

/** Random values that are valid for `schema` (and the form's rules). */
function valueArb(schema: Record<string, unknown>): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.type)) return fc.oneof(fc.constant(null), fc.string({ maxLength: 6 }));
  switch (schema.type) {
    case 'string':
      return fc.string({ minLength: (schema.minLength as number | undefined) ?? 0, maxLength: Math.max((schema.maxLength as number | undefined) ?? 8, (schema.minLength as number | undefined) ?? 0) });
    case 'integer':
      return fc.integer({ min: (schema.minimum as number | undefined) ?? -1000, max: (schema.maximum as number | undefined) ?? 1000 });
    case 'number':
      return fc.double({ min: (schema.minimum as number | undefined) ?? -1e6, max: (schema.maximum as number | undefined) ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const min = (schema.minItems as number | undefined) ?? 0;
      return fc.array(valueArb(schema.items as Record<string, unknown>), { minLength: min, maxLength: Math.max(min, (schema.maxItems as number | undefined) ?? 3) });
    }
    case 'object': {
      const props = schema.properties as Record<string, Record<string, unknown>>;
      const required = schema.required as string[];
      return fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, valueArb(s)])), { requiredKeys: required });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Random typing into every field of a form (the way a person might fill it, right or wrong). */
function typedArb(spec: FieldSpec, depth = 0): fc.Arbitrary<Draft> {
  switch (spec.kind) {
    case 'string':
      return fc.string({ maxLength: 9 }).map((text) => ({ kind: 'string' as const, text }));
    case 'number':
      return fc.oneof(fc.constantFrom('', '1', '-3', '2.5', '1e3', 'abc', '0x10', ' 7 ', '1e400', '-0', '999999'), fc.integer({ min: -100, max: 100 }).map(String)).map((text) => ({ kind: 'number' as const, text }));
    case 'boolean':
      return fc.constantFrom(null, true, false).map((value) => ({ kind: 'boolean' as const, value }));
    case 'enum':
      return fc.integer({ min: -1, max: spec.options.length - 1 }).map((index) => ({ kind: 'enum' as const, index }));
    case 'array':
      return depth > 4 ? fc.constant({ kind: 'array' as const, items: [] }) : fc.array(typedArb(spec.items, depth + 1), { maxLength: 5 }).map((items) => ({ kind: 'array' as const, items }));
    case 'object':
      return fc
        .record({ present: fc.boolean(), fields: fc.record(Object.fromEntries(spec.properties.map((p) => [p.name, typedArb(p.spec, depth + 1)]))) })
        .map(({ present, fields }) => ({ kind: 'object' as const, present: depth === 0 || present, fields: fields as Record<string, Draft>, extra: {} }));
    case 'json':
      return fc.oneof(fc.constantFrom('', '{', 'null'), fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))).map((text) => ({ kind: 'json' as const, text }));
  }
}

describe('properties of the generated form', () => {
  it('whatever is typed, arguments the form accepts (no problems) validate against the tool’s schema', () => {
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => typedArb(fieldsFor(schema)!).map((draft) => ({ schema, draft }))),
        ({ schema, draft }) => {
          const spec = fieldsFor(schema)!;
          const { args, problems } = buildArguments(spec, draft);
          if (Object.keys(problems).length === 0) expect(validates(schema, args), JSON.stringify({ schema, args, errors: ajv.errors })).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  }, 60_000);

  it('valid arguments put into the form come back unchanged whenever the form says it can hold them, and then pass its checks', () => {
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => valueArb(schema).map((value) => ({ schema, value }))),
        ({ schema, value }) => {
          fc.pre(validates(schema, value));
          const spec = fieldsFor(schema)!;
          const { draft, misfits } = draftFrom(spec, value);
          if (misfits.length > 0) return;
          const built = buildArguments(spec, draft);
          expect(JSON.stringify(built.args)).toBe(JSON.stringify(value));
          expect(built.problems).toEqual({});
        },
      ),
      { numRuns: 400 },
    );
  }, 60_000);

  it('the form’s own checks agree with the schema on valid arguments (no false problems)', () => {
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => valueArb(schema).map((value) => ({ schema, value }))),
        ({ schema, value }) => {
          fc.pre(validates(schema, value));
          expect(checkValue(fieldsFor(schema)!, value)).toEqual({});
        },
      ),
      { numRuns: 400 },
    );
  }, 60_000);
});
