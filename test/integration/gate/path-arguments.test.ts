/**
 * What counts as a path, from the attacker's side: a model that puts a path under a name no list
 * foresaw (`src`, `dst`, `targetPath`, `outputFile`, `workingDirectory`, `location`, a `files`
 * list, a `file:` URI, a nested `options.target.value`) or in a free-text field (an absolute
 * path, `~`, a Windows drive or UNC prefix) is judged as one by the policy (a Disabled glob on
 * the field), the folder wall and the approval line alike. Through the core as the app assembles
 * it, over a spawned file server that opens every string it is given (test/fixtures/servers/files.ts),
 * with real folders and symlinks in a temp folder.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import type { PathFs, PathSemantics } from '../../../electron/core/paths/resolve';
import { quote } from '../../../electron/core/preview/trusted-preview';
import type { ArgumentConstraint, PolicyState, UserRule } from '../../../shared/domain/policy';
import { makeManager, MapSecretStore, stdioFixture, trackManagers } from '../mcp/helpers';

const track = trackManagers();
let root: string;
let callsFile: string;
let cores: WardenCore[] = [];

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'warden-path-args-')));
  callsFile = path.join(root, 'calls.jsonl');
});
afterEach(async () => {
  await Promise.all(cores.map((c) => c.close()));
  cores = [];
  rmSync(root, { recursive: true, force: true });
});

class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

/** What the file server itself says it received. */
function received(): unknown[] {
  if (!existsSync(callsFile)) return [];
  return readFileSync(callsFile, 'utf8').split('\n').filter(Boolean);
}

/** project/secrets/key (PRIVATE KEY), project/docs/link → project/secrets, outside/secret.txt. */
function layout() {
  const project = path.join(root, 'project');
  mkdirSync(path.join(project, 'secrets'), { recursive: true });
  mkdirSync(path.join(project, 'docs'), { recursive: true });
  mkdirSync(path.join(root, 'outside'));
  writeFileSync(path.join(project, 'secrets/key'), 'PRIVATE KEY');
  writeFileSync(path.join(project, 'docs/readme.md'), 'readme');
  writeFileSync(path.join(root, 'outside/secret.txt'), 'OUTSIDE SECRET');
  symlinkSync(path.join(project, 'secrets'), path.join(project, 'docs/link'));
  return { project, outside: path.join(root, 'outside') };
}

/** The fields open_files requires, none of them a path. */
const PLAIN = { mode: 'r', encoding: 'utf8', comment: 'for the report' };

/** Each shape a path may take in a call, as (the dotted field it lands in, the arguments). */
function shapes(p: string, alongside = 'notes.txt'): Array<[string, Record<string, unknown>]> {
  return [
    ['src', { src: p }],
    ['dst', { dst: p }],
    ['targetPath', { targetPath: p }],
    ['outputFile', { outputFile: p }],
    ['workingDirectory', { workingDirectory: p }],
    ['location', { location: p }],
    ['files.1', { files: [alongside, p] }],
    ['uri', { uri: pathToFileURL(p).href }],
    ['options.target.value', { options: { target: { value: p } } }],
    ['note', { note: p }],
  ];
}

const allowOpen: UserRule = { id: 'open-any', scope: { kind: 'tool', serverId: 'files', accountId: null, toolName: 'open_files' }, mode: 'allow', pin: null };
const disabledGlob = (field: string, glob: string): UserRule => ({
  id: `no-${field}`,
  scope: { kind: 'tool-constraint', serverId: 'files', accountId: null, toolName: 'open_files', constraints: [{ op: 'matches', field, value: glob } satisfies ArgumentConstraint] },
  mode: 'disabled',
  pin: null,
});

/** The core's gate over the file server, with this policy (and these path semantics). */
async function coreWith(policy: Partial<PolicyState>, options: { cwd?: string; paths?: { semantics: PathSemantics; fs: PathFs | null } } = {}): Promise<WardenCore> {
  const def = stdioFixture('files', 'files', [{ name: 'CALLS_FILE', value: callsFile }], options.cwd ? { cwd: options.cwd } : {});
  const { manager } = track(makeManager([def]));
  expect(await manager.connect(def.id, 'default')).toMatchObject({ state: 'connected' });
  const core = createCore({
    version: 'test',
    servers: { secrets: new ListableMapSecretStore() },
    gate: { registry: manager, executor: manager, initialPolicy: policy, ...(options.paths ? { paths: options.paths } : {}) },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  cores.push(core);
  return core;
}

/** A model's call of open_files (resolves once decided; an allowed call is run to its end). */
async function modelOpens(c: WardenCore, args: Record<string, unknown>) {
  const op = await c.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId: 'files', accountId: 'default', toolName: 'open_files', arguments: { ...PLAIN, ...args } });
  return op.state === 'executing' ? c.gate.gate.settled(op.operationId) : op;
}

const walled = (folders: string[]): Partial<PolicyState> => ({ user: [allowOpen], enforcedRoots: ['files'], rootFolders: [{ serverId: 'files', accountId: 'default', folders }] });

/** Windows semantics over a small fake disk: C:\Users\Me\docs and C:\Users\Me\.ssh exist. */
const windowsDisk: PathFs = (() => {
  const dirs = ['C:\\Users', 'C:\\Users\\Me', 'C:\\Users\\Me\\.ssh', 'C:\\Users\\Me\\docs'];
  const missing = () => Object.assign(new Error('no such file'), { code: 'ENOENT' });
  return {
    lstat(p) {
      if (dirs.includes(path.win32.normalize(p))) return { isSymbolicLink: () => false };
      throw missing();
    },
    readlink: () => {
      throw Object.assign(new Error('not a link'), { code: 'EINVAL' });
    },
    realpath(p) {
      const found = dirs.find((d) => d.toLowerCase() === path.win32.normalize(p).toLowerCase());
      if (found || /^[a-z]:\\?$/i.test(p)) return found ?? p.toUpperCase();
      throw missing();
    },
  };
})();

describe('every shape of path is judged as a path', () => {
  it('by the policy: a Disabled glob on the field holds where the path really leads, whatever the field is called', async () => {
    const { project } = layout();
    const viaLink = path.join(project, 'docs/link/key');
    const fields = shapes(viaLink).map(([field]) => field);
    const c = await coreWith({ user: [allowOpen, ...fields.map((f) => disabledGlob(f, `${project}/secrets/**`))] });
    for (const [field, args] of shapes(viaLink)) {
      const op = await modelOpens(c, args);
      expect(op.state, field).toBe('denied');
      expect(op.reason, field).toContain(`${field} matches ${project}/secrets/**`);
    }
    // A home folder's place is unknown to Warden: the strictest rule it could fall under decides.
    const home = await modelOpens(c, { note: '~/secrets/key' });
    expect(home.state).toBe('denied');
    expect(home.reason).toMatch(/"~\/secrets\/key" starts with "~"/);
    expect(received()).toEqual([]);
    // A field holding no path is still decided by the tool's rule.
    expect((await modelOpens(c, { note: 'hello' })).state).toBe('succeeded');
  });

  it('by the folder wall: every shape outside the folders asks, with the field named, and is never sent', async () => {
    const { project, outside } = layout();
    const c = await coreWith(walled([project]));
    const readme = path.join(project, 'docs/readme.md');
    for (const [field, args] of shapes(path.join(outside, 'secret.txt'), readme)) {
      const op = await modelOpens(c, args);
      expect(op.state, field).toBe('awaiting_approval');
      expect(op.decision, field).toMatchObject({ decision: 'ask', layer: 'roots' });
      expect(op.decision?.reason, field).toContain(`arguments.${field} `);
    }
    // Through a symlink inside the folder that leads out of it, and from the working folder.
    for (const [field, args] of shapes(path.join(project, 'docs/link/key'), readme)) {
      const walledDocs = await coreWith(walled([path.join(project, 'docs')]), { cwd: project });
      const op = await modelOpens(walledDocs, args);
      expect(op.state, field).toBe('awaiting_approval');
      expect(op.decision?.reason, field).toContain(`(it leads to ${path.join(project, 'secrets/key')})`);
      await walledDocs.close();
    }
    // A home folder, a Windows drive or a UNC prefix in free text: not known to be inside.
    for (const note of ['~/secret.txt', 'C:\\Users\\Me\\secret.txt', '\\\\server\\share\\secret.txt']) {
      const op = await modelOpens(c, { note });
      expect(op.state, note).toBe('awaiting_approval');
      expect(op.decision?.reason, note).toContain('arguments.note ');
    }
    expect(received()).toEqual([]);
    // Inside the folder, every shape runs on the Always Allow and the server reads what was judged.
    const inside = await modelOpens(c, { dst: path.join(project, 'docs/readme.md'), note: 'plain words' });
    expect(inside.state).toBe('succeeded');
    expect(JSON.stringify(inside.result)).toContain('readme');
  });

  it('with Windows semantics: drive, UNC and mixed-separator paths in any field meet the wall and a Disabled glob', async () => {
    const paths = { semantics: 'win32' as const, fs: windowsDisk };
    const wall = await coreWith(walled(['C:\\Users\\Me\\docs']), { paths });
    for (const note of ['C:\\Users\\Me\\.ssh\\id_rsa', 'c:/users/me/docs/../.ssh/id_rsa', '\\\\server\\share\\id_rsa', '//server/share/id_rsa', 'file:///C:/Users/Me/.ssh/id_rsa']) {
      const op = await modelOpens(wall, { note });
      expect(op.state, note).toBe('awaiting_approval');
      expect(op.decision?.layer, note).toBe('roots');
    }
    const glob = await coreWith({ user: [allowOpen, disabledGlob('note', 'C:/Users/Me/.ssh/**'), disabledGlob('location', '//server/share/**')] }, { paths });
    for (const note of ['C:\\Users\\Me\\docs\\..\\.ssh\\id_rsa', 'c:\\USERS\\me\\.ssh\\id_rsa']) {
      const op = await modelOpens(glob, { note });
      expect(op.state, note).toBe('denied');
    }
    expect((await modelOpens(glob, { location: '\\\\server\\share\\x' })).state).toBe('denied');
    expect(received()).toEqual([]);
  });

  it('by the approval line: each shape of path is named in the summary the person reads, never hidden under "more fields"', async () => {
    const c = await coreWith({});
    const where = '/etc/cron.d/payload';
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ...shapes(where).map(([field, args]): [string, Record<string, unknown>, string] => [field, args, field === 'uri' ? pathToFileURL(where).href : where]),
      ['note (~)', { note: '~/.ssh/authorized_keys' }, '~/.ssh/authorized_keys'],
      ['note (drive)', { note: 'C:\\Windows\\System32\\drivers\\etc\\hosts' }, 'C:\\Windows\\System32\\drivers\\etc\\hosts'],
      ['note (UNC)', { note: '\\\\attacker\\share\\payload' }, '\\\\attacker\\share\\payload'],
    ];
    for (const [name, args, shown] of cases) {
      const op = await modelOpens(c, args);
      expect(op.state, name).toBe('awaiting_approval');
      expect(op.labels.summary, name).toContain(quote(shown));
    }
    expect(received()).toEqual([]);
  });
});

describe('a relative path is a path in any field', () => {
  it('by the folder wall: ./, ../ and a/b/c in a free-text field are placed from the working folder, and one leading out asks', async () => {
    const { project } = layout();
    const docs = path.join(project, 'docs');
    const c = await coreWith(walled([docs]), { cwd: docs });
    for (const note of ['../../outside/secret.txt', './link/key', 'link/key', '..']) {
      const op = await modelOpens(c, { note });
      expect({ note, state: op.state, layer: op.decision?.layer }).toEqual({ note, state: 'awaiting_approval', layer: 'roots' });
      expect(op.decision?.reason, note).toContain(`arguments.note ${JSON.stringify(note)}`);
    }
    expect(received()).toEqual([]);
    // Inside the folder, a URL of another scheme and one plain word are not walled.
    for (const note of ['./readme.md', 'readme.md', 'https://example.com/a/b', 'hello']) {
      expect((await modelOpens(c, { note })).state, note).toBe('succeeded');
    }
  });

  it('by the policy: a Disabled glob or equals on a field no name marks holds where a relative value really leads', async () => {
    const { project } = layout();
    const key = path.join(project, 'secrets/key');
    const noKey: UserRule = { id: 'no-key', scope: { kind: 'tool-constraint', serverId: 'files', accountId: null, toolName: 'open_files', constraints: [{ op: 'equals', field: 'comment', value: key }] }, mode: 'disabled', pin: null };
    const c = await coreWith({ user: [allowOpen, disabledGlob('note', `${project}/secrets/**`), noKey] }, { cwd: project });
    for (const note of ['docs/link/key', './docs/link/key', 'docs/../secrets/key']) {
      const op = await modelOpens(c, { note });
      expect({ note, state: op.state }).toEqual({ note, state: 'denied' });
    }
    expect((await modelOpens(c, { comment: 'docs/link/key' })).state).toBe('denied');
    // A field a rule names is read as a path even when its value has no separator.
    const inSecrets = await coreWith({ user: [allowOpen, disabledGlob('note', `${project}/secrets/**`), noKey] }, { cwd: path.join(project, 'secrets') });
    expect((await modelOpens(inSecrets, { note: 'key' })).state).toBe('denied');
    expect((await modelOpens(inSecrets, { comment: 'key' })).state).toBe('denied');
    expect(received()).toEqual([]);
    // Elsewhere the same rules let the call run.
    expect((await modelOpens(c, { note: 'docs/readme.md', comment: 'readme' })).state).toBe('succeeded');
  });
});
