import { describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decide, effectiveMode, hostPaths, isPathUnder, normalizeForPolicy, normalizePolicyPath, resolvePathLikeKernel } from '../../../electron/core/policy';
import type { PolicyContext, PolicyRequest, PolicyState, UserRule } from '../../../shared/domain/policy';

const tool = { contractHash: 'c1', endpointHash: 'e1' };
const ctx: PolicyContext = { tool, paths: 'posix', labels: { server: 'GitHub', account: 'Work' } };
const req = (over: Partial<PolicyRequest> = {}): PolicyRequest => ({
  serverId: 'gh',
  accountId: 'work',
  toolName: 'close_issue',
  conversationId: 'conv1',
  arguments: {},
  ...over,
});
const state = (over: Partial<PolicyState> = {}): PolicyState => ({ organization: [], conversation: [], user: [], safeMode: false, ...over });
const toolRule = (id: string, mode: unknown, extra: Partial<UserRule> = {}): UserRule => ({
  id,
  scope: { kind: 'tool', serverId: 'gh', accountId: 'work', toolName: 'close_issue' },
  mode,
  pin: null,
  ...extra,
});

describe('policy engine: modes and defaults', () => {
  it('unknown policy value fails closed', () => {
    for (const bad of ['Deny', 'ALLOW', '', null, 3, undefined, { allow: true }, ' allow']) {
      const d = decide(req(), state({ user: [toolRule('r1', bad)] }), ctx);
      expect(d.decision, `mode ${JSON.stringify(bad)}`).toBe('deny');
      expect(d.configErrors.join()).toMatch(/unknown mode/);
      expect(d.reason).toMatch(/invalid mode/);
      // The reading the matrix and the loosening checks use is the engine's own.
      expect(effectiveMode(bad)).toBe('disabled');
    }
    expect(['allow', 'ask', 'disabled'].map(effectiveMode)).toEqual(['allow', 'ask', 'disabled']);
    const org = decide(req(), state({ organization: [{ id: 'o1', serverId: null, accountId: null, toolName: null, mode: 'Allow' }], user: [toolRule('r1', 'allow')] }), ctx);
    expect(org.decision).toBe('deny');
    expect(org.layer).toBe('organization');
  });

  it('a discovered tool with no rule asks; discovery never grants', () => {
    const d = decide(req(), state(), ctx);
    expect(d).toMatchObject({ decision: 'ask', layer: 'default', ruleId: null });
  });

  it('a tool the server does not currently list is denied', () => {
    const d = decide(req(), state({ user: [toolRule('r1', 'allow')] }), { ...ctx, tool: undefined });
    expect(d).toMatchObject({ decision: 'deny', layer: 'availability' });
    expect(d.reason).toMatch(/does not currently list close_issue/);
  });

  it('explanations name the server and account a person knows, never the ids the rules hold', () => {
    const allowed = decide(req(), state({ user: [toolRule('r1', 'allow')] }), ctx);
    expect(allowed.reason).toBe('Allowed: you set Always Allow for close_issue on GitHub (Work)');
    const server = decide(req(), state({ user: [{ id: 's1', scope: { kind: 'server', serverId: 'gh', accountId: 'work' }, mode: 'ask', pin: null }] }), ctx);
    expect(server.reason).toBe('Asks: you set Ask for all tools of GitHub (Work)');
    const here = decide(req(), state({ conversation: [{ id: 'c1', conversationId: 'conv1', serverId: 'gh', accountId: 'work', toolName: 'close_issue', mode: 'disabled', pin: null }] }), ctx);
    expect(here.reason).toBe('Disabled in this conversation: you turned off close_issue on GitHub (Work) for this conversation');
    // Without labels (nothing better is known) the ids are all there is.
    expect(decide(req(), state({ user: [toolRule('r1', 'allow')] }), { ...ctx, labels: undefined }).reason).toBe('Allowed: you set Always Allow for close_issue on gh (work)');
  });

  it('server annotations and descriptions never make a decision more permissive', () => {
    const d = decide(req(), state(), { ...ctx, tool: { ...tool, annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true } } });
    expect(d.decision).toBe('ask');
  });
});

describe('policy engine: layers', () => {
  it('organization forbid beats user allow', () => {
    const d = decide(req(), state({ organization: [{ id: 'o', serverId: 'gh', accountId: null, toolName: null, mode: 'forbid' }], user: [toolRule('r', 'allow')] }), ctx);
    expect(d).toMatchObject({ decision: 'deny', layer: 'organization', ruleId: 'o', reason: 'Blocked by your organization' });
  });

  it('organization ask caps an Always Allow at ask, and forbids a conversation allow', () => {
    const capped = decide(req(), state({ organization: [{ id: 'o', serverId: null, accountId: null, toolName: 'close_issue', mode: 'ask' }], user: [toolRule('r', 'allow')] }), ctx);
    expect(capped).toMatchObject({ decision: 'ask', layer: 'organization' });
    const forbid = decide(
      req(),
      state({
        organization: [{ id: 'o', serverId: null, accountId: null, toolName: null, mode: 'forbid' }],
        conversation: [{ id: 'c', conversationId: 'conv1', serverId: 'gh', accountId: null, toolName: null, mode: 'allow', pin: null }],
      }),
      ctx,
    );
    expect(forbid.decision).toBe('deny');
  });

  it('conversation disable beats global allow', () => {
    const s = state({
      conversation: [{ id: 'c', conversationId: 'conv1', serverId: 'gh', accountId: null, toolName: 'close_issue', mode: 'disabled', pin: null }],
      user: [{ id: 'g', scope: { kind: 'global' }, mode: 'allow', pin: null }],
    });
    expect(decide(req(), s, ctx)).toMatchObject({ decision: 'deny', layer: 'conversation' });
    // Another conversation is unaffected.
    expect(decide(req({ conversationId: 'conv2' }), s, ctx)).toMatchObject({ decision: 'allow', layer: 'user' });
  });

  it('user levels: tool+constraint > tool > server/account > global', () => {
    const user: UserRule[] = [
      { id: 'g', scope: { kind: 'global' }, mode: 'disabled', pin: null },
      { id: 's', scope: { kind: 'server', serverId: 'gh', accountId: 'work' }, mode: 'allow', pin: null },
    ];
    expect(decide(req(), state({ user }), ctx).ruleId).toBe('s');
    user.push(toolRule('t', 'ask'));
    expect(decide(req(), state({ user: [...user] }), ctx)).toMatchObject({ ruleId: 't', decision: 'ask' });
    user.push({ id: 'tc', scope: { kind: 'tool-constraint', serverId: 'gh', accountId: 'work', toolName: 'close_issue', constraints: [{ op: 'equals', field: 'repo', value: 'acme/mobile' }] }, mode: 'allow', pin: null });
    expect(decide(req({ arguments: { repo: 'acme/mobile' } }), state({ user: [...user] }), ctx)).toMatchObject({ ruleId: 'tc', decision: 'allow' });
    expect(decide(req({ arguments: { repo: 'acme/web' } }), state({ user: [...user] }), ctx)).toMatchObject({ ruleId: 't', decision: 'ask' });
  });

  it('within one level the most restrictive matching rule wins', () => {
    const s = state({ user: [toolRule('a', 'allow'), toolRule('b', 'disabled'), toolRule('c', 'ask')] });
    expect(decide(req(), s, ctx)).toMatchObject({ decision: 'deny', ruleId: 'b' });
  });

  it('two servers exposing the same tool name are distinct identities', () => {
    const s = state({ user: [{ id: 'a', scope: { kind: 'tool', serverId: 'gh', accountId: null, toolName: 'delete' }, mode: 'allow', pin: null }] });
    expect(decide(req({ toolName: 'delete' }), s, ctx).decision).toBe('allow');
    expect(decide(req({ toolName: 'delete', serverId: 'evil' }), s, ctx).decision).toBe('ask');
  });

  it('safe mode holds every tool at ask', () => {
    expect(decide(req(), state({ user: [toolRule('r', 'allow')], safeMode: true }), ctx)).toMatchObject({ decision: 'ask', layer: 'safe-mode' });
    // A wrapper that spreads the same rule arrays with safeMode toggled is honoured both ways.
    const base = state({ user: [toolRule('r', 'allow')] });
    expect(decide(req(), { ...base, safeMode: true }, ctx).decision).toBe('ask');
    expect(decide(req(), { ...base, safeMode: false }, ctx).decision).toBe('allow');
  });
});

describe('policy engine: pins', () => {
  const pinned = toolRule('r', 'allow', { pin: { contractHash: 'c1', endpointHash: 'e1' } });
  it('endpoint change drops Always Allow to ask', () => {
    const d = decide(req(), state({ user: [pinned] }), { ...ctx, tool: { ...tool, endpointHash: 'e2' } });
    expect(d).toMatchObject({ decision: 'ask', pin: 'endpoint-changed' });
    expect(d.reason).toMatch(/server endpoint changed/);
  });
  it('tool contract change drops Always Allow to ask', () => {
    const d = decide(req(), state({ user: [pinned] }), { ...ctx, tool: { ...tool, contractHash: 'c2' } });
    expect(d).toMatchObject({ decision: 'ask', pin: 'contract-changed' });
    expect(d.reason).toMatch(/tool changed since you allowed it/);
    expect(decide(req(), state({ user: [pinned] }), ctx)).toMatchObject({ decision: 'allow', pin: 'ok' });
  });
  it('explains an allow in human words, naming the server and account, never their ids', () => {
    const rule: UserRule = {
      id: 'r',
      scope: { kind: 'tool-constraint', serverId: 'gh', accountId: 'work', toolName: 'close_issue', constraints: [{ op: 'pathUnder', field: 'path', value: '/project/docs' }] },
      mode: 'allow',
      pin: null,
    };
    const d = decide(req({ arguments: { path: '/project/docs/a.md' } }), state({ user: [rule] }), ctx);
    expect(d.reason).toBe('Allowed: you set Always Allow for close_issue on GitHub (Work) when path is under /project/docs');
  });

  it('says in words which rule decided, at every level and layer, with names instead of ids', () => {
    const ids = { serverId: 'github-5f3a9c1e', accountId: 'default-56d3124e' };
    const named: PolicyContext = { tool, paths: 'posix', labels: { server: 'GitHub', account: 'Work' } };
    const r = (over: Partial<PolicyRequest> = {}) => req({ ...ids, ...over });
    const user = (scope: UserRule['scope'], mode: unknown): PolicyState => state({ user: [{ id: 'user:x', scope, mode, pin: null }] });
    const cases: Array<[PolicyState, string]> = [
      [state(), 'Asks: you have not chosen a mode for close_issue on GitHub (Work), and a tool Warden discovers always asks until you do'],
      [user({ kind: 'server', serverId: ids.serverId, accountId: null }, 'ask'), 'Asks: you set Ask for all tools of GitHub'],
      [user({ kind: 'server', serverId: ids.serverId, accountId: ids.accountId }, 'disabled'), 'Disabled: you set Disabled for all tools of GitHub (Work)'],
      [user({ kind: 'tool', serverId: ids.serverId, accountId: ids.accountId, toolName: 'close_issue' }, 'ask'), 'Asks: you set Ask for close_issue on GitHub (Work)'],
      [user({ kind: 'tool', serverId: ids.serverId, accountId: null, toolName: 'close_issue' }, 'allow'), 'Allowed: you set Always Allow for close_issue on GitHub (every account)'],
      [user({ kind: 'global' }, 'ask'), 'Asks: you set Ask for every tool of every server'],
      [user({ kind: 'tool', serverId: ids.serverId, accountId: ids.accountId, toolName: 'close_issue' }, 'Deny'), 'Disabled: your rule for close_issue on GitHub (Work) has the mode "Deny", which Warden does not know (an invalid mode is read as Disabled)'],
      [state({ conversation: [{ id: 'conv:x', conversationId: 'conv1', serverId: ids.serverId, accountId: null, toolName: 'close_issue', mode: 'disabled', pin: null }] }), 'Disabled in this conversation: you turned off close_issue on GitHub for this conversation'],
      [state({ organization: [{ id: 'org-1', serverId: ids.serverId, accountId: null, toolName: null, mode: 'forbid' }] }), 'Blocked by your organization'],
      [state({ organization: [{ id: 'org-1', serverId: null, accountId: null, toolName: null, mode: 'ask' }], user: [{ id: 'user:x', scope: { kind: 'global' }, mode: 'allow', pin: null }] }), 'Asks: your organization requires asking for this tool'],
    ];
    for (const [policy, reason] of cases) {
      const d = decide(r(), policy, named);
      expect(d.reason).toBe(reason);
      expect(d.reason).not.toContain(ids.serverId);
      expect(d.reason).not.toContain(ids.accountId);
    }
  });
});

describe('argument constraints', () => {
  const constrained = (constraints: UserRule['scope'] extends infer S ? (S extends { constraints: infer C } ? C : never) : never): PolicyState =>
    state({ user: [{ id: 'r', scope: { kind: 'tool-constraint', serverId: 'gh', accountId: null, toolName: 'close_issue', constraints }, mode: 'allow', pin: null }] });
  const allowed = (s: PolicyState, args: Record<string, unknown>, c: PolicyContext = ctx) => decide(req({ arguments: args }), s, c).decision === 'allow';

  it('pathUnder: .. never escapes, siblings with a shared prefix are not inside', () => {
    const s = constrained([{ op: 'pathUnder', field: 'path', value: '/project/docs' }]);
    expect(allowed(s, { path: '/project/docs/a/b.md' })).toBe(true);
    expect(allowed(s, { path: '/project/docs' })).toBe(true);
    expect(allowed(s, { path: '/project//docs/./x' })).toBe(true);
    expect(allowed(s, { path: '/project/docs/../secrets/x' })).toBe(false);
    expect(allowed(s, { path: '/project/docs-evil/x' })).toBe(false);
    expect(allowed(s, { path: 'docs/x' })).toBe(false);
    expect(allowed(s, { path: '/Project/docs/x' })).toBe(false);
    expect(allowed(s, {})).toBe(false);
  });

  it('pathUnder with Windows semantics: case-insensitive, both separators, drive required', () => {
    const s = constrained([{ op: 'pathUnder', field: 'path', value: 'C:\\Project\\Docs' }]);
    const win: PolicyContext = { ...ctx, paths: 'win32' };
    expect(allowed(s, { path: 'c:/project/docs/a.txt' }, win)).toBe(true);
    expect(allowed(s, { path: 'C:\\Project\\Docs\\..\\Secrets\\a.txt' }, win)).toBe(false);
    expect(allowed(s, { path: 'D:\\Project\\Docs\\a.txt' }, win)).toBe(false);
    expect(allowed(s, { path: '\\Project\\Docs\\a.txt' }, win)).toBe(false);
    expect(isPathUnder('C:\\a\\b', 'c:\\A', 'win32')).toBe(true);
    expect(normalizePolicyPath('/a/B/../c/', 'posix')).toBe('/a/c');
  });

  it('equals, oneOf, matches, min, max, maxLength', () => {
    expect(allowed(constrained([{ op: 'equals', field: 'o.n', value: 1 }]), { o: { n: 1.0 } })).toBe(true);
    expect(allowed(constrained([{ op: 'equals', field: 'o.n', value: 1 }]), { o: { n: '1' } })).toBe(false);
    expect(allowed(constrained([{ op: 'oneOf', field: 'repo', value: ['a/b', 'a/c'] }]), { repo: 'a/c' })).toBe(true);
    expect(allowed(constrained([{ op: 'oneOf', field: 'repo', value: ['a/b', 'a/c'] }]), { repo: 'a/d' })).toBe(false);
    expect(allowed(constrained([{ op: 'matches', field: 'branch', value: 'feature/**' }]), { branch: 'feature/x/y' })).toBe(true);
    expect(allowed(constrained([{ op: 'matches', field: 'branch', value: 'feature/**' }]), { branch: 'main' })).toBe(false);
    expect(allowed(constrained([{ op: 'min', field: 'n', value: 2 }, { op: 'max', field: 'n', value: 5 }]), { n: 5 })).toBe(true);
    expect(allowed(constrained([{ op: 'min', field: 'n', value: 2 }, { op: 'max', field: 'n', value: 5 }]), { n: 6 })).toBe(false);
    expect(allowed(constrained([{ op: 'min', field: 'n', value: 2 }]), { n: '3' })).toBe(false);
    expect(allowed(constrained([{ op: 'maxLength', field: 's', value: 3 }]), { s: 'abc' })).toBe(true);
    expect(allowed(constrained([{ op: 'maxLength', field: 's', value: 3 }]), { s: 'abcd' })).toBe(false);
  });

  it('symlinks are resolved where the path exists, before the policy sees the arguments', () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'warden-policy-')));
    try {
      mkdirSync(path.join(dir, 'docs'));
      mkdirSync(path.join(dir, 'secrets'));
      writeFileSync(path.join(dir, 'secrets', 'key'), 'x');
      symlinkSync(path.join(dir, 'secrets'), path.join(dir, 'docs', 'link'));
      const s = constrained([{ op: 'pathUnder', field: 'target', value: path.join(dir, 'docs') }]);
      const fs = hostPaths().fs;
      const viaLink = normalizeForPolicy({ target: path.join(dir, 'docs', 'link', 'key') }, { semantics: 'posix', fs, pathFields: ['target'] }).arguments;
      expect(viaLink.target).toBe(path.join(dir, 'secrets', 'key'));
      expect(allowed(s, viaLink)).toBe(false);
      // A file that does not exist yet inside the linked folder lands in secrets too.
      const newFile = normalizeForPolicy({ path: path.join(dir, 'docs', 'link', 'new.txt') }, { semantics: 'posix', fs }).arguments;
      expect(newFile.path).toBe(path.join(dir, 'secrets', 'new.txt'));
      const plain = normalizeForPolicy({ target: path.join(dir, 'docs', 'ok.md') }, { semantics: 'posix', fs, pathFields: ['target'] }).arguments;
      expect(allowed(s, plain)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('paths the way the operating system opens them', () => {
  /** A file system of links and folders in memory, for the semantics of a platform this host is not. */
  const fakeFs = (links: Record<string, string>, dirs: string[], lib: typeof path.posix) => ({
    lstat(p: string) {
      const key = lib.normalize(p);
      if (key in links) return { isSymbolicLink: () => true };
      if (dirs.includes(key)) return { isSymbolicLink: () => false };
      throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    },
    readlink: (p: string) => links[lib.normalize(p)]!,
    realpath(p: string): string {
      let key = lib.normalize(p);
      for (let hops = 0; key in links; hops++) {
        if (hops > 40) throw Object.assign(new Error('loop'), { code: 'ELOOP' });
        key = lib.resolve(lib.dirname(key), links[key]!);
      }
      if (!dirs.includes(key) && key !== lib.parse(key).root) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      return key;
    },
  });

  it('POSIX follows each symlink before applying the next .., as the kernel does', () => {
    const fs = fakeFs({ '/p/docs/link': '/outside/inner', '/p/docs/rel': '../../outside/inner' }, ['/p', '/p/docs', '/outside', '/outside/inner'], path.posix);
    expect(resolvePathLikeKernel('/p/docs/link/../secret.txt', 'posix', fs)).toEqual({ ok: true, path: '/outside/secret.txt' });
    expect(resolvePathLikeKernel('/p/docs/rel/../secret.txt', 'posix', fs)).toEqual({ ok: true, path: '/outside/secret.txt' });
    expect(resolvePathLikeKernel('/p/docs/new/../x', 'posix', fs)).toEqual({ ok: true, path: '/p/docs/x' });
  });

  it('Windows applies .. to the string first (Win32 path normalization), then follows links', () => {
    const fs = fakeFs({ 'C:\\p\\docs\\link': 'D:\\outside\\inner' }, ['C:\\p', 'C:\\p\\docs', 'D:\\outside', 'D:\\outside\\inner'], path.win32);
    expect(resolvePathLikeKernel('C:\\p\\docs\\link\\..\\secret.txt', 'win32', fs)).toEqual({ ok: true, path: 'C:\\p\\docs\\secret.txt' });
    expect(resolvePathLikeKernel('C:/p/docs/link/key', 'win32', fs)).toEqual({ ok: true, path: 'D:\\outside\\inner\\key' });
    // Relative paths take the working folder's drive; a path relative to another drive's own folder cannot be placed.
    expect(resolvePathLikeKernel('docs\\a.txt', 'win32', null, 'C:\\p')).toEqual({ ok: true, path: 'C:\\p\\docs\\a.txt' });
    expect(resolvePathLikeKernel('\\p\\docs\\a.txt', 'win32', null, 'C:\\w')).toEqual({ ok: true, path: 'C:\\p\\docs\\a.txt' });
    expect(resolvePathLikeKernel('D:a.txt', 'win32', null, 'C:\\w')).toMatchObject({ ok: false, kind: 'unknown' });
  });

  it('loops, home-folder tildes and missing working folders are reported, never guessed', () => {
    const fs = fakeFs({ '/a': '/b', '/b': '/a' }, [], path.posix);
    expect(resolvePathLikeKernel('/a/x', 'posix', fs)).toMatchObject({ ok: false, kind: 'loop' });
    expect(resolvePathLikeKernel('~/secrets', 'posix', fs, '/w')).toMatchObject({ ok: false, kind: 'unknown' });
    expect(resolvePathLikeKernel('secrets/key', 'posix', fs, null)).toMatchObject({ ok: false, kind: 'unknown', why: expect.stringMatching(/working folder is unknown/) });
  });

  it('a path that cannot be placed is decided by the strictest rule it could fall under, never more allowed', () => {
    const rule = (id: string, mode: string, under: string): UserRule => ({
      id,
      scope: { kind: 'tool-constraint', serverId: 'gh', accountId: null, toolName: 'close_issue', constraints: [{ op: 'pathUnder', field: 'path', value: under }] },
      mode,
      pin: null,
    });
    const rel = { path: 'secrets/key' };
    const withTool = (mode: string, ...rules: UserRule[]) => state({ user: [toolRule('t', mode), ...rules] });
    expect(decide(req({ arguments: rel }), withTool('allow', rule('s', 'disabled', '/p/secrets')), ctx)).toMatchObject({ decision: 'deny', ruleId: 's' });
    expect(decide(req({ arguments: rel }), withTool('allow', rule('s', 'ask', '/p/secrets')), ctx)).toMatchObject({ decision: 'ask', ruleId: 's' });
    // An Allow folder never applies to it; a stricter tool rule is kept.
    expect(decide(req({ arguments: rel }), withTool('ask', rule('d', 'allow', '/p/docs')), ctx)).toMatchObject({ decision: 'ask', ruleId: 't' });
    expect(decide(req({ arguments: rel }), withTool('disabled', rule('s', 'ask', '/p/secrets')), ctx)).toMatchObject({ decision: 'deny', ruleId: 't' });
    expect(decide(req({ arguments: rel }), state({ user: [rule('d', 'allow', '/p/docs')] }), ctx)).toMatchObject({ decision: 'ask', layer: 'default' });
    // An absolute path stays exact: outside the Disabled folder, the tool rule applies.
    expect(decide(req({ arguments: { path: '/p/docs/a' } }), withTool('allow', rule('s', 'disabled', '/p/secrets')), ctx)).toMatchObject({ decision: 'allow', ruleId: 't' });
    const why = new Map([['path', 'arguments.path "secrets/key" is a relative path and the server\'s working folder is unknown']]);
    expect(decide(req({ arguments: rel }), withTool('allow', rule('s', 'disabled', '/p/secrets')), { ...ctx, unresolvedPaths: why }).reason).toBe(
      `Disabled: you set Disabled for close_issue on GitHub (every account) when path is under /p/secrets (${why.get('path')}; the strictest rule it could fall under applies)`,
    );
  });

  it('a glob on a path holds only if it holds as written and where the path is opened; otherwise it can only make the call stricter', () => {
    const glob = (id: string, mode: string, value: string): UserRule => ({
      id,
      scope: { kind: 'tool-constraint', serverId: 'gh', accountId: null, toolName: 'close_issue', constraints: [{ op: 'matches', field: 'path', value }] },
      mode,
      pin: null,
    });
    const withTool = (mode: string, ...rules: UserRule[]) => state({ user: [toolRule('t', mode), ...rules] });
    const at = (written: string, opened: string | null, extra: Partial<PolicyContext> = {}) => ({
      request: req({ arguments: { path: written } }),
      context: { ...ctx, ...extra, pathValues: new Map([['path', opened === null ? { written, opened, why: 'is a relative path and the server\'s working folder is unknown' } : { written, opened }]]) },
    });
    const decideAt = (where: ReturnType<typeof at>, policy: PolicyState) => decide(where.request, policy, where.context);
    // Both readings agree: exactly as before.
    expect(decideAt(at('/p/secrets/k', '/p/secrets/k'), withTool('allow', glob('s', 'disabled', '/p/secrets/**')))).toMatchObject({ decision: 'deny', ruleId: 's' });
    expect(decideAt(at('/p/docs/a', '/p/docs/a'), withTool('allow', glob('s', 'disabled', '/p/secrets/**')))).toMatchObject({ decision: 'allow', ruleId: 't' });
    expect(decideAt(at('/p/docs/a', '/p/docs/a'), withTool('ask', glob('d', 'allow', '/p/docs/**')))).toMatchObject({ decision: 'allow', ruleId: 'd' });
    // Written one way, opened another (a relative path, a symlink): a Disabled glob holds, an Allow glob does not apply.
    const denied = decideAt(at('secrets/k', '/p/secrets/k'), withTool('allow', glob('s', 'disabled', '/p/secrets/**')));
    expect(denied).toMatchObject({ decision: 'deny', ruleId: 's' });
    expect(denied.reason).toContain('arguments.path "secrets/k" is opened as /p/secrets/k');
    expect(decideAt(at('/p/docs/link/a', '/outside/a'), withTool('ask', glob('d', 'allow', '/p/docs/**')))).toMatchObject({ decision: 'ask', ruleId: 't' });
    // A place that cannot be known: strictest.
    expect(decideAt(at('secrets/k', null), withTool('allow', glob('s', 'disabled', '/srv/secrets/**')))).toMatchObject({ decision: 'deny', ruleId: 's' });
    expect(decideAt(at('notes.md', null), withTool('ask', glob('d', 'allow', '*.md')))).toMatchObject({ decision: 'ask', ruleId: 't' });
    // Windows: either separator, any case.
    const win: Partial<PolicyContext> = { paths: 'win32' };
    expect(decideAt(at('C:\\Users\\Me\\.ssh\\id', 'C:\\Users\\Me\\.ssh\\id', win), withTool('allow', glob('s', 'disabled', 'C:/Users/Me/.ssh/**')))).toMatchObject({ decision: 'deny' });
    expect(decideAt(at('c:/users/me/.SSH/id', 'c:\\users\\me\\.SSH\\id', win), withTool('allow', glob('s', 'disabled', '**/.ssh/**')))).toMatchObject({ decision: 'deny' });
    expect(decideAt(at('C:/P/Docs/a', 'C:\\P\\Docs\\a', win), withTool('ask', glob('d', 'allow', 'C:/P/Docs/**')))).toMatchObject({ decision: 'allow', ruleId: 'd' });
    expect(decideAt(at('c:/p/docs/a', 'c:\\p\\docs\\a', win), withTool('ask', glob('d', 'allow', 'C:/P/Docs/**')))).toMatchObject({ decision: 'ask', ruleId: 't' });
    // Not a path field: the glob reads the string as it is.
    expect(decide(req({ arguments: { path: 'secrets/k' } }), withTool('allow', glob('s', 'disabled', '/p/secrets/**')), ctx)).toMatchObject({ decision: 'allow' });
  });
});
