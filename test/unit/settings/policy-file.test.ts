import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { loadPolicyFile, savePolicyFile } from '../../../electron/core/settings/policy-file';
import type { PolicyState } from '../../../shared/domain/policy';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'warden-policy-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const allowEcho = {
  id: 'r1',
  scope: { kind: 'tool', serverId: 's1', accountId: 'a1', toolName: 'echo' },
  mode: 'allow',
  pin: { contractHash: 'c'.repeat(64), endpointHash: 'e'.repeat(64) },
} as const;

describe('persisted permission rules', () => {
  it('rules saved by one run are the rules the next run starts with', () => {
    const dir = tempDir();
    const state = { organization: [], conversation: [], user: [allowEcho], safeMode: false } as unknown as PolicyState;
    savePolicyFile(openConfSettingsStore(dir, 'policy'), state);
    const loaded = loadPolicyFile(openConfSettingsStore(dir, 'policy'));
    expect(loaded.problem).toBeNull();
    expect(loaded.user).toEqual([allowEcho]);
  });

  it('an invalid policy file is kept byte for byte, reported by field, and loads no rules (every tool asks)', () => {
    const dir = tempDir();
    const path = join(dir, 'policy.json');
    const bad = JSON.stringify({ version: 1, user: [{ ...allowEcho, scope: { kind: 'tool' } }] });
    writeFileSync(path, bad);
    const loaded = loadPolicyFile(openConfSettingsStore(dir, 'policy'));
    expect(loaded.user).toEqual([]);
    expect(loaded.writable).toBe(false);
    expect(loaded.problem).toMatch(/user\.0\.scope/);
    expect(readFileSync(path, 'utf8')).toBe(bad);
  });

  it('a file that is not JSON is reported and left untouched', () => {
    const dir = tempDir();
    const path = join(dir, 'policy.json');
    writeFileSync(path, '{ not json');
    const loaded = loadPolicyFile(openConfSettingsStore(dir, 'policy'));
    expect(loaded.problem).toBeTruthy();
    expect(loaded.user).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe('{ not json');
  });

  it('a missing file means no rules and no problem', () => {
    const loaded = loadPolicyFile(openConfSettingsStore(tempDir(), 'policy'));
    expect(loaded).toMatchObject({ user: [], conversation: [], problem: null, writable: true });
  });
});
