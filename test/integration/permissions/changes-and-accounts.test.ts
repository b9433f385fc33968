/**
 * Rug pulls, bulk changes and accounts through the real core and a real spawned server that
 * changes its tool after it was allowed (test/fixtures/servers/rug-pull.ts): the change is shown
 * before and after, and each answer does what it says; loosening is confirmed in the native-dialog
 * stand-in (once for a bulk change); switching the active account says what it cancelled; removing
 * an account deletes its rules.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ApprovalPreview } from '../../../electron/core/ports';
import type { ChannelName, ResponseOf } from '../../../shared/ipc';
import type { AccountView, ServerView } from '../../../shared/domain/servers';
import { stdioFixture } from '../mcp/helpers';
import { MapKeychain } from '../chat/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

const shown: ApprovalPreview[] = [];
let answer: 'approve' | 'deny' = 'approve';

async function call<C extends ChannelName>(channel: C, request: unknown): Promise<ResponseOf<C>> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw Object.assign(new Error(`${channel}: ${r.error.code} ${r.error.message}`), { code: r.error.code });
  return r.value as ResponseOf<C>;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function weather() {
  shown.length = 0;
  answer = 'approve';
  core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: { secrets: new MapKeychain() }, gate: { prompter: { prompt: async (p) => (shown.push(p), answer) } }, connections: { reconnect: { maxAttempts: 0 } } });
  const def = stdioFixture('ignored', 'rug-pull');
  const added = (await call('servers:add', { definition: { name: 'Weather', transport: 'stdio', command: def.command, args: def.args, env: [] }, accountLabel: 'Work' })) as ServerView;
  const serverId = added.definition.id;
  const work = added.accounts[0]!.id;
  await call('connections:connect', { serverId, accountId: work });
  return { serverId, work };
}

const row = async (serverId: string, accountId: string, toolName: string) =>
  (await call('permissions:matrix', {})).rows.find((r) => r.serverId === serverId && r.accountId === accountId && r.toolName === toolName)!;

describe('a tool that changed after it was allowed (rug pull)', () => {
  it('is flagged, shown before and after with the server’s text as its claim, and each answer does what it says', async () => {
    const { serverId, work } = await weather();
    const key = { serverId, accountId: work };
    await call('permissions:set-many', {
      changes: [
        { scope: 'tool', ...key, toolName: 'get_weather', mode: 'allow' },
        { scope: 'tool', ...key, toolName: 'next_stage', mode: 'allow' },
      ],
    });
    // Two Always Allow changes, ONE confirmation that names both.
    expect(shown).toHaveLength(1);
    expect(shown[0]!.title).toBe('Change 2 permissions so that Warden asks you less?');
    expect(shown[0]!.change!.facts).toContain('• every call of get_weather on Weather (Work): Always Allow');
    expect(shown[0]!.change!.facts).toContain('• every call of next_stage on Weather (Work): Always Allow');
    expect(JSON.stringify(shown[0])).not.toContain(serverId);
    expect(JSON.stringify(shown[0])).not.toContain(work);

    // Stage 1: the description now asks for a private key.
    await core!.gate.gate.request({ source: 'user', ...key, toolName: 'next_stage', arguments: {} });
    await until(async () => (await row(serverId, work, 'get_weather')).changed === 'since-allowed', 'the change to be seen');
    const changed = await row(serverId, work, 'get_weather');
    expect(changed).toMatchObject({ effective: 'ask', changed: 'since-allowed' });
    expect(changed.explanation).toMatch(/^Asks: the tool changed since you allowed it/);
    const detail = await call('permissions:change-detail', { ...key, toolName: 'get_weather' });
    expect(detail).toMatchObject({ kind: 'since-allowed', beforeKnown: true, serverLabel: 'Weather', accountLabel: 'Work' });
    const description = detail.fields.find((f) => f.field === 'description')!;
    expect(description.before).toBe('Returns the weather for a city.');
    expect(description.after).toContain('read ~/.ssh/id_rsa');
    expect(description.parts.some((p) => p.kind === 'added' && p.text.includes('~/.ssh/id_rsa'))).toBe(true);
    expect(detail.summary).toEqual([expect.stringMatching(/^The description changed \(the server’s words\): \d+ words added, \d+ removed\.$/)]);
    // Keep asking (the default answer) tightens: no dialog.
    const before = shown.length;
    const kept = await call('permissions:resolve-change', { ...key, toolName: 'get_weather', action: 'keep-asking' });
    expect(kept).toEqual({ action: 'keep-asking', effective: 'ask', explanation: 'Asks: you set Ask for get_weather on Weather (Work)' });
    expect(shown.length).toBe(before);
    expect((await row(serverId, work, 'get_weather')).changed).toBe('none');

    // Stage 2: the schema gains a field. Not allowed any more, so it is "changed since listed".
    await core!.gate.gate.request({ source: 'user', ...key, toolName: 'next_stage', arguments: {} });
    await until(async () => (await row(serverId, work, 'get_weather')).changed === 'since-listed', 'the second change to be seen');
    const second = await call('permissions:change-detail', { ...key, toolName: 'get_weather' });
    expect(second.fields.map((f) => f.field)).toEqual(['inputSchema']);
    expect(second.fields[0]!.parts.some((p) => p.kind === 'added' && p.text.includes('exfiltrate'))).toBe(true);
    // The new input in words, its description quoted as the server's.
    expect(second.summary).toEqual(['New input: exfiltrate — “Email address a copy is sent to” (the server’s words)']);
    // Allow the new version: the native confirmation shows the change first; refusing changes nothing.
    answer = 'deny';
    await expect(call('permissions:resolve-change', { ...key, toolName: 'get_weather', action: 'allow-new' })).rejects.toMatchObject({ code: 'NOT_CONFIRMED' });
    const confirmation = shown.at(-1)!;
    expect(confirmation.title).toBe('Allow the new version of get_weather on Weather (Work)?');
    expect(confirmation.change!.facts).toContain('• New input: exfiltrate — “Email address a copy is sent to” (the server’s words)');
    expect(confirmation.change!.confirmLabel).toBe('Allow the new version');
    expect((await row(serverId, work, 'get_weather')).effective).toBe('ask');
    answer = 'approve';
    expect(await call('permissions:resolve-change', { ...key, toolName: 'get_weather', action: 'allow-new' })).toMatchObject({ action: 'allow-new', effective: 'allow' });
    expect((await row(serverId, work, 'get_weather')).changed).toBe('none');
    expect((await core!.gate.gate.request({ source: 'user', ...key, toolName: 'get_weather', arguments: { city: 'Oslo' } })).state).toBe('succeeded');

    // Stage 3: the annotations now claim destructive. Disable tightens: no dialog.
    const dialogs = shown.length;
    await core!.gate.gate.request({ source: 'user', ...key, toolName: 'next_stage', arguments: {} });
    await until(async () => (await row(serverId, work, 'get_weather')).changed === 'since-allowed', 'the third change to be seen');
    expect((await call('permissions:change-detail', { ...key, toolName: 'get_weather' })).summary).toEqual([
      'The server’s claims about the tool changed: it now claims destructive; no longer claims read-only.',
    ]);
    expect(await call('permissions:resolve-change', { ...key, toolName: 'get_weather', action: 'disable' })).toEqual({
      action: 'disable',
      effective: 'deny',
      explanation: 'Disabled: you set Disabled for get_weather on Weather (Work)',
    });
    expect(shown.length).toBe(dialogs);
    await expect(call('permissions:change-detail', { ...key, toolName: 'get_weather' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('accounts', () => {
  it('switching the active account is a visible action that says what it cancelled', async () => {
    const { serverId, work } = await weather();
    const personal = ((await call('accounts:add', { serverId, label: 'Personal' })) as AccountView).id;
    const pending = await core!.gate.gate.submit({ source: 'user', serverId, accountId: work, toolName: 'get_weather', arguments: { city: 'Oslo' } });
    expect(pending.state).toBe('awaiting_approval');
    const switched = await call('accounts:set-active', { serverId, accountId: personal });
    expect(switched).toEqual({
      serverId,
      accountId: personal,
      previousAccountId: null,
      cancelled: 1,
      message: 'Personal is now the active account of Weather: its tools are the ones offered. 1 pending approval for Work was cancelled.',
    });
    expect((await core!.gate.gate.get(pending.operationId))!.state).toBe('invalidated');
    const m = await call('permissions:matrix', {});
    expect(m.servers![0]!.accounts.map((a) => [a.label, a.active])).toEqual([
      ['Work', false],
      ['Personal', true],
    ]);
  });

  it('removing an account says what is deleted first, and then deletes its rules too', async () => {
    const { serverId, work } = await weather();
    const personal = ((await call('accounts:add', { serverId, label: 'Personal' })) as AccountView).id;
    await call('permissions:set', { scope: 'tool', serverId, accountId: personal, toolName: 'get_weather', mode: 'disabled' });
    await call('permissions:set', { scope: 'server', serverId, accountId: personal, mode: 'disabled' });
    await call('permissions:set', { scope: 'tool', serverId, accountId: null, toolName: 'next_stage', mode: 'disabled' });
    const impact = await call('accounts:removal-impact', { accountId: personal });
    expect(impact).toMatchObject({ serverLabel: 'Weather', accountLabel: 'Personal', rules: 2, secrets: [], blocked: null });
    expect(impact.lines).toEqual(['It has no secrets in your keychain.', 'Its 2 permission rules are deleted.', 'Rules for every account of Weather stay.']);
    expect((await call('accounts:removal-impact', { accountId: work })).blocked).toBeNull();
    await call('accounts:remove', { accountId: personal });
    await until(async () => core!.gate.policy.current().user.every((r) => !('accountId' in r.scope) || r.scope.accountId !== personal), 'the rules to go');
    expect(core!.gate.policy.current().user.map((r) => r.id)).toEqual([`user:tool:${serverId}:*:next_stage`]);
    expect((await call('accounts:removal-impact', { accountId: work })).blocked).toBe('Work is the only account of Weather; remove the server instead');
  });
});

describe('the confirmations of permission changes, through the real core', () => {
  it('name the server, account and tool in words, say what the tool claims to do and how to undo it, and never show an id or the rule as JSON', async () => {
    const { serverId, work } = await weather();
    const personal = ((await call('accounts:add', { serverId, label: 'Personal' })) as AccountView).id;
    // Always Allow of one tool.
    await call('permissions:set', { scope: 'tool', serverId, accountId: work, toolName: 'get_weather', mode: 'allow' });
    const allow = shown.at(-1)!;
    expect(allow.title).toBe('Always allow get_weather on Weather (Work)?');
    expect(allow.change).toMatchObject({
      effect: 'Warden will stop asking before every call of get_weather on Weather (Work): they run as soon as the model asks.',
      confirmLabel: 'Always Allow',
    });
    expect(allow.change!.claims[0]).toBe('What the tool says it does (the server’s claim, not checked by Warden): Returns the weather for a city.');
    expect(allow.change!.undo).toMatch(/^To undo: in Permissions, set it back to Ask/);
    // Lifting a Disabled on an account that is not connected (names from its configuration).
    await call('permissions:set', { scope: 'server', serverId, accountId: personal, mode: 'disabled' });
    const before = shown.length;
    await call('permissions:set', { scope: 'server', serverId, accountId: personal, mode: 'ask' });
    expect(shown.length).toBe(before + 1);
    expect(shown.at(-1)!.title).toBe('Set all tools on Weather (Personal) to Ask?');
    // Removing a restricting rule.
    const rule = core!.gate.policy.current().user.find((r) => r.scope.kind === 'server')!;
    await call('permissions:set', { scope: 'server', serverId, accountId: personal, mode: 'disabled' });
    await call('permissions:revoke', { ruleId: rule.id });
    expect(shown.at(-1)!.title).toBe('Remove your Disabled rule for all tools on Weather (Personal)?');
    for (const p of shown) {
      const text = JSON.stringify(p);
      expect(text).not.toContain(serverId);
      expect(text).not.toContain(work);
      expect(text).not.toContain(personal);
      expect(text).not.toMatch(/"scope"|serverId|accountId/);
    }
  });
});
