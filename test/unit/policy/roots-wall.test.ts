/**
 * A server's folders as a wall, in the pure engine: with the option on, every path argument must
 * lie inside the account's folders (where the server will open it), or the call asks, with the
 * reason in words; the wall is a ceiling, so it never loosens anything.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide, hostPaths } from '../../../electron/core/policy';
import { readsArguments } from '../../../electron/core/policy/engine';
import { argumentPathsOf, schemaPaths } from '../../../electron/core/paths/arguments';
import type { PolicyContext, PolicyRequest, PolicyState, UserRule } from '../../../shared/domain/policy';

const tool = { contractHash: 'c1', endpointHash: 'e1' };
const allowRead: UserRule = { id: 'r1', scope: { kind: 'tool', serverId: 'fs', accountId: 'work', toolName: 'read_file' }, mode: 'allow', pin: null };
const walled = (over: Partial<PolicyState> = {}): PolicyState => ({
  organization: [],
  conversation: [],
  user: [allowRead],
  safeMode: false,
  enforcedRoots: ['fs'],
  rootFolders: [{ serverId: 'fs', accountId: 'work', folders: ['/home/me/project'] }],
  ...over,
});
const req = (args: Record<string, unknown>, over: Partial<PolicyRequest> = {}): PolicyRequest => ({ serverId: 'fs', accountId: 'work', toolName: 'read_file', conversationId: null, arguments: args, ...over });
/** The context the gate builds: every path argument, judged without a file system (lexically). */
const ctxFor = (args: Record<string, unknown>, working: string | null = null): PolicyContext => ({
  tool,
  paths: 'posix',
  labels: { server: 'Files', account: 'Work' },
  argumentPaths: argumentPathsOf(args, undefined, { semantics: 'posix', fs: null, workingFolder: working }),
});
const decideArgs = (args: Record<string, unknown>, state = walled(), working: string | null = null) => decide(req(args), state, ctxFor(args, working));

describe('roots wall: the policy engine', () => {
  it('a path inside the folders is decided by the rules; one outside asks even with Always Allow, saying why', () => {
    expect(decideArgs({ path: '/home/me/project/notes.md' })).toMatchObject({ decision: 'allow', layer: 'user' });
    const outside = decideArgs({ path: '/etc/passwd' });
    expect(outside).toMatchObject({ decision: 'ask', layer: 'roots', ruleId: 'roots:fs' });
    expect(outside.reason).toBe('Asks: arguments.path "/etc/passwd" is outside the folders you gave Files (Work) (/home/me/project), and you chose to keep it inside them');
  });

  it('off by default: the same call with the option off is allowed by the rule', () => {
    expect(decideArgs({ path: '/etc/passwd' }, walled({ enforcedRoots: [] }))).toMatchObject({ decision: 'allow' });
    expect(decideArgs({ path: '/etc/passwd' }, walled({ enforcedRoots: undefined }))).toMatchObject({ decision: 'allow' });
  });

  it('.. and prefix tricks are judged as whole folders, not strings', () => {
    expect(decideArgs({ path: '/home/me/project/../secrets.txt' }).decision).toBe('ask');
    expect(decideArgs({ path: '/home/me/project-evil/x' }).decision).toBe('ask');
    expect(decideArgs({ path: '/home/me/project' }).decision).toBe('allow');
  });

  it('every path argument counts: lists, nested objects, and source and destination', () => {
    expect(decideArgs({ paths: ['/home/me/project/a', '/etc/shadow'] })).toMatchObject({ decision: 'ask' });
    expect(decideArgs({ paths: ['/home/me/project/a', '/etc/shadow'] }).reason).toContain('arguments.paths.1 "/etc/shadow"');
    expect(decideArgs({ options: { target: '/tmp/x' } }).reason).toContain('arguments.options.target "/tmp/x"');
    expect(decideArgs({ source: '/home/me/project/a', destination: '/home/me/elsewhere/a' }).decision).toBe('ask');
    expect(decideArgs({ source: '/home/me/project/a', destination: '/home/me/project/b' }).decision).toBe('allow');
    // Text that is not a path is not read as one; an absolute path is, whatever its field is called.
    expect(decideArgs({ content: 'see /etc/passwd' }).decision).toBe('allow');
    expect(decideArgs({ content: '/etc/passwd' }).reason).toContain('arguments.content "/etc/passwd"');
  });

  it('a relative path is judged from the server’s working folder; with none known it asks', () => {
    expect(decideArgs({ path: 'notes.md' }, walled(), '/home/me/project').decision).toBe('allow');
    expect(decideArgs({ path: '../x' }, walled(), '/home/me/project').decision).toBe('ask');
    const unknown = decideArgs({ path: 'notes.md' });
    expect(unknown).toMatchObject({ decision: 'ask', layer: 'roots' });
    expect(unknown.reason).toMatch(/^Asks: arguments\.path "notes\.md" .*so Warden cannot tell whether it is inside the folders you gave Files \(Work\)$/);
  });

  it('an account with no folders: every call with a path asks; the folders are per account', () => {
    const none = decide(req({ path: '/home/me/project/a' }, { accountId: 'home' }), walled({ user: [{ ...allowRead, scope: { ...allowRead.scope, accountId: null } as UserRule['scope'] }] }), { ...ctxFor({ path: '/home/me/project/a' }), labels: { server: 'Files', account: 'Home' } });
    expect(none).toMatchObject({ decision: 'ask', layer: 'roots' });
    expect(none.reason).toContain('you chose to keep Files (Home) inside its folders but gave it none');
  });

  it('a ceiling only: Disabled stays denied, Ask says the wall too, a tool without path arguments is untouched', () => {
    const disabled = walled({ user: [{ ...allowRead, mode: 'disabled' }] });
    expect(decideArgs({ path: '/etc/passwd' }, disabled).decision).toBe('deny');
    const ask = decideArgs({ path: '/etc/passwd' }, walled({ user: [{ ...allowRead, mode: 'ask' }] }));
    expect(ask.decision).toBe('ask');
    expect(ask.reason).toMatch(/^Asks: you set Ask for read_file on Files \(Work\); also, arguments\.path "\/etc\/passwd" is outside the folders/);
    expect(decideArgs({ query: 'hello' })).toMatchObject({ decision: 'allow' });
  });

  it('the decision depends on the arguments for a walled server (the gate must not reuse it across calls)', () => {
    expect(readsArguments(walled(), { serverId: 'fs', accountId: 'work', toolName: 'read_file' })).toBe(true);
    expect(readsArguments(walled({ enforcedRoots: [] }), { serverId: 'fs', accountId: 'work', toolName: 'read_file' })).toBe(false);
  });

  it('a symlink inside a folder that leads outside it is outside (resolved as the system opens it)', () => {
    const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'warden-wall-')));
    try {
      const root = path.join(base, 'project');
      const secret = path.join(base, 'secret');
      mkdirSync(root);
      mkdirSync(secret);
      writeFileSync(path.join(secret, 'key.txt'), 'x');
      symlinkSync(secret, path.join(root, 'link'));
      const { fs } = hostPaths();
      const state = walled({ rootFolders: [{ serverId: 'fs', accountId: 'work', folders: [root] }] });
      const at = (p: string) => decide(req({ path: p }), state, { tool, paths: 'posix', labels: { server: 'Files', account: 'Work' }, argumentPaths: argumentPathsOf({ path: p }, undefined, { semantics: 'posix', fs }) });
      const escaped = at(path.join(root, 'link', 'key.txt'));
      expect(escaped).toMatchObject({ decision: 'ask', layer: 'roots' });
      expect(escaped.reason).toContain(`(it leads to ${path.join(secret, 'key.txt')})`);
      expect(at(path.join(root, 'inside.txt')).decision).toBe('allow');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('the matrix reads which of a tool’s inputs are paths from its schema', () => {
    expect(schemaPaths({ type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' }, destination: { type: 'string' } } })).toEqual({ fields: ['path', 'destination'], freeText: true });
    expect(schemaPaths({ type: 'object', properties: { path: { type: 'string' }, head: { type: 'number' } } })).toEqual({ fields: ['path'], freeText: false });
    expect(schemaPaths({ type: 'object' })).toEqual({ fields: [], freeText: false });
  });
});
