/**
 * A compromised renderer (calling the contract through the core's dispatch, as main does) tries
 * to make a local server run code the save dialog did not show: a code-loading variable such as
 * NODE_OPTIONS marked "secret" (so the dialog says "(secret, from the keychain)" while its value
 * runs code on connect), and later a quiet `secrets:set` / `accounts:add` that swaps an env
 * secret's value with no dialog at all. Against the real keychain (scripts/with-keyring.sh).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import type { ServerChangeSummary } from '../../../electron/core/settings/server-confirmation';
import { memorySettingsStore } from '../../../electron/core/settings/memory-settings-store';
import { secretKey } from '../../../shared/domain/servers';
import { stdioFixture } from '../mcp/helpers';

const store = new KeytarSecretStore({ service: `Warden-code-env-test-${process.pid}-${randomBytes(3).toString('hex')}` });
let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
  for (const k of await store.keys('')) await store.delete(k);
});

/** A core whose native confirmation records what it showed and answers `answer.value`. */
function start(answer = { value: true }) {
  const shown: ServerChangeSummary[] = [];
  core = createCore({ version: 'test', servers: { secrets: store }, confirmServerChange: async (s) => (shown.push(s), answer.value) });
  return shown;
}

const run = (channel: string, request: unknown) => dispatch(core!.handlers, channel, request, () => {});

const PAYLOAD = '--import=data:text/javascript,require("child_process").execSync("touch /tmp/pwned")';

describe('variables that change which code a program loads are never secret', () => {
  it.each(['NODE_OPTIONS', 'node_options', 'LD_PRELOAD', 'DYLD_INSERT_LIBRARIES', 'PYTHONSTARTUP', 'PYTHONPATH', 'PERL5OPT', 'RUBYOPT', 'BASH_ENV', 'ELECTRON_RUN_AS_NODE', 'Path', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'CLASSPATH', 'LD_LIBRARY_PATH', 'DOTNET_STARTUP_HOOKS'])(
    'servers:add refuses %s marked secret, and nothing is saved or stored',
    async (name) => {
      const shown = start();
      const r = await run('servers:add', {
        definition: { name: 'Helper', transport: 'stdio', command: 'node', args: ['server.js'], env: [{ name, secret: true }] },
        secrets: [{ name: `env:${name}`, value: PAYLOAD }],
      });
      expect(r.ok).toBe(false);
      expect(!r.ok && r.error.message).toMatch(new RegExp(`definition\\.env\\.0\\.secret: ${name} changes which code the program loads`));
      expect(core!.servers.definitions()).toEqual([]);
      expect(await store.keys('')).toEqual([]);
      expect(shown).toEqual([]);
    },
  );

  it('servers:edit cannot turn a shown code-loading variable into a hidden one', async () => {
    const shown = start();
    const added = await run('servers:add', { definition: { name: 'Helper', transport: 'stdio', command: 'node', args: ['server.js'], env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=512' }] } });
    expect(added.ok).toBe(true);
    const serverId = core!.servers.definitions()[0]!.id;
    const edit = await run('servers:edit', {
      serverId,
      definition: { name: 'Helper', transport: 'stdio', command: 'node', args: ['server.js'], env: [{ name: 'NODE_OPTIONS', secret: true }] },
      secrets: [{ name: 'env:NODE_OPTIONS', value: PAYLOAD }],
    });
    expect(edit.ok).toBe(false);
    expect(core!.servers.definitions()[0]!).toMatchObject({ env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=512' }] });
    expect(await store.keys('')).toEqual([]);
    expect(shown).toHaveLength(1);
  });

  it('the save dialog shows a code-loading variable in full and says what it does', async () => {
    const shown = start({ value: false });
    await run('servers:add', { definition: { name: 'Helper', transport: 'stdio', command: 'node', args: ['server.js'], env: [{ name: 'NODE_OPTIONS', value: PAYLOAD }] } });
    expect(shown[0]!.detail).toContain(`NODE_OPTIONS = ${PAYLOAD}`);
    expect(shown[0]!.detail).toMatch(/NODE_OPTIONS = .* \(changes which code the program loads\)/);
  });
});

describe('only a variable whose name says it holds a credential may be secret', () => {
  const settings = ['GIT_DIR', 'AWS_CONFIG_FILE', 'KUBECONFIG', 'DOCKER_HOST', 'UV_CONFIG_FILE', 'PIP_CONFIG_FILE', 'HTTPS_PROXY', 'NPM_CONFIG__AUTH', 'npm_config_userconfig', 'NODE_EXTRA_CA_CERTS',
    'GOOGLE_APPLICATION_CREDENTIALS', 'AWS_SHARED_CREDENTIALS_FILE', 'GIT_CONFIG_KEY_0', 'SSH_AUTH_SOCK', 'AUTH_URL', 'KEYBOARD_LAYOUT', 'PWD', 'DATABASE_URL',
    // cargo runs the program a credential provider or alias names, whatever the name around it says.
    'CARGO_REGISTRIES_CRATES_IO_CREDENTIAL_PROVIDER', 'CARGO_CREDENTIAL_ALIAS_X', 'CARGO_REGISTRIES_X_TOKEN_PROCESS', 'PIP_KEYRING_PROVIDER'];
  it.each(settings)('servers:add from a compromised renderer marking %s secret is refused with an error naming it; nothing is saved or stored', async (name) => {
    const shown = start();
    const r = await run('servers:add', {
      definition: { name: 'Helper', transport: 'stdio', command: 'git', args: ['status'], env: [{ name, secret: true }] },
      secrets: [{ name: `env:${name}`, value: '/tmp/attacker-controlled' }],
    });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.message).toMatch(new RegExp(`definition\\.env\\.0\\.secret: ${name} (can't be secret|changes which code)`));
    expect(core!.servers.definitions()).toEqual([]);
    expect(await store.keys('')).toEqual([]);
    expect(shown).toEqual([]);
  });

  it.each(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GITHUB_TOKEN', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'SLACK_BOT_TOKEN', 'DB_PASSWORD', 'MYSQL_PWD', 'PGPASSWORD', 'REDISCLI_AUTH', 'GITHUB_PAT', 'apiKey', 'CARGO_REGISTRY_TOKEN', 'UV_INDEX_PRIVATE_PASSWORD'])(
    '%s may be secret, and its value goes to the keychain, not the dialog',
    async (name) => {
      const shown = start();
      const value = `value-${randomBytes(8).toString('hex')}`;
      const r = await run('servers:add', { definition: { name: 'Helper', transport: 'stdio', command: 'node', args: ['server.js'], env: [{ name, secret: true }] }, secrets: [{ name: `env:${name}`, value }] });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      expect(shown[0]!.detail).toContain(`${name} = (secret, from the keychain`);
      expect(JSON.stringify(shown)).not.toContain(value);
    },
  );

  it('servers:edit cannot hide a setting it showed before', async () => {
    const shown = start();
    expect((await run('servers:add', { definition: { name: 'Helper', transport: 'stdio', command: 'kubectl', args: ['get', 'pods'], env: [{ name: 'KUBECONFIG', value: '/home/me/.kube/config' }] } })).ok).toBe(true);
    const serverId = core!.servers.definitions()[0]!.id;
    const edit = await run('servers:edit', { serverId, definition: { name: 'Helper', transport: 'stdio', command: 'kubectl', args: ['get', 'pods'], env: [{ name: 'KUBECONFIG', secret: true }] }, secrets: [{ name: 'env:KUBECONFIG', value: '/tmp/evil' }] });
    expect(edit).toMatchObject({ ok: false, error: { message: expect.stringContaining("KUBECONFIG can't be secret") } });
    expect(core!.servers.definitions()[0]!).toMatchObject({ env: [{ name: 'KUBECONFIG', value: '/home/me/.kube/config' }] });
    expect(shown).toHaveLength(1);
  });

  it('the save dialog shows every variable that is not a credential in full, and hides only the credential', async () => {
    const shown = start({ value: false });
    const env = [
      { name: 'GIT_DIR', value: '/tmp/payload/.git' },
      { name: 'AWS_CONFIG_FILE', value: '/tmp/payload/aws-config' },
      { name: 'KUBECONFIG', value: '/tmp/payload/kubeconfig' },
      { name: 'HTTPS_PROXY', value: 'http://proxy.example:3128' },
      { name: 'GITHUB_TOKEN', secret: true },
    ];
    await run('servers:add', { definition: { name: 'Helper', transport: 'stdio', command: 'git', args: ['status'], env }, secrets: [{ name: 'env:GITHUB_TOKEN', value: 'ghp_hidden' }] });
    for (const e of env.filter((v) => v.value)) expect(shown[0]!.detail).toContain(`${e.name} = ${e.value}`);
    expect(shown[0]!.detail).toContain('GITHUB_TOKEN = (secret, from the keychain');
  });

  it('a settings file that already keeps a setting secret (an older version, or edited by hand) loads, but the hidden value never reaches the program: connecting says what to fix', async () => {
    const def = stdioFixture('helper', 'tracker', [{ name: 'GIT_DIR', secret: true }]);
    const settingsStore = memorySettingsStore({ schemaVersion: 1, servers: [def], accounts: [{ id: 'helper-default', serverId: 'helper', label: 'Default' }], preferences: {} });
    await store.set(secretKey('helper', 'helper-default', 'env:GIT_DIR'), '/tmp/payload/.git');
    core = createCore({ version: 'test', servers: { secrets: store, settingsStore }, confirmServerChange: async () => true, connections: { reconnect: { maxAttempts: 0 } } });
    expect(core.servers.definitions().map((d) => d.id)).toEqual(['helper']);
    const r = await run('connections:connect', { serverId: 'helper', accountId: 'helper-default' });
    expect(r.ok && r.value).toMatchObject({ status: { state: 'error', reason: expect.stringContaining("GIT_DIR can't be secret") } });
  });
});

describe('changing an env secret of a local server needs the native confirmation', () => {
  async function addServer(shown: ServerChangeSummary[]) {
    const r = await run('servers:add', {
      definition: { name: 'Files', transport: 'stdio', command: 'node', args: ['files.js'], env: [{ name: 'FILES_TOKEN', secret: true }] },
      accountLabel: 'Work',
      secrets: [{ name: 'env:FILES_TOKEN', value: 'first-value-0123456789' }],
    });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    shown.length = 0;
    const def = core!.servers.definitions()[0]!;
    return { serverId: def.id, accountId: core!.servers.accountsOf(def.id)[0]!.id };
  }

  it('secrets:set refused in the dialog changes nothing; the dialog names the variable and never shows the value', async () => {
    const answer = { value: true };
    const shown = start(answer);
    const { serverId, accountId } = await addServer(shown);
    answer.value = false;
    const swapped = `swapped-${randomBytes(12).toString('hex')}`;
    const r = await run('secrets:set', { serverId, accountId, name: 'env:FILES_TOKEN', value: swapped });
    expect(r).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(await store.get(secretKey(serverId, accountId, 'env:FILES_TOKEN'))).toBe('first-value-0123456789');
    expect(shown).toHaveLength(1);
    expect(shown[0]!.action).toBe('secret');
    expect(shown[0]!.title).toContain('FILES_TOKEN');
    expect(shown[0]!.detail).toContain('node files.js');
    expect(shown[0]!.detail).toMatch(/new value/);
    expect(JSON.stringify(shown)).not.toContain(swapped);
    answer.value = true;
    expect((await run('secrets:set', { serverId, accountId, name: 'env:FILES_TOKEN', value: swapped })).ok).toBe(true);
    expect(await store.get(secretKey(serverId, accountId, 'env:FILES_TOKEN'))).toBe(swapped);
  });

  it('accounts:add that brings env secrets is confirmed natively; refused, no account and no secret is added', async () => {
    const answer = { value: true };
    const shown = start(answer);
    const { serverId } = await addServer(shown);
    answer.value = false;
    const value = `personal-${randomBytes(12).toString('hex')}`;
    const r = await run('accounts:add', { serverId, label: 'Personal', secrets: [{ name: 'env:FILES_TOKEN', value }] });
    expect(r).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(core!.servers.accountsOf(serverId)).toHaveLength(1);
    expect((await store.keys('')).length).toBe(1);
    expect(shown[0]!.action).toBe('account');
    expect(shown[0]!.detail).toContain('FILES_TOKEN');
    expect(JSON.stringify(shown)).not.toContain(value);
    // An account that brings no values changes nothing that runs: no dialog.
    expect((await run('accounts:add', { serverId, label: 'Empty' })).ok).toBe(true);
    expect(shown).toHaveLength(1);
  });

  it('servers:edit that sets a new env secret value says so in its dialog, without the value', async () => {
    const answer = { value: true };
    const shown = start(answer);
    const { serverId } = await addServer(shown);
    answer.value = false;
    const value = `edited-${randomBytes(12).toString('hex')}`;
    const r = await run('servers:edit', {
      serverId,
      definition: { name: 'Files', transport: 'stdio', command: 'node', args: ['files.js'], env: [{ name: 'FILES_TOKEN', secret: true }] },
      secrets: [{ name: 'env:FILES_TOKEN', value }],
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(shown[0]!.detail).toMatch(/FILES_TOKEN = \(secret, from the keychain; a new value is set by this change, not shown\)/);
    expect(JSON.stringify(shown)).not.toContain(value);
  });
});
