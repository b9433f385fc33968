import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decide, loadOrganizationPolicy, parseOrganizationPolicy } from '../../../electron/core/policy';
import type { PolicyContext, PolicyState } from '../../../shared/domain/policy';

const ctx: PolicyContext = { tool: { contractHash: 'c', endpointHash: 'e' }, paths: 'posix' };
const req = { serverId: 'gh', accountId: 'work', toolName: 'close_issue', conversationId: null, arguments: {} };
const withOrg = (text: string | null): PolicyState => ({
  organization: parseOrganizationPolicy(text).rules,
  conversation: [],
  user: [{ id: 'u', scope: { kind: 'global' }, mode: 'allow', pin: null }],
  safeMode: false,
});

describe('organization policy file', () => {
  it('no file means no organization rules', () => {
    expect(parseOrganizationPolicy(null)).toEqual({ rules: [], errors: [] });
    expect(decide(req, withOrg(null), ctx).decision).toBe('allow');
  });

  it('a broken managed policy fails closed: every tool disabled, reason reported', () => {
    for (const bad of ['{not json', '{"version":2,"rules":[]}', '{"version":1,"rules":[{"mode":"ask"}]}', '[]']) {
      const parsed = parseOrganizationPolicy(bad);
      expect(parsed.errors[0], bad).toMatch(/Organization policy file is invalid/);
      expect(decide(req, withOrg(bad), ctx)).toMatchObject({ decision: 'deny', layer: 'organization' });
    }
  });

  it('rules apply as a ceiling; unknown modes are forbid and reported', () => {
    const text = JSON.stringify({ version: 1, rules: [{ id: 'cap', serverId: 'gh', mode: 'ask' }, { id: 'odd', toolName: 'delete', mode: 'Block' }] });
    const parsed = parseOrganizationPolicy(text);
    expect(parsed.errors).toEqual(['Organization rule odd: unknown mode "Block"; treated as forbid']);
    expect(decide(req, withOrg(text), ctx)).toMatchObject({ decision: 'ask', layer: 'organization' });
    expect(decide({ ...req, serverId: 'other', toolName: 'delete' }, withOrg(text), ctx).decision).toBe('deny');
  });

  it('reads the file from disk; a missing file is no rules', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-org-'));
    try {
      expect(loadOrganizationPolicy(path.join(dir, 'missing.json')).rules).toEqual([]);
      writeFileSync(path.join(dir, 'org.json'), JSON.stringify({ version: 1, rules: [{ id: 'f', mode: 'forbid' }] }));
      expect(loadOrganizationPolicy(path.join(dir, 'org.json')).rules).toEqual([{ id: 'f', serverId: null, accountId: null, toolName: null, mode: 'forbid' }]);
      expect(loadOrganizationPolicy(dir).errors[0]).toMatch(/cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
