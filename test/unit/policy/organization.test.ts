import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decide, loadOrganizationPolicy, parseOrganizationPolicy } from '../../../electron/core/policy';
import { posixPolicyGuard } from '../../../electron/core/policy/organization-guard';
import type { PolicyContext, PolicyState } from '../../../shared/domain/policy';

const ctx: PolicyContext = { tool: { contractHash: 'c', endpointHash: 'e' }, paths: 'posix' };
const req = { serverId: 'gh', accountId: 'work', toolName: 'close_issue', conversationId: null, arguments: {} };
const stateWith = (organization: PolicyState['organization']): PolicyState => ({
  organization,
  conversation: [],
  user: [{ id: 'u', scope: { kind: 'global' }, mode: 'allow', pin: null }],
  safeMode: false,
});
const withOrg = (text: string | null): PolicyState => stateWith(parseOrganizationPolicy(text).rules);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const me = process.getuid?.() ?? 0;
/** The POSIX guard as production builds it, also trusting this test's user and group (tests need not run as root). */
const guard = posixPolicyGuard({ uids: [0, me], gids: [0, process.getgid?.() ?? 0] });

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * Where protected test folders go: the first candidate whose every ancestor only administrators
 * (and this test's own user, trusted above) can change, as judged by the guard under test. The
 * checkout's node_modules/.cache is tried first, but a checkout may live anywhere — under the
 * system temp folder, which every user can write, the guard rightly refuses it — so the account's
 * home folder (from the user database: the test runner points $HOME into the temp folder) is the
 * fallback. Choosing by the guard itself keeps the tests independent of where the repository was
 * cloned.
 */
let protectedBase = '';
beforeAll(async () => {
  const candidates = [path.join(repoRoot, 'node_modules', '.cache'), path.join(userInfo().homedir, '.cache')];
  const refused: string[] = [];
  for (const base of candidates) {
    try {
      mkdirSync(base, { recursive: true });
      const problems = await guard.problems(base);
      if (problems.length === 0) {
        protectedBase = base;
        return;
      }
      refused.push(...problems);
    } catch (error) {
      refused.push(`${base}: ${(error as Error).message}`);
    }
  }
  throw new Error(`No folder for protected test files: every candidate can be changed by other users (${refused.join('; ')})`);
});

/** A fresh folder inside {@link protectedBase}, removed after the test. */
function protectedDir(): string {
  const dir = mkdtempSync(path.join(protectedBase, 'warden-org-test-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

describe('organization policy file', () => {
  it('no file means no organization rules', async () => {
    expect(parseOrganizationPolicy(null)).toEqual({ rules: [], errors: [] });
    expect(decide(req, withOrg(null), ctx).decision).toBe('allow');
    expect(await loadOrganizationPolicy(path.join(protectedDir(), 'missing.json'))).toEqual({ rules: [], errors: [] });
  });

  it('a broken managed policy fails closed: every tool disabled, reason reported', () => {
    for (const bad of ['{not json', '{"version":2,"rules":[]}', '{"version":1,"rules":[{"mode":"ask"}]}', '[]']) {
      const parsed = parseOrganizationPolicy(bad);
      expect(parsed.errors[0], bad).toMatch(/Organization policy file is invalid/);
      expect(decide(req, withOrg(bad), ctx)).toMatchObject({ decision: 'deny', layer: 'organization' });
    }
  });

  it('a key the format does not know ("tool" for "toolName") is an error that forbids every tool, not silently dropped', () => {
    // Dropped, "tool" would have widened the cap to every tool of every server without a word.
    const text = JSON.stringify({ version: 1, rules: [{ id: 'cap-delete', tool: 'delete_repo', mode: 'ask' }] });
    const parsed = parseOrganizationPolicy(text);
    expect(parsed.errors).toEqual([
      'Organization policy file is invalid (rules.0: unknown key "tool" (known keys: id, serverId, accountId, toolName, mode)); every tool is disabled until it is fixed',
    ]);
    expect(decide(req, withOrg(text), ctx)).toMatchObject({ decision: 'deny', layer: 'organization' });
    const topLevel = parseOrganizationPolicy(JSON.stringify({ version: 1, rules: [], exceptions: [] }));
    expect(topLevel.errors[0]).toMatch(/\(file\): unknown key "exceptions" \(known keys: version, rules\)/);
  });

  it('rules apply as a ceiling; unknown modes are forbid and reported', () => {
    const text = JSON.stringify({ version: 1, rules: [{ id: 'cap', serverId: 'gh', mode: 'ask' }, { id: 'odd', toolName: 'delete', mode: 'Block' }] });
    const parsed = parseOrganizationPolicy(text);
    expect(parsed.errors).toEqual(['Organization rule odd: unknown mode "Block"; treated as forbid']);
    expect(decide(req, withOrg(text), ctx)).toMatchObject({ decision: 'ask', layer: 'organization' });
    expect(decide({ ...req, serverId: 'other', toolName: 'delete' }, withOrg(text), ctx).decision).toBe('deny');
  });

  it('reads a protected file from disk; a missing file is no rules; an unreadable one forbids every tool', async () => {
    const dir = protectedDir();
    const file = path.join(dir, 'org.json');
    writeFileSync(file, JSON.stringify({ version: 1, rules: [{ id: 'f', mode: 'forbid' }] }), { mode: 0o644 });
    expect(await loadOrganizationPolicy(path.join(dir, 'missing.json'), { guard })).toEqual({ rules: [], errors: [] });
    expect((await loadOrganizationPolicy(file, { guard })).rules).toEqual([{ id: 'f', serverId: null, accountId: null, toolName: null, mode: 'forbid' }]);
    expect((await loadOrganizationPolicy(dir, { guard })).errors[0]).toMatch(/cannot read/);
  });
});

describe('a policy file non-administrators can change forbids every tool', () => {
  const allowAll = JSON.stringify({ version: 1, rules: [] });

  async function expectRefused(file: string, why: RegExp, options = { guard }) {
    const policy = await loadOrganizationPolicy(file, options);
    expect(policy.errors).toHaveLength(1);
    expect(policy.errors[0]).toMatch(/^Organization policy file .* is not protected: /);
    expect(policy.errors[0]).toMatch(why);
    expect(decide(req, stateWith(policy.rules), ctx)).toMatchObject({ decision: 'deny', layer: 'organization' });
  }

  it('a file every user can write', async () => {
    const file = path.join(protectedDir(), 'policy.json');
    writeFileSync(file, allowAll);
    chmodSync(file, 0o666);
    await expectRefused(file, /policy\.json is writable by every user \(mode 666\)/);
  });

  it('a file its group can write, when the group is not an administrators group', async () => {
    const file = path.join(protectedDir(), 'policy.json');
    writeFileSync(file, allowAll);
    chmodSync(file, 0o664);
    // As root the file's group is root's: hand it to an ordinary group (users, 100). Only gid 0 is trusted here.
    if (me === 0) chownSync(file, 0, 100);
    await expectRefused(file, /policy\.json is writable by group \d+ \(mode 664\)/, { guard: posixPolicyGuard({ uids: [0, me] }) });
  });

  it('a folder on the way that every user can write (anyone could replace the file)', async () => {
    const dir = protectedDir();
    mkdirSync(path.join(dir, 'warden'));
    chmodSync(path.join(dir, 'warden'), 0o777);
    const file = path.join(dir, 'warden', 'policy.json');
    writeFileSync(file, allowAll, { mode: 0o644 });
    await expectRefused(file, /warden is writable by every user \(mode 777\)/);
  });

  it('the system temp folder is never a safe place (writable by every user)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-org-'));
    dirs.push(dir);
    const file = path.join(dir, 'policy.json');
    writeFileSync(file, allowAll, { mode: 0o644 });
    await expectRefused(file, new RegExp(`${tmpdir().replace(/[/\\]/g, '.')} is writable by every user`));
  });

  it('a file owned by an ordinary user, with the production trust (root only)', async () => {
    const file = path.join(protectedDir(), 'policy.json');
    writeFileSync(file, allowAll, { mode: 0o644 });
    if (me === 0) chownSync(file, 65534, 65534);
    await expectRefused(file, me === 0 ? /policy\.json is owned by uid 65534, not root/ : new RegExp(`is owned by uid ${me}, not root`), { guard: posixPolicyGuard() });
  });

  it('a symbolic link to a file the user controls', async () => {
    const dir = protectedDir();
    const target = path.join(dir, 'mine.json');
    writeFileSync(target, allowAll);
    chmodSync(target, 0o666);
    const link = path.join(dir, 'policy.json');
    (await import('node:fs')).symlinkSync(target, link);
    await expectRefused(link, /mine\.json is writable by every user/);
  });
});
