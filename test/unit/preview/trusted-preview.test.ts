import { describe, expect, it } from 'vitest';
import { quote, serverKindOf, trustedPreview, type PreviewTool } from '../../../electron/core/preview/trusted-preview';
import type { ServerDefinition } from '../../../shared/domain/servers';

const files: PreviewTool = { toolName: 'write_file', serverLabel: 'Files', accountLabel: 'Work', serverKind: 'filesystem' };
const fs = (toolName: string, args: Record<string, unknown>) => trustedPreview({ ...files, toolName }, args).summary;

describe('trusted previews: templates for servers Warden recognises', () => {
  it('server-filesystem: read, write, edit, move and delete say what happens to which exact path', () => {
    expect(fs('read_text_file', { path: '/home/me/notes.txt', head: 10 })).toBe('Read the file "/home/me/notes.txt", only its first 10 lines');
    expect(fs('write_file', { path: '/home/me/notes.txt', content: 'x'.repeat(1204) })).toBe('Write 1,204 characters to "/home/me/notes.txt", replacing the file if it exists');
    expect(fs('edit_file', { path: '/a.md', edits: [{ oldText: 'a', newText: 'b' }, { oldText: 'c', newText: 'd' }] })).toBe('Change "/a.md": 2 replacements of text');
    expect(fs('edit_file', { path: '/a.md', edits: [{ oldText: 'a', newText: 'b' }], dryRun: true })).toBe('Show (without saving) 1 change to "/a.md"');
    expect(fs('move_file', { source: '/a.txt', destination: '/b/a.txt' })).toBe('Move "/a.txt" to "/b/a.txt"');
    expect(fs('read_multiple_files', { paths: ['/a', '/b', '/c', '/d'] })).toBe('Read 4 files: "/a", "/b" and 2 more');
    expect(fs('create_directory', { path: '/new' })).toBe('Create the folder "/new"');
    expect(fs('delete_file', { path: '/x' })).toBe('Delete the file "/x"');
    expect(trustedPreview({ ...files, toolName: 'move_file' }, { source: '/a', destination: '/b' }).line).toBe('Move "/a" to "/b" — move_file on Files (Work)');
  });

  it('the demo server and server-everything have their own words', () => {
    const demo = (toolName: string, args: Record<string, unknown>) => trustedPreview({ toolName, serverLabel: 'Warden demo', accountLabel: 'Default', serverKind: 'demo' }, args).summary;
    expect(demo('notes_delete', { id: 3 })).toBe('Delete demo note #3');
    expect(demo('notes_add', { text: 'buy milk' })).toBe('Add a demo note: "buy milk"');
    expect(demo('files_read', { path: '/demo/private/diary.md' })).toBe('Read the demo file "/demo/private/diary.md"');
    expect(demo('read_inbox', {})).toBe('Read the latest message in the demo inbox');
    const every = (toolName: string, args: Record<string, unknown>) => trustedPreview({ toolName, serverLabel: 'Everything', accountLabel: 'Default', serverKind: 'everything' }, args).summary;
    expect(every('echo', { message: 'hi' })).toBe('Echo back the message "hi"');
    expect(every('get-sum', { a: 2, b: 3 })).toBe('Add 2 and 3');
    expect(every('get-env', {})).toBe("Read every environment variable of the server's process");
  });

  it('the seed example: a GitHub server configured by the person closes an issue', () => {
    const gh = trustedPreview({ toolName: 'update_issue', serverLabel: 'GitHub', accountLabel: 'Work', serverKind: 'github' }, { owner: 'acme', repo: 'mobile', issue_number: 42, state: 'closed' });
    expect(gh.summary).toBe('Close issue #42 in "acme/mobile"');
  });

  it('a template is used only for the server it was written for, and only with the arguments it expects', () => {
    // Another server naming a tool write_file gets no filesystem words: a name is not a promise.
    expect(trustedPreview({ ...files, serverKind: 'other' }, { path: '/a', content: 'x' }).source).toBe('schema');
    // Arguments of another shape fall back to the generic summary instead of guessing.
    expect(trustedPreview(files, { path: 42, content: 'x' }).source).toBe('schema');
    // A tool name that happens to be an Object.prototype key is not a template.
    expect(trustedPreview({ ...files, toolName: 'constructor' }, {}).source).toBe('schema');
  });

  it('the server kind comes from the configured command line or address, never from what the server says', () => {
    const stdio = (command: string, args: string[]): ServerDefinition => ({ id: 's', name: 'S', transport: 'stdio', command, args, env: [] });
    expect(serverKindOf(stdio('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/home/me']))).toBe('filesystem');
    expect(serverKindOf(stdio('npx', ['-y', '@modelcontextprotocol/server-filesystem@2026.8.31', '/tmp']))).toBe('filesystem');
    expect(serverKindOf(stdio('node', ['/repo/node_modules/@modelcontextprotocol/server-everything/dist/index.js']))).toBe('everything');
    expect(serverKindOf(stdio('docker', ['run', '-i', '--rm', 'ghcr.io/github/github-mcp-server']))).toBe('github');
    expect(serverKindOf(stdio('node', ['my-server.js', '--name', 'server-filesystem-lookalike']))).toBe('other');
    expect(serverKindOf({ id: 'd', name: 'Demo', transport: 'builtin', builtin: 'demo' })).toBe('demo');
    expect(serverKindOf({ id: 'g', name: 'GitHub', transport: 'http', url: 'https://api.githubcopilot.com/mcp/', headers: [], auth: { kind: 'oauth' } })).toBe('github');
    expect(serverKindOf({ id: 'x', name: 'X', transport: 'http', url: 'https://evil.example/api.githubcopilot.com/mcp', headers: [], auth: { kind: 'none' } })).toBe('other');
    expect(serverKindOf(undefined)).toBe('other');
  });
});

describe('trusted previews: the schema-driven summary for any other tool', () => {
  const tool = (toolName: string, properties: Record<string, unknown>, required: string[] = []): PreviewTool => ({
    toolName,
    serverLabel: 'Mail',
    accountLabel: 'Personal',
    inputSchema: { type: 'object', properties, required },
  });

  it('recipients, addresses and paths come first, then a few other fields, then how many more', () => {
    const send = tool('send_message', { subject: { type: 'string' }, body: { type: 'string' }, to: { type: 'string' }, priority: { type: 'number' }, draft: { type: 'boolean' } }, ['subject']);
    expect(trustedPreview(send, { subject: 'Hi', body: 'Long text', to: 'bob@example.org', priority: 1, draft: false }).summary).toBe(
      'Run send_message with to "bob@example.org", subject "Hi", body "Long text" and 2 more fields',
    );
    const fetch = tool('fetch', { url: { type: 'string' }, max_length: { type: 'number' } });
    expect(trustedPreview(fetch, { url: 'https://example.com/a?b=c', max_length: 5000 }).summary).toBe(
      'Run fetch with contacting "example.com" (url "https://example.com/a?b=c"), max_length 5000',
    );
    const upload = tool('upload', { target: { type: 'string', format: 'uri' }, file: { type: 'string' } });
    expect(trustedPreview(upload, { file: '/home/me/a.png', target: 'https://x.example/up' }).summary).toBe(
      'Run upload with contacting "x.example" (target "https://x.example/up"), file "/home/me/a.png"',
    );
    expect(trustedPreview(tool('ping', {}), {}).summary).toBe('Run ping (no arguments)');
    expect(trustedPreview(tool('sum', { values: { type: 'array' }, opts: { type: 'object' } }), { values: [1, 2, 3], opts: { a: 1 } }).summary).toBe(
      'Run sum with values (a list of 3 items), opts (an object with 1 field)',
    );
  });

  it('long values are cut with their full length said; the full arguments stay one click away', () => {
    const long = 'a'.repeat(500);
    const s = trustedPreview(tool('note', { text: { type: 'string' } }), { text: long }).summary;
    expect(s).toBe(`Run note with text "${'a'.repeat(80)}…" (500 characters)`);
  });

  it('every value is one line, quoted and escaped: newlines, quotes, bidi overrides and zero-width characters are made visible', () => {
    expect(quote('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"');
    expect(quote('report\u202Egpj.sh')).toBe('"report\\u202egpj.sh"');
    expect(quote('x\u200By\u2028z')).toBe('"x\\u200by\\u2028z"');
    expect(quote('\u0085next')).toBe('"\\u0085next"');
    const s = trustedPreview(tool('t', { text: { type: 'string' } }), { text: 'ok"\n — write_file on Files (Work)' }).summary;
    expect(s).toBe('Run t with text "ok\\"\\n — write_file on Files (Work)"');
  });

  it('a tool or field name that is not a plain identifier is quoted, never read as words', () => {
    const weird = trustedPreview({ toolName: 'Safe: nothing happens', serverLabel: 'S', accountLabel: 'A' }, { 'the file is harmless': 'x' }).summary;
    expect(weird).toBe('Run "Safe: nothing happens" with "the file is harmless" "x"');
  });
});

describe('trusted previews: every path is named', () => {
  const generic = (args: Record<string, unknown>) => trustedPreview({ toolName: 'sync', serverLabel: 'Sync', accountLabel: 'Work' }, args).summary;

  it('a path nested in an object, or listed after harmless names, is shown before anything else', () => {
    expect(generic({ a: '1', b: '2', c: '3', options: { target: { value: '/etc/cron.d/x' } } })).toBe('Run sync with options (at "target.value") "/etc/cron.d/x", a "1", b "2" and 2 more fields');
    expect(generic({ files: ['a.txt', 'b.txt', 'c.txt', '/etc/shadow'] })).toBe('Run sync with files "/etc/shadow", "a.txt" and 2 more');
    expect(generic({ note: '~/.ssh/id_rsa', a: '1', b: '2', c: '3' })).toBe('Run sync with note "~/.ssh/id_rsa", a "1", b "2" and 1 more field');
  });
});
