/**
 * Settings through the real core: the preferences change what the gate does (approval expiry of
 * new approvals, the default for tools with no rule), survive a restart in the real settings
 * file, and cannot be loosened by a renderer alone; `settings:get` reports the keychain and the
 * activity log; `ledger:verify` checks a real ledger on disk in a worker thread and says what it
 * found in words.
 *
 * Calls go through `dispatch`, the same path (contract parsing included) main and the test host
 * use; a real MCP server behind the gate counts what it actually receives.
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type CoreDeps, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { segmentName } from '../../../electron/core/ledger/ledger';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { ApprovalPreview } from '../../../electron/core/ports';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { LedgerCheck, SettingsView } from '../../../shared/contract/settings';
import type { ChannelName } from '../../../shared/ipc';
import type { Result } from '../../../shared/result';
import { ClientRegistry, FakeClock, InMemoryMcp } from '../gate/harness';

const secrets = new KeytarSecretStore({ service: `warden-preferences-${randomUUID()}` });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-preferences-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One contract call through dispatch, as the app makes it. */
function call<T>(core: WardenCore, channel: ChannelName, request: unknown): Promise<Result<T>> {
  return dispatch(core.handlers, channel, request, () => {}) as Promise<Result<T>>;
}
async function value<T>(core: WardenCore, channel: ChannelName, request: unknown): Promise<T> {
  const r = await call<T>(core, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

/** A server "gh" with tools close_issue and read_file for account "work", behind the real gate. */
async function server(): Promise<{ mcp: InMemoryMcp; registry: ClientRegistry }> {
  const mcp = new InMemoryMcp('gh');
  mcp.addTool('close_issue');
  mcp.addTool('read_file');
  await mcp.connect();
  const registry = new ClientRegistry().add('gh', mcp, ['work']);
  await registry.refresh();
  cleanups.push(() => mcp.close());
  return { mcp, registry };
}

interface Started {
  core: WardenCore;
  mcp: InMemoryMcp;
  prompts: ApprovalPreview[];
  answer: { next: 'approve' | 'deny' };
}

/** A core with a real settings file in `dir`, the test server, and a stand-in for main's dialog. */
async function start(dir: string, extra: Partial<CoreDeps> = {}): Promise<Started> {
  const { mcp, registry } = await server();
  const prompts: ApprovalPreview[] = [];
  const answer = { next: 'approve' as 'approve' | 'deny' };
  const core = createCore({
    version: '1.2.3-test',
    platform: 'linux',
    servers: { settingsStore: openConfSettingsStore(dir), secrets },
    gate: { registry, executor: registry, prompter: { prompt: async (p) => (prompts.push(p), answer.next) } },
    ...extra,
  });
  cleanups.push(() => core.close());
  return { core, mcp, prompts, answer };
}

const request = (toolName: string, text = 'x') => ({ source: 'model' as const, conversationId: 'c1', serverId: 'gh', accountId: 'work', toolName, arguments: { text } });

describe('Settings change what the gate does', () => {
  it('the approval expiry chosen in Settings is the expiry of the next approval; pending ones keep theirs; a restart keeps it', async () => {
    const dir = tempDir();
    const clock = new FakeClock();
    const { core } = await start(dir, { clock });
    expect((await value<SettingsView>(core, 'settings:get', {})).approvals).toEqual({ expiryMs: 600_000, defaultExpiryMs: 600_000 });
    const first = await core.gate.gate.submit(request('close_issue', 'first'));
    expect(first.state).toBe('awaiting_approval');
    expect(first.expiresAt! - clock.now()).toBe(600_000);

    const after = await value<SettingsView>(core, 'settings:set', { approvalExpiryMs: 120_000 });
    expect(after.approvals.expiryMs).toBe(120_000);
    clock.advance(1_000);
    const second = await core.gate.gate.submit(request('close_issue', 'second'));
    expect(second.expiresAt! - clock.now()).toBe(120_000);
    expect((await core.gate.gate.get(first.operationId))!.expiresAt).toBe(first.expiresAt);

    // The gate really expires it at the new time, not the old one.
    clock.advance(120_000);
    await core.gate.gate.sweepExpired();
    expect((await core.gate.gate.get(second.operationId))!.state).toBe('expired');
    expect((await core.gate.gate.get(first.operationId))!.state).toBe('awaiting_approval');
    await core.close();

    // The settings file keeps it for the next start.
    expect(JSON.parse(readFileSync(path.join(dir, 'settings.json'), 'utf8')).preferences.approvalTimeoutMs).toBe(120_000);
    const again = await start(dir, { clock });
    const third = await again.core.gate.gate.submit(request('close_issue', 'third'));
    expect(third.expiresAt! - clock.now()).toBe(120_000);
  });

  it('an expiry outside 1 minute to 24 hours is refused with the field named, and nothing changes', async () => {
    const { core } = await start(tempDir());
    for (const bad of [{ approvalExpiryMs: 5_000 }, { approvalExpiryMs: 2 * 86_400_000 }, { approvalExpiryMs: 90_000.5 }, {}, { approvalExpiryMs: 120_000, theme: 'dark' }]) {
      const r = await call(core, 'settings:set', bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe('INVALID_REQUEST');
    }
    const tooShort = await call(core, 'settings:set', { approvalExpiryMs: 5_000 });
    expect(!tooShort.ok && tooShort.error.message).toMatch(/approvalExpiryMs: approval expiry: at least 1 minute/);
    expect((await value<SettingsView>(core, 'settings:get', {})).approvals.expiryMs).toBe(600_000);
  });

  it('with the Disabled default a tool with no rule is refused and not offered to the model; a tool with its own rule still asks', async () => {
    const { core, mcp } = await start(tempDir());
    await value(core, 'permissions:set', { scope: 'tool', serverId: 'gh', accountId: 'work', toolName: 'read_file', mode: 'ask' });
    const offeredBefore = await value<{ tools: Array<{ toolName: string }> }>(core, 'tools:offered', { conversationId: 'c1' });
    expect(offeredBefore.tools.map((t) => t.toolName).sort()).toEqual(['close_issue', 'read_file']);

    const set = await value<SettingsView>(core, 'settings:set', { defaultToolMode: 'disabled' });
    expect(set.permissions.defaultToolMode).toBe('disabled');
    const offered = await value<{ tools: Array<{ toolName: string }> }>(core, 'tools:offered', { conversationId: 'c1' });
    expect(offered.tools.map((t) => t.toolName)).toEqual(['read_file']);

    const denied = await core.gate.gate.request(request('close_issue'));
    expect(denied.state).toBe('denied');
    expect(denied.reason).toMatch(/not chosen a mode for close_issue .*your default for such tools is Disabled/);
    const asks = await core.gate.gate.submit(request('read_file'));
    expect(asks.state).toBe('awaiting_approval');
    // The gate's matrix (what the model is offered from) explains the same decision; the
    // Permissions view's matrix of configured servers is checked in permissions/matrix.test.ts.
    const { rows } = core.gate.matrix(null);
    expect(rows.find((r) => r.toolName === 'close_issue')).toMatchObject({ effective: 'deny', explanation: expect.stringMatching(/default for such tools is Disabled/) });
    expect(mcp.count()).toBe(0);
  });

  it('choosing Disabled denies a call of a tool with no rule that was already waiting for approval, and is in the activity log', async () => {
    const { core, mcp } = await start(tempDir());
    const waiting = await core.gate.gate.submit(request('close_issue'));
    expect(waiting.state).toBe('awaiting_approval');
    await value(core, 'settings:set', { defaultToolMode: 'disabled' });
    expect((await core.gate.gate.get(waiting.operationId))!.state).toBe('denied');
    // Approving it now (as main's dialog would) sends nothing.
    await expect(core.gate.gate.approve(waiting.operationId)).rejects.toThrow();
    expect(mcp.count()).toBe(0);
    const { rows } = await value<{ rows: Array<{ type: string; reason: string; actor: string | null }> }>(core, 'activity:audit', { filter: {} });
    expect(rows.find((r) => r.type === 'policy.changed')).toMatchObject({ actor: 'user', reason: 'Default for tools with no mode changed from Ask to Disabled' });
  });

  it('a renderer alone cannot lift the Disabled default: going back to Ask needs the native confirmation, and a refusal changes nothing', async () => {
    const { core, prompts, answer } = await start(tempDir());
    // Making it stricter needs no dialog.
    await value(core, 'settings:set', { defaultToolMode: 'disabled' });
    expect(prompts).toEqual([]);

    answer.next = 'deny';
    const refused = await call(core, 'settings:set', { defaultToolMode: 'ask' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toMatchObject({ title: 'Offer tools that have no rule again?', toolName: 'Every tool with no rule' });
    expect(prompts[0]!.detail).toContain('every call of one asks you first');
    expect((await value<SettingsView>(core, 'settings:get', {})).permissions.defaultToolMode).toBe('disabled');
    expect((await core.gate.gate.request(request('close_issue'))).state).toBe('denied');

    answer.next = 'approve';
    expect((await value<SettingsView>(core, 'settings:set', { defaultToolMode: 'ask' })).permissions.defaultToolMode).toBe('ask');
    expect((await core.gate.gate.submit(request('close_issue'))).state).toBe('awaiting_approval');
  });

  it('while the default is Disabled, giving one tool Ask is confirmed natively like any lifting of Disabled', async () => {
    const { core, prompts, answer } = await start(tempDir());
    await value(core, 'settings:set', { defaultToolMode: 'disabled' });
    answer.next = 'deny';
    const refused = await call(core, 'permissions:set', { scope: 'tool', serverId: 'gh', accountId: 'work', toolName: 'close_issue', mode: 'ask' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(prompts).toHaveLength(1);
    expect((await core.gate.gate.request(request('close_issue'))).state).toBe('denied');
  });

  it('Always Allow can never be the default: not through the contract, and not from a hand-edited settings file', async () => {
    const { core } = await start(tempDir());
    const r = await call(core, 'settings:set', { defaultToolMode: 'allow' });
    expect(r).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });

    const dir = tempDir();
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ schemaVersion: 1, servers: [], accounts: [], preferences: { defaultToolMode: 'allow' } }));
    const edited = await start(dir);
    const view = await value<SettingsView>(edited.core, 'settings:get', {});
    expect(view.settingsFile.problem).toMatch(/preferences\.defaultToolMode/);
    expect(view.permissions.defaultToolMode).toBe('ask');
    expect((await edited.core.gate.gate.submit(request('close_issue'))).state).toBe('awaiting_approval');
  });
});

describe('what Settings reports', () => {
  it('settings:get names the keychain, the data folder, the settings file and the versions', async () => {
    const dir = tempDir();
    const { core } = await start(dir, { dataFolder: '/home/someone/.config/Warden' });
    const view = await value<SettingsView>(core, 'settings:get', {});
    expect(view.keychain).toEqual({ available: true, detail: expect.stringContaining('system keyring') });
    expect(view.dataFolder).toBe('/home/someone/.config/Warden');
    expect(view.settingsFile).toEqual({ path: path.join(dir, 'settings.json'), problem: null });
    expect(view.about).toMatchObject({ version: '1.2.3-test', platform: 'linux', arch: process.arch });
    expect(view.about.versions.node).toBe(process.versions.node);
    expect(view.ledger).toEqual({ kind: 'memory', dir: null, records: expect.any(Number), safeMode: false });
  });

  it('an unavailable keychain is reported with the reason, not as available', async () => {
    const unavailable = new KeytarSecretStore({ service: 'warden-preferences-unavailable', load: () => Promise.reject(new Error('no D-Bus session bus')) });
    const { core } = await start(tempDir(), { servers: { settingsStore: openConfSettingsStore(tempDir()), secrets: unavailable } });
    const view = await value<SettingsView>(core, 'settings:get', {});
    expect(view.keychain.available).toBe(false);
    expect(view.keychain.detail).toMatch(/keychain is unavailable.*no D-Bus session bus/);
  });
});

describe('ledger:verify', () => {
  it('checks the real ledger in a worker thread: intact, then damaged after a record is edited, in words', async () => {
    const dir = tempDir();
    const ledger = await LedgerService.open({ dir: path.join(dir, 'ledger') });
    cleanups.push(() => ledger.close());
    const { core } = await start(tempDir(), { ledger });
    await core.recovered;
    for (let i = 0; i < 3; i++) await core.gate.gate.submit(request('close_issue', `call ${i}`));

    const workers: unknown[] = [];
    const onWorker = (message: unknown) => workers.push(message);
    subscribe('worker_threads', onWorker);
    let intact: LedgerCheck;
    try {
      intact = await value<LedgerCheck>(core, 'ledger:verify', {});
    } finally {
      unsubscribe('worker_threads', onWorker);
    }
    expect(workers).toHaveLength(1);
    expect(intact.outcome).toBe('intact');
    expect(intact.records).toBe(ledger.ledger.size());
    // A ledger opened without the keychain is plain sha256: the check says what that shows and what it does not.
    expect(intact.summary).toBe(
      `Intact: all ${intact.records} records in 1 file pass their checksums and the hash chain is unbroken. None is sealed with the ledger's key yet: their checksums show damage, not a deliberate rewrite.`,
    );

    const seg = path.join(dir, 'ledger', segmentName(1));
    const lines = readFileSync(seg, 'utf8').split('\n');
    const edited = lines.findIndex((l) => l.includes('"call 1"'));
    const seq = (JSON.parse(lines[edited]!) as { seq: number }).seq;
    lines[edited] = lines[edited]!.replace('"call 1"', '"call X"');
    writeFileSync(seg, lines.join('\n'));
    const damaged = await value<LedgerCheck>(core, 'ledger:verify', {});
    expect(damaged.outcome).toBe('damaged');
    expect(damaged.firstBroken).toMatchObject({ segment: segmentName(1), seq, problem: 'checksum' });
    expect(damaged.summary).toMatch(new RegExp(`^Damaged: Record ${seq} in ${segmentName(1).replace('.', '\\.')} \\(at byte \\d+\\) does not match its checksum \\(it was changed after it was written\\)\\. The ${seq - 1} records before it check out\\.`));
  });

  it('a core without a ledger on disk says there is nothing to check', async () => {
    const { core } = await start(tempDir());
    const check = await value<LedgerCheck>(core, 'ledger:verify', {});
    expect(check).toMatchObject({ outcome: 'not-on-disk', firstBroken: null });
    expect(check.summary).toMatch(/in memory only/);
  });
});
