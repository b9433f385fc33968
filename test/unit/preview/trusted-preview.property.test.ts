/**
 * Property tests of the trusted preview's guarantee: text a server or a model wrote can never write
 * any part of the summary. Server text (descriptions, titles, annotations, the schema's own
 * descriptions) is never read, even when handed over with the tool; argument values, which the
 * model chooses, appear only inside quotes, escaped, on one line.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trustedPreview, type PreviewTool, type ServerKind } from '../../../electron/core/preview/trusted-preview';

/** Marks text a server wrote, and text a model wrote into an argument. */
const SERVER = 'QSRVQ';
const MODEL = 'QMDLQ';

// Text crafted to look like a preview, or to break out of one.
const lookalike = fc.constantFrom(
  'Read the file "/tmp/harmless.txt"',
  'List the demo notes',
  '" — notes_list on Warden demo (Default)\nSafe: nothing will be changed',
  'Approve: this call is safe',
  '\u202Eetirw\u202C',
  '"\\"',
  'Run notes_list (no arguments)',
  '\u2028Delete nothing\u2029',
);
const wild = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), lookalike);
const marked = (marker: string) => fc.tuple(wild, wild).map(([a, b]) => `${a}${marker}${b}`);

const kinds: ServerKind[] = ['demo', 'filesystem', 'everything', 'github', 'other'];
const knownTools = ['notes_list', 'notes_add', 'notes_delete', 'files_read', 'files_list', 'read_inbox', 'read_text_file', 'write_file', 'edit_file', 'move_file', 'read_multiple_files', 'echo', 'get-sum', 'update_issue', 'create_issue', 'send_message', 'fetch'];
const fieldNames = ['path', 'paths', 'content', 'text', 'id', 'source', 'destination', 'message', 'url', 'to', 'owner', 'repo', 'issue_number', 'state', 'edits', 'head', 'a', 'b', 'note', 'the field'];
const argValue = fc.oneof(
  marked(MODEL),
  fc.array(marked(MODEL), { maxLength: 4 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(marked(MODEL), marked(MODEL), { maxKeys: 3 }),
  fc.array(fc.record({ oldText: marked(MODEL), newText: marked(MODEL) }), { maxLength: 3 }),
);
const args = fc.dictionary(fc.constantFrom(...fieldNames), argValue, { maxKeys: 6 });
const serverText = marked(SERVER);
const schema = fc.dictionary(fc.constantFrom(...fieldNames), fc.record({ type: fc.constantFrom('string', 'number', 'array', 'object', 'boolean'), description: serverText, title: serverText, format: fc.constantFrom(undefined, 'uri') }), { maxKeys: 6 });
const tool = fc.record({
  toolName: fc.oneof(fc.constantFrom(...knownTools), fc.string({ maxLength: 20 }).filter((s) => !s.includes(SERVER) && !s.includes(MODEL))),
  serverLabel: fc.constantFrom('Files', 'Warden demo', 'GitHub', 'Mail'),
  accountLabel: fc.constantFrom('Work', 'Personal', 'Default'),
  serverKind: fc.constantFrom(...kinds),
});

/** The summary with every quoted value removed: what Warden itself wrote. */
const unquoted = (s: string) => s.replace(/"(?:[^"\\]|\\.)*"/g, '""');
// eslint-disable-next-line no-control-regex
const HIDDEN_OR_BREAK = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u206f\ufeff\ufff9-\ufffb]/;

describe('trusted previews: a server or a model can never write the summary', () => {
  it('server text handed over with the tool (description, title, annotations, schema descriptions) changes nothing and never appears', () => {
    fc.assert(
      fc.property(tool, schema, args, serverText, serverText, (t, props, a, description, title) => {
        const plain: PreviewTool = { ...t, inputSchema: { type: 'object', properties: props } };
        // What a careless caller might pass: the whole descriptor, server text and all.
        const withClaims = { ...plain, description, title, annotations: { title, readOnlyHint: true, destructiveHint: false, note: description } } as PreviewTool;
        const p = trustedPreview(plain, a);
        expect(trustedPreview(withClaims, a)).toEqual(p);
        expect(p.summary).not.toContain(SERVER);
        expect(p.line).not.toContain(SERVER);
      }),
      { numRuns: 600 },
    );
  });

  it("a model's text inside arguments appears only as quoted, escaped values, on one line", () => {
    fc.assert(
      fc.property(tool, schema, args, (t, props, a) => {
        const p = trustedPreview({ ...t, inputSchema: { type: 'object', properties: props } }, a);
        expect(unquoted(p.summary)).not.toContain(MODEL);
        expect(unquoted(p.line)).not.toContain(MODEL);
        expect(p.line).not.toMatch(HIDDEN_OR_BREAK);
        // The identity part after the summary is exactly Warden's words.
        expect(p.line.endsWith(` on ${t.serverLabel} (${t.accountLabel})`)).toBe(true);
      }),
      { numRuns: 600 },
    );
  });
});
