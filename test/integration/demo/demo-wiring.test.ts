/**
 * The built-in demo server wired into the real core: offered once on a first run with no servers
 * (a preference in the real settings file makes removal stick across restarts), connected over
 * its in-process transport (nothing spawned), and every call to it goes through the gate. Its
 * starting rules are recorded as the demo's, in the policy file too.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { loadPolicyFile, savePolicyFile } from '../../../electron/core/settings/policy-file';
import type { ChannelName } from '../../../shared/ipc';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
let dir: string | undefined;
afterEach(async () => {
  await core?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  core = undefined;
  dir = undefined;
});

/** The real OS keychain under a service of this test's own (run inside scripts/with-keyring.sh). */
const secrets = new KeytarSecretStore({ service: `warden-demo-wiring-${randomUUID()}` });

/**
 * A core on a real settings file in `dataDir`, its rules kept in the real policy file there as the
 * app keeps them; the native dialog stand-in answers `answer`.
 */
function start(dataDir: string, answer: 'approve' | 'deny' = 'approve'): WardenCore {
  const rules = loadPolicyFile(openConfSettingsStore(dataDir, 'policy'));
  return createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    offerDemoServer: true,
    servers: { settingsStore: openConfSettingsStore(dataDir), secrets },
    gate: {
      prompter: { prompt: async () => answer },
      initialPolicy: { user: rules.user, conversation: rules.conversation },
      persistPolicy: (state) => savePolicyFile(openConfSettingsStore(dataDir, 'policy'), state),
    },
    connections: { reconnect: { maxAttempts: 0 } },
  });
}

/** One contract call through dispatch (request and response parsed by the contract). */
async function call<T = Record<string, unknown>>(c: WardenCore, channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(c.handlers, channel, request, () => {});
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('built-in demo server in the core', () => {
  it('a first run with no servers adds the demo; it connects in-process and its calls go through the gate', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-demo-wiring-'));
    core = start(dir);
    expect(await core.demoOffered).toBe('added');
    const { servers } = await call<{ servers: Array<{ definition: { id: string; transport: string }; commandLine: string | null; accounts: Array<{ id: string }> }> }>(core, 'servers:list', {});
    expect(servers).toHaveLength(1);
    expect(servers[0]!.definition.transport).toBe('builtin');
    expect(servers[0]!.commandLine).toBeNull();
    const serverId = servers[0]!.definition.id;
    const accountId = servers[0]!.accounts[0]!.id;

    const view = await call<{ status: { state: string; transport?: string }; toolCount: number }>(core, 'connections:connect', { serverId, accountId });
    expect(view.status).toMatchObject({ state: 'connected', transport: 'in-process' });
    expect(view.toolCount).toBe(6);

    // The lab's rules are in place from the first start: deleting notes is Disabled (denied, never
    // sent), saving a note asks, reading notes and the inbox run at once.
    const matrix = await call<{ rows: Array<{ toolName: string; effective: string; mode: string | null }> }>(core, 'permissions:matrix', {});
    const effective = Object.fromEntries(matrix.rows.map((r) => [r.toolName, r.effective]));
    expect(effective).toMatchObject({ notes_list: 'allow', read_inbox: 'allow', notes_add: 'ask', notes_delete: 'deny', files_read: 'ask' });
    const deleted = await call<{ state: string }>(core, 'tools:run', { serverId, accountId, toolName: 'notes_delete', arguments: { id: 1 } });
    expect(deleted.state).toBe('denied');
    const asked = await call<{ operationId: string; state: string }>(core, 'tools:run', { serverId, accountId, toolName: 'notes_add', arguments: { text: 'x' } });
    expect(asked.state).toBe('awaiting_approval');
    await call(core, 'approvals:reject', { operationId: asked.operationId });

    const listed = await call<{ operationId: string }>(core, 'tools:run', { serverId, accountId, toolName: 'notes_list', arguments: {} });
    await until(async () => (await call<{ state: string }>(core!, 'operations:get', { operationId: listed.operationId })).state === 'succeeded', 'notes_list to succeed');
    const done = await call<{ result: { content: Array<{ text: string }> } }>(core, 'operations:get', { operationId: listed.operationId });
    // Note #1 is still there and nothing was added: the denied delete and the rejected add never reached the server.
    expect(done.result.content[0]!.text).toBe('#1 Welcome to Warden. Every tool call goes through the gate first.');

    // A pathUnder rule: /demo/public is allowed, the same tool under /demo/private still asks.
    await call(core, 'permissions:set', {
      scope: 'tool-constraint',
      serverId,
      accountId,
      toolName: 'files_read',
      constraints: [{ op: 'pathUnder', field: 'path', value: '/demo/public' }],
      mode: 'allow',
    });
    const pub = await call<{ operationId: string }>(core, 'tools:run', { serverId, accountId, toolName: 'files_read', arguments: { path: '/demo/public/readme.md' } });
    await until(async () => (await call<{ state: string }>(core!, 'operations:get', { operationId: pub.operationId })).state === 'succeeded', 'the public read to succeed');
    const priv = await call<{ state: string }>(core, 'tools:run', { serverId, accountId, toolName: 'files_read', arguments: { path: '/demo/public/../private/diary.md' } });
    expect(priv.state).toBe('awaiting_approval');
  });

  it('the demo’s starting rules say they are the demo’s, never "you set", across a restart; a rule the person then sets is theirs', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-demo-wiring-'));
    core = start(dir);
    expect(await core.demoOffered).toBe('added');
    type Row = { toolName: string; setBy?: string | null; explanation: string; mode: string | null };
    const rows = async () => Object.fromEntries((await call<{ rows: Row[] }>(core!, 'permissions:matrix', {})).rows.map((r) => [r.toolName, r]));
    await until(async () => (await rows()).notes_delete?.mode === 'disabled', 'the demo’s rules');
    let r = await rows();
    expect(r.notes_delete).toMatchObject({ setBy: 'demo', explanation: 'Disabled: the demo’s starting rules set Disabled for notes_delete on Warden demo (built-in) (Default)' });
    expect(r.notes_list!.explanation).toMatch(/^Allowed: the demo’s starting rules set Always Allow for notes_list/);
    expect(r.files_read).toMatchObject({ setBy: null, mode: null });
    for (const row of Object.values(r)) expect(row.explanation).not.toContain('you set');
    const { serverId, accountId } = (await call<{ rows: Array<{ serverId: string; accountId: string }> }>(core, 'permissions:matrix', {})).rows[0]!;
    await call(core, 'permissions:set', { scope: 'tool', serverId, accountId, toolName: 'notes_delete', mode: 'ask' });
    r = await rows();
    expect(r.notes_delete).toMatchObject({ setBy: 'person', explanation: 'Asks: you set Ask for notes_delete on Warden demo (built-in) (Default)' });
    // Kept in the settings file: a restart still tells the demo's rules from the person's.
    await core.close();
    core = start(dir);
    expect(await core.demoOffered).toBe('already-offered');
    await call(core, 'connections:connect', { serverId, accountId });
    r = await rows();
    expect(r.notes_list).toMatchObject({ setBy: 'demo' });
    expect(r.notes_delete).toMatchObject({ setBy: 'person', mode: 'ask' });
  });

  it('removing the demo sticks across restarts; a first run that already has servers never adds it', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-demo-wiring-'));
    core = start(dir);
    expect(await core.demoOffered).toBe('added');
    const first = await call<{ servers: Array<{ definition: { id: string } }> }>(core, 'servers:list', {});
    await call(core, 'servers:remove', { serverId: first.servers[0]!.definition.id });
    await core.close();
    core = start(dir);
    expect(await core.demoOffered).toBe('already-offered');
    expect((await call<{ servers: unknown[] }>(core, 'servers:list', {})).servers).toEqual([]);
    await core.close();

    const other = mkdtempSync(path.join(tmpdir(), 'warden-demo-wiring-'));
    try {
      const seed = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: { settingsStore: openConfSettingsStore(other), secrets } });
      await call(seed, 'servers:add', { definition: { name: `Mine ${randomUUID().slice(0, 4)}`, transport: 'stdio', command: 'true' } });
      await seed.close();
      core = start(other);
      expect(await core.demoOffered).toBe('has-servers');
      const { servers } = await call<{ servers: Array<{ definition: { transport: string } }> }>(core, 'servers:list', {});
      expect(servers.map((s) => s.definition.transport)).toEqual(['stdio']);
    } finally {
      await core?.close();
      core = undefined;
      rmSync(other, { recursive: true, force: true });
    }
  });
});
