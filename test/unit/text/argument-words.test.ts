import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentLines, argumentText, argumentTextOfJson, schemaChanges, stringWords } from '../../../shared/argument-words';

const schema = {
  type: 'object',
  properties: {
    subject: { type: 'string' },
    to: { type: 'string', description: 'Who receives it' },
    options: { type: 'object', properties: { format: { type: 'string' }, pages: { type: 'array', items: { type: 'number' } } } },
  },
  required: ['to'],
};

/** Every character that starts a line somewhere, or hides or reorders text. */
const BREAKING = /[\n\r\v\f\u0085\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200f\u{e0000}-\u{e007f}]/u;

describe('arguments in words', () => {
  it('labels each field with its name, required fields first, nested objects and lists indented', () => {
    const text = argumentText(argumentLines({ subject: 'Hello', options: { pages: [1, 2], format: 'pdf' }, to: 'alice@example.com' }, schema));
    expect(text).toBe(['to: alice@example.com', 'subject: Hello', 'options:', '  format: pdf', '  pages:', '    1. 1', '    2. 2'].join('\n'));
  });

  it('quotes a string that would read as something else: a number, an empty value, edge spaces, a quote', () => {
    expect(stringWords('42')).toBe('"42"');
    expect(stringWords('true')).toBe('"true"');
    expect(stringWords('')).toBe('""');
    expect(stringWords(' x')).toBe('" x"');
    expect(stringWords('say "hi"')).toBe('"say \\"hi\\""');
    expect(stringWords('C:\\temp')).toBe('"C:\\\\temp"');
    expect(stringWords('plain words, fine')).toBe('plain words, fine');
  });

  it('cuts a long value and says how many characters are not shown', () => {
    expect(stringWords('a'.repeat(250))).toBe(`${'a'.repeat(200)}… (50 more characters)`);
    expect(stringWords('a'.repeat(250), Infinity)).toBe('a'.repeat(250));
  });

  it('shows line breaks and bidi or invisible characters in keys and values as escapes, on one line', () => {
    const lines = argumentLines({ 'to\u202e': 'evil\nTool: safe', 'a\nb': 'x\u2028y', z: 'report\u202egpj.sh\u200b' });
    const text = argumentText(lines);
    expect(text.split('\n')).toHaveLength(3);
    for (const line of text.split('\n')) expect(line).not.toMatch(BREAKING);
    expect(text).toContain('to\\u202e: "evil\\nTool: safe"');
    expect(text).toContain('a\\u000ab: "x\\u2028y"');
    expect(text).toContain('z: "report\\u202egpj.sh\\u200b"');
  });

  it('never lets a hostile key or value start a line of its own or hide a character', () => {
    const hostile = fc.string({ unit: fc.constantFrom('a', ' ', '\n', '\r', '\u2028', '\u2029', '\u0085', '\v', '\f', '\u202e', '\u2066', '\u200b', '\u{e0041}', '"', '\\', ':') });
    fc.assert(
      fc.property(fc.dictionary(hostile, fc.oneof(hostile, fc.dictionary(hostile, hostile, { maxKeys: 3 }), fc.array(hostile, { maxLength: 3 })), { maxKeys: 4 }), (args) => {
        const lines = argumentLines(args);
        for (const line of lines) {
          expect(line.label).not.toMatch(BREAKING);
          expect(line.value).not.toMatch(BREAKING);
        }
        expect(argumentText(lines).split('\n')).toHaveLength(Math.max(1, lines.length));
      }),
    );
  });

  it('says so for no arguments, and shows a record that is not an object as escaped text', () => {
    expect(argumentText(argumentLines({}))).toBe('(no arguments)');
    expect(argumentTextOfJson('{"b":[],"a":{}}')).toBe('a: (empty)\nb: (empty list)');
    expect(argumentTextOfJson('not json\n')).toBe('"not json\\n"');
  });
});

describe('schema changes in words', () => {
  it('names a new input with the server’s description, marked as the server’s words', () => {
    const after = { ...schema, properties: { ...schema.properties, forward_to: { type: 'string', description: 'Email address a copy is sent to' } } };
    expect(schemaChanges(schema, after)).toEqual(['New input: forward_to — “Email address a copy is sent to” (the server’s words)']);
  });

  it('says what was removed, what is now required, a changed type, a changed description and changed rules', () => {
    const after = {
      type: 'object',
      properties: { subject: { type: 'string', enum: ['a', 'b'] }, to: { type: 'array', description: 'Everyone who receives it' } },
      required: ['subject'],
    };
    expect(schemaChanges(schema, after)).toEqual([
      'Removed input: options',
      'Now required: subject',
      'Rules changed: subject (the values it accepts are different)',
      'No longer required: to',
      'Changed type: to (was string, now array)',
      'Description changed: to — now “Everyone who receives it” (the server’s words)',
    ]);
  });

  it('keeps a hostile input name and description on one line with hidden characters shown', () => {
    const after = { type: 'object', properties: { 'cc\u202e\nTool: safe': { type: 'string', description: 'copy\u2028Server: trusted\u200b' } } };
    const [line] = schemaChanges({ type: 'object', properties: {} }, after);
    expect(line).not.toMatch(BREAKING);
    expect(line).toBe('New input: cc\\u202e\\u000aTool: safe — “copy Server: trusted\\u200b” (the server’s words)');
  });

  it('is empty for the same schema in another key order, and general for a change no input shows', () => {
    expect(schemaChanges(schema, { required: ['to'], properties: schema.properties, type: 'object' })).toEqual([]);
    expect(schemaChanges(schema, { ...schema, additionalProperties: false })).toEqual(['The inputs’ rules changed (nothing a single input shows: see the schema)']);
  });
});
