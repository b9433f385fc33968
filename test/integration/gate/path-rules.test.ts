/**
 * Path rules from the attacker's side, through the core as the app assembles it (createCore's gate
 * module over a real ConnectionManager) and a spawned file server that opens paths exactly as the
 * operating system does (test/fixtures/servers/files.ts). Every layout is made of real folders and
 * real symlinks in a temp folder; what the server received is read from its own record.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ServerDefinition } from '../../../shared/domain/servers';
import type { ArgumentConstraint, UserRule } from '../../../shared/domain/policy';
import type { PathFs, PathSemantics } from '../../../electron/core/paths/resolve';
import { httpDefinition, makeManager, MapSecretStore, startHttpFixture, stdioFixture, trackManagers, type StartedHttpServer } from '../mcp/helpers';

const track = trackManagers();
let root: string;
let callsFile: string;
let cores: WardenCore[] = [];
let http: StartedHttpServer | undefined;

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'warden-paths-')));
  callsFile = path.join(root, 'calls.jsonl');
});
afterEach(async () => {
  await Promise.all(cores.map((c) => c.close()));
  await http?.stop();
  cores = [];
  http = undefined;
  rmSync(root, { recursive: true, force: true });
});

/** Writes `text` at `relative` under the temp root, making folders as needed. */
function file(relative: string, text: string): string {
  const p = path.join(root, relative);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, text);
  return p;
}

/** A symlink at `relative` (under the root) pointing at `target` (absolute). */
function link(relative: string, target: string): string {
  const p = path.join(root, relative);
  mkdirSync(path.dirname(p), { recursive: true });
  symlinkSync(target, p);
  return p;
}

/**
 * A symlink detour under the temp root: `secret` holds a secret, `link` points at the empty folder
 * `into` beside it, and `decoy` is a harmless file where the string "link/../<name>" seems to
 * point. Returns the project folder.
 */
function detour(at: { secret: string; into: string; decoy: string; link: string }): string {
  file(at.secret, 'SECRET');
  mkdirSync(path.join(root, at.into));
  file(at.decoy, 'harmless docs file');
  link(at.link, path.join(root, at.into));
  return path.join(root, 'project');
}

/** What the file server itself says it received. */
function received(): Array<{ tool: string; args: Record<string, unknown> }> {
  if (!existsSync(callsFile)) return [];
  return readFileSync(callsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const allowTool = (serverId: string): UserRule => ({ id: 'read-any', scope: { kind: 'tool', serverId, accountId: null, toolName: 'read_file' }, mode: 'allow', pin: null });
const pathRule = (id: string, serverId: string, mode: 'allow' | 'ask' | 'disabled', under: string): UserRule => ({
  id,
  scope: { kind: 'tool-constraint', serverId, accountId: null, toolName: 'read_file', constraints: [{ op: 'pathUnder', field: 'path', value: under } satisfies ArgumentConstraint] },
  mode,
  pin: null,
});

/** No secrets are involved; the core only needs a store it can list. */
class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

/** Connects the server and assembles the core's gate over it with these rules. */
async function coreWith(def: ServerDefinition, rules: UserRule[], paths?: { semantics: PathSemantics; fs: PathFs | null }): Promise<WardenCore> {
  const { manager } = track(makeManager([def]));
  expect(await manager.connect(def.id, 'default')).toMatchObject({ state: 'connected' });
  const core = createCore({
    version: 'test',
    servers: { secrets: new ListableMapSecretStore() },
    gate: { registry: manager, executor: manager, initialPolicy: { user: rules }, ...(paths ? { paths } : {}) },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  cores.push(core);
  return core;
}

/** A model's call through the gate (resolves once decided; an allowed call is run to its end). */
async function modelReads(c: WardenCore, serverId: string, p: string) {
  const op = await c.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId, accountId: 'default', toolName: 'read_file', arguments: { path: p } });
  return op.state === 'executing' ? c.gate.gate.settled(op.operationId) : op;
}

/** A compromised renderer's call: `tools:run` over the contract. */
async function rendererReads(c: WardenCore, serverId: string, p: string) {
  const answer = await dispatch(c.handlers, 'tools:run', { serverId, accountId: 'default', toolName: 'read_file', arguments: { path: p } });
  expect(answer.ok).toBe(true);
  const op = (answer as { value: { operationId: string; state: string } }).value;
  return op.state === 'executing' ? c.gate.gate.settled(op.operationId) : (await c.gate.gate.get(op.operationId))!;
}

const globRule = (id: string, serverId: string, mode: 'allow' | 'ask' | 'disabled', glob: string): UserRule => ({
  id,
  scope: { kind: 'tool-constraint', serverId, accountId: null, toolName: 'read_file', constraints: [{ op: 'matches', field: 'path', value: glob } satisfies ArgumentConstraint] },
  mode,
  pin: null,
});

const stdioFiles = (extra: Partial<Extract<ServerDefinition, { transport: 'stdio' }>> = {}) => stdioFixture('files', 'files', [{ name: 'CALLS_FILE', value: callsFile }], extra);

describe('paths are judged where the kernel opens them', () => {
  it('a symlink followed by .. is judged where the kernel lands, not where the string points', async () => {
    // docs/link → outside/inner; the kernel takes "link/.." to outside/, not back to docs/.
    file('outside/secret.txt', 'OUTSIDE SECRET');
    mkdirSync(path.join(root, 'outside/inner'));
    file('project/docs/secret.txt', 'harmless docs file');
    link('project/docs/link', path.join(root, 'outside/inner'));
    // Concatenated, not path.join(): join would apply the .. to the string itself.
    const attack = `${root}/project/docs/link/../secret.txt`;

    const c = await coreWith(stdioFiles(), [pathRule('docs', 'files', 'allow', path.join(root, 'project/docs'))]);
    const op = await modelReads(c, 'files', attack);
    expect(op.state).toBe('awaiting_approval');
    expect(op.result).toBeNull();
    expect(received()).toEqual([]);

    // The same walk makes a Disabled folder hold: the call really opens outside/secret.txt.
    const strict = await coreWith(stdioFiles(), [allowTool('files'), pathRule('no-outside', 'files', 'disabled', path.join(root, 'outside'))]);
    const denied = await modelReads(strict, 'files', attack);
    expect(denied.state).toBe('denied');
    expect(denied.reason).toContain(`under ${path.join(root, 'outside')}`);
    expect(received()).toEqual([]);
    // A path whose links and .. stay inside is still allowed, and the server reads what was judged.
    const fine = await modelReads(strict, 'files', `${root}/project/docs/link/../../project/docs/secret.txt`);
    expect(fine.state).toBe('succeeded');
    expect(JSON.stringify(fine.result)).toContain('harmless docs file');
  });

  it('a symlink loop is refused with a plain reason, never judged as the string reads', async () => {
    file('project/docs/readme.md', 'readme');
    link('project/docs/loop-a', path.join(root, 'project/docs/loop-b'));
    link('project/docs/loop-b', path.join(root, 'project/docs/loop-a'));
    const c = await coreWith(stdioFiles(), [pathRule('docs', 'files', 'allow', path.join(root, 'project/docs'))]);
    const op = await modelReads(c, 'files', path.join(root, 'project/docs/loop-a/x.txt'));
    expect(op.state).toBe('denied');
    expect(op.reason).toMatch(/arguments\.path: .*symbolic links.*loop/);
    expect(received()).toEqual([]);
  });

  it('a Disabled folder named through a symlink (as /etc, /tmp and /var are on macOS) covers the files it leads to', async () => {
    file('private/etc/passwd', 'root:x:0:0');
    const etc = link('etc', path.join(root, 'private/etc'));
    const c = await coreWith(stdioFiles(), [allowTool('files'), pathRule('no-etc', 'files', 'disabled', etc)]);
    for (const p of [path.join(root, 'private/etc/passwd'), path.join(etc, 'passwd')]) {
      const op = await modelReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
    }
    expect(received()).toEqual([]);
  });
});

describe('equals and oneOf on a path', () => {
  it('a Disabled equals or oneOf on a path named through a symlink holds for the path as written and as opened', async () => {
    file('private/etc/passwd', 'root:x:0:0');
    const etc = link('etc', path.join(root, 'private/etc'));
    const exact = (id: string, constraint: ArgumentConstraint): UserRule => ({ id, scope: { kind: 'tool-constraint', serverId: 'files', accountId: null, toolName: 'read_file', constraints: [constraint] }, mode: 'disabled', pin: null });
    const c = await coreWith(stdioFiles(), [
      allowTool('files'),
      exact('no-passwd', { op: 'equals', field: 'path', value: path.join(etc, 'passwd') }),
      exact('no-shadow', { op: 'oneOf', field: 'path', value: [path.join(etc, 'shadow')] }),
    ]);
    file('private/etc/shadow', 'root:*');
    // The exact string the rule names; resolving it through the link must not make it another value.
    for (const p of [path.join(etc, 'passwd'), path.join(etc, 'shadow')]) {
      const op = await modelReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
      expect(op.reason, p).toContain(`is opened as ${path.join(root, 'private/etc')}`);
    }
    expect(received()).toEqual([]);
  });
});

describe('relative paths under a path rule', () => {
  it("a relative path is resolved against a stdio server's working folder, the folder the server opens it from", async () => {
    file('project/secrets/key', 'PRIVATE KEY');
    file('project/docs/readme.md', 'project readme');
    const project = path.join(root, 'project');
    const c = await coreWith(stdioFiles({ cwd: project }), [
      allowTool('files'),
      pathRule('no-secrets', 'files', 'disabled', path.join(project, 'secrets')),
      pathRule('docs', 'files', 'allow', path.join(project, 'docs')),
    ]);
    for (const p of ['secrets/key', './secrets/key', 'docs/../secrets/key', 'secrets']) {
      const op = await rendererReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
      expect(op.reason, p).toContain(`under ${path.join(project, 'secrets')}`);
    }
    expect(received()).toEqual([]);
    // Resolution is what the server does: docs/readme.md is allowed and is the file it reads.
    const docs = await rendererReads(c, 'files', 'docs/readme.md');
    expect(docs.state).toBe('succeeded');
    expect(JSON.stringify(docs.result)).toContain('project readme');
  });

  it('a relative path through a symlink and then .. is judged where the kernel lands: a Disabled folder holds', async () => {
    // docs/link3 → secrets/sub: from the working folder, "docs/link3/../key2" opens secrets/key2.
    const project = detour({ secret: 'project/secrets/key2', into: 'project/secrets/sub', decoy: 'project/docs/key2', link: 'project/docs/link3' });
    const c = await coreWith(stdioFiles({ cwd: project }), [allowTool('files'), pathRule('no-secrets', 'files', 'disabled', path.join(project, 'secrets'))]);
    for (const p of ['docs/link3/../key2', './docs/link3/../key2', 'docs/./link3//../key2']) {
      const op = await rendererReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
      expect(op.reason, p).toContain(`under ${path.join(project, 'secrets')}`);
    }
    expect(received()).toEqual([]);
  });

  it('a relative path through a symlink and then .. is judged where the kernel lands: an Allow folder never covers a file outside it', async () => {
    // docs/link → outside/inner: from the project, "./docs/link/../secret.txt" opens outside/secret.txt.
    const project = detour({ secret: 'outside/secret.txt', into: 'outside/inner', decoy: 'project/docs/secret.txt', link: 'project/docs/link' });
    const c = await coreWith(stdioFiles({ cwd: project }), [pathRule('docs', 'files', 'allow', path.join(project, 'docs'))]);
    for (const p of ['./docs/link/../secret.txt', 'docs/link/../secret.txt']) {
      const op = await rendererReads(c, 'files', p);
      expect(op.state, p).toBe('awaiting_approval');
      expect(op.result, p).toBeNull();
    }
    expect(received()).toEqual([]);
    // The same file named without the detour is still allowed, and is the file the server reads.
    const fine = await rendererReads(c, 'files', 'docs/secret.txt');
    expect(fine.state).toBe('succeeded');
    expect(JSON.stringify(fine.result)).toContain('harmless docs file');
  });

  it("a working folder configured through a symlink and then .. is the folder the server's process really starts in", async () => {
    // project/docs/link → outside/inner: a server started in "project/docs/link/.." runs in outside/.
    const project = detour({ secret: 'outside/secret.txt', into: 'outside/inner', decoy: 'project/docs/secret.txt', link: 'project/docs/link' });
    const c = await coreWith(stdioFiles({ cwd: `${project}/docs/link/..` }), [allowTool('files'), pathRule('no-outside', 'files', 'disabled', path.join(root, 'outside'))]);
    const op = await rendererReads(c, 'files', 'secret.txt');
    expect(op.state).toBe('denied');
    expect(op.reason).toContain(`under ${path.join(root, 'outside')}`);
    expect(received()).toEqual([]);
  });

  it('where the working folder is unknown, a relative path is decided by the most restrictive rule it could match', async () => {
    http = await startHttpFixture('files', '--http', { CALLS_FILE: callsFile });
    const c = await coreWith(httpDefinition('remote', http.url), [
      allowTool('remote'),
      pathRule('no-secrets', 'remote', 'disabled', '/srv/secrets'),
      pathRule('docs', 'remote', 'allow', '/srv/docs'),
    ]);
    const secrets = await rendererReads(c, 'remote', 'secrets/key');
    expect(secrets.state).toBe('denied');
    expect(secrets.reason).toContain('under /srv/secrets');
    expect(secrets.reason).toMatch(/relative path/);
    // Any relative path could lie in /srv/secrets, so while that rule exists every one is denied.
    const elsewhere = await rendererReads(c, 'remote', 'notes.txt');
    expect(elsewhere.state).toBe('denied');
    expect(received()).toEqual([]);

    // Without a Disabled rule, an Allow folder rule never allows a relative path: the strictest
    // reading is "not under it", and the tool falls back to Ask.
    const askByDefault = await coreWith(httpDefinition('remote', http.url), [pathRule('docs', 'remote', 'allow', '/srv/docs')]);
    const docs = await rendererReads(askByDefault, 'remote', 'docs/readme.md');
    expect(docs.state).toBe('awaiting_approval');
    expect(received()).toEqual([]);
  });
});

describe('matches globs on paths, from the attacker\'s side', () => {
  it('a Disabled "anywhere" glob (**/.ssh/**, **/*.env) holds for absolute paths, as globs do everywhere else', async () => {
    file('home/.ssh/id_rsa', 'PRIVATE KEY');
    file('project/.env', 'TOKEN=secret');
    file('project/readme.md', 'readme');
    const c = await coreWith(stdioFiles(), [allowTool('files'), globRule('no-ssh', 'files', 'disabled', '**/.ssh/**'), globRule('no-env', 'files', 'disabled', '**/*.env')]);
    for (const p of [path.join(root, 'home/.ssh/id_rsa'), path.join(root, 'project/.env'), 'home/.ssh/id_rsa']) {
      const op = await modelReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
    }
    expect(received()).toEqual([]);
    const fine = await modelReads(c, 'files', path.join(root, 'project/readme.md'));
    expect(fine.state).toBe('succeeded');
  });

  it("a relative path cannot slip past an absolute Disabled glob: it is judged where the server opens it too", async () => {
    file('project/secrets/key', 'PRIVATE KEY');
    file('project/docs/readme.md', 'project readme');
    const project = path.join(root, 'project');
    const c = await coreWith(stdioFiles({ cwd: project }), [allowTool('files'), globRule('no-secrets', 'files', 'disabled', `${project}/secrets/**`)]);
    for (const p of ['secrets/key', 'docs/../secrets/key']) {
      const op = await rendererReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
      expect(op.reason, p).toContain(`matches ${project}/secrets/**`);
    }
    expect(received()).toEqual([]);
    expect((await rendererReads(c, 'files', 'docs/readme.md')).state).toBe('succeeded');

    // Where the working folder is unknown, such a path could be anywhere: the Disabled glob holds.
    http = await startHttpFixture('files', '--http', { CALLS_FILE: callsFile });
    const remote = await coreWith(httpDefinition('remote', http.url), [allowTool('remote'), { ...globRule('no-secrets', 'remote', 'disabled', '/srv/secrets/**') }]);
    const op = await rendererReads(remote, 'remote', 'secrets/key');
    expect(op.state).toBe('denied');
    expect(received().map((r) => r.args.path)).toEqual(['docs/readme.md']);
  });

  it('Windows path forms: backslashes, forward slashes and another case all meet a Disabled glob', async () => {
    // Windows semantics over a small fake disk: C:\Users\Me\.ssh exists.
    const dirs = ['C:\\Users', 'C:\\Users\\Me', 'C:\\Users\\Me\\.ssh', 'C:\\Users\\Me\\docs'];
    const fs: PathFs = {
      lstat(p) {
        if (dirs.includes(path.win32.normalize(p))) return { isSymbolicLink: () => false };
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      },
      readlink: () => {
        throw Object.assign(new Error('not a link'), { code: 'EINVAL' });
      },
      realpath(p) {
        // The on-disk case, as Windows reports it.
        const found = dirs.find((d) => d.toLowerCase() === path.win32.normalize(p).toLowerCase());
        if (found || /^[a-z]:\\?$/i.test(p)) return found ?? p.toUpperCase();
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      },
    };
    const c = await coreWith(stdioFiles(), [allowTool('files'), globRule('no-ssh', 'files', 'disabled', 'C:/Users/Me/.ssh/**'), globRule('no-keys', 'files', 'disabled', '**/*.pem')], { semantics: 'win32', fs });
    for (const p of ['C:\\Users\\Me\\.ssh\\id_rsa', 'C:/Users/Me/.ssh/id_rsa', 'c:\\users\\me\\.SSH\\id_rsa', 'C:\\Users\\Me\\docs\\..\\.ssh\\id_rsa', 'C:\\Users\\Me\\docs\\server.pem', 'C:\\Users\\Me\\docs\\SERVER.PEM']) {
      const op = await modelReads(c, 'files', p);
      expect(op.state, p).toBe('denied');
    }
    expect(received()).toEqual([]);
    // A path the glob does not name still runs (the server, not on Windows, just cannot open it).
    const other = await modelReads(c, 'files', 'C:\\Users\\Me\\docs\\notes.txt');
    expect(other.state).not.toBe('denied');
    expect(received().map((r) => r.args.path)).toEqual(['C:\\Users\\Me\\docs\\notes.txt']);
  });
});
