/**
 * Secrets against the REAL OS keychain (gnome-keyring in a private D-Bus session): run with
 * `scripts/with-keyring.sh npx vitest run test/integration/secrets`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import { ServerService } from '../../../electron/core/settings/server-service';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { secretKey } from '../../../shared/domain/servers';
import { filesContaining } from './scan';

const SERVICE = `Warden-test-${process.pid}-${randomBytes(3).toString('hex')}`;

function secret(label: string): string {
  return `${label}-${randomBytes(18).toString('base64url')}`;
}

let dir: string;
let store: KeytarSecretStore;
const announced: string[] = [];

beforeAll(() => {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
    throw new Error('No D-Bus session: run these tests with scripts/with-keyring.sh (they use the real OS keychain)');
  }
  dir = mkdtempSync(join(tmpdir(), 'warden-keychain-'));
  store = new KeytarSecretStore({ service: SERVICE, onSecretValue: (v) => announced.push(v) });
});

afterAll(async () => {
  for (const k of await store.keys('')) await store.delete(k);
  rmSync(dir, { recursive: true, force: true });
});

describe('keytar secret store (real keychain)', () => {
  it('stores, reads and deletes a secret in the OS keychain', async () => {
    const value = secret('sk-store');
    await store.set('srv-a/acct-a/env%3ATOKEN', value);
    expect(await store.get('srv-a/acct-a/env%3ATOKEN')).toBe(value);
    // A second store instance (another process would be the same) sees it: it is in the keychain.
    expect(await new KeytarSecretStore({ service: SERVICE }).get('srv-a/acct-a/env%3ATOKEN')).toBe(value);
    expect(await store.keys('srv-a/')).toEqual(['srv-a/acct-a/env%3ATOKEN']);
    expect(await store.delete('srv-a/acct-a/env%3ATOKEN')).toBe(true);
    expect(await store.get('srv-a/acct-a/env%3ATOKEN')).toBeNull();
    expect(await store.delete('srv-a/acct-a/env%3ATOKEN')).toBe(false);
  });

  it('every secret value written or read is announced to the redactor hook', async () => {
    const written = secret('ghp-written');
    await store.set('srv-b/acct-b/bearer', written);
    expect(announced).toContain(written);
    // A value stored by an earlier run is learnt at start-up through announceAll.
    const earlier = secret('earlier-run');
    await new KeytarSecretStore({ service: SERVICE }).set('srv-b/acct-b/header%3Ax-api-key', earlier);
    const fresh: string[] = [];
    await new KeytarSecretStore({ service: SERVICE, onSecretValue: (v) => fresh.push(v) }).announceAll();
    expect(fresh).toEqual(expect.arrayContaining([written, earlier]));
    // Each distinct value is announced once, however often it is read (the redactor ref-counts).
    await store.get('srv-b/acct-b/bearer');
    await store.get('srv-b/acct-b/bearer');
    expect(announced.filter((v) => v === written)).toHaveLength(1);
  });
});

describe('server service secrets (real keychain + real settings file)', () => {
  it('after a workload of adds, edits, accounts and removals, no secret value is in any settings file', async () => {
    const settingsDir = join(dir, 'workload');
    mkdirSync(settingsDir);
    const settings = SettingsRepository.open(openConfSettingsStore(settingsDir));
    const journal = new MemoryJournal({ now: () => 1 });
    const svc = new ServerService({ settings, secrets: store, journal });
    const values: string[] = [];
    const v = (label: string) => {
      const s = secret(label);
      values.push(s);
      return s;
    };

    const gh = await svc.addServer({
      definition: { name: 'GitHub', transport: 'stdio', command: 'npx', args: ['-y', 'gh-mcp'], env: [{ name: 'GITHUB_TOKEN', secret: true }, { name: 'MODE', value: 'read' }] },
      accountLabel: 'Work',
      secrets: [{ name: 'env:GITHUB_TOKEN', value: v('ghp_work') }],
    });
    expect(gh.commandLine).toBe('npx -y gh-mcp');
    expect(gh.accounts[0]!.secrets).toEqual([{ name: 'env:GITHUB_TOKEN', hasSecret: true }]);
    const personal = await svc.addAccount({ serverId: gh.definition.id, label: 'Personal' });
    expect(personal.secrets).toEqual([{ name: 'env:GITHUB_TOKEN', hasSecret: false }]);
    await svc.setSecret({ serverId: gh.definition.id, accountId: personal.id, name: 'env:GITHUB_TOKEN', value: v('ghp_personal') });

    const remote = await svc.addServer({
      definition: { name: 'Remote', transport: 'http', url: 'https://mcp.example.com/mcp', headers: [{ name: 'X-Api-Key', secret: true }], auth: { kind: 'bearer' } },
      secrets: [
        { name: 'header:x-api-key', value: v('key') },
        { name: 'bearer', value: v('bearer') },
      ],
    });
    const remoteAccount = remote.accounts[0]!.id;
    // Edit: the header is no longer secret → its keychain entry is deleted.
    await svc.editServer({
      serverId: remote.definition.id,
      definition: { name: 'Remote', transport: 'http', url: 'https://mcp.example.com/v2', headers: [], auth: { kind: 'bearer' } },
    });
    expect(await store.get(secretKey(remote.definition.id, remoteAccount, 'header:x-api-key'))).toBeNull();
    expect(await store.get(secretKey(remote.definition.id, remoteAccount, 'bearer'))).not.toBeNull();
    expect(journal.read().map((r) => r.type)).toContain('server.endpoint-changed');
    // OAuth material written by the OAuth layer under the same prefix, keyed by issuer.
    await store.set(secretKey(remote.definition.id, remoteAccount, 'oauth:tokens', 'https://issuer.example'), v('oauth'));

    const listed = await svc.listServers();
    expect(listed.keychainProblem).toBeNull();
    expect(JSON.stringify(listed)).not.toMatch(new RegExp(values.join('|')));

    // Remove: every keychain entry of the server goes, including issuer-keyed OAuth tokens.
    const removed = await svc.removeServer(remote.definition.id);
    expect(removed.deletedSecrets).toBe(2);
    expect(await store.keys(`${remote.definition.id}/`)).toEqual([]);
    const removedAccount = await svc.removeAccount(personal.id);
    expect(removedAccount.deletedSecrets).toBe(1);

    for (const value of values) expect(filesContaining(settingsDir, value)).toEqual([]);
    // The workload really wrote settings (the scan is not of an empty folder).
    expect(readFileSync(join(settingsDir, 'settings.json'), 'utf8')).toContain('GITHUB_TOKEN');
  });

  it('a secret the definition does not declare is refused naming the field, and nothing is stored', async () => {
    const settingsDir = join(dir, 'undeclared');
    mkdirSync(settingsDir);
    const settings = SettingsRepository.open(openConfSettingsStore(settingsDir));
    const svc = new ServerService({ settings, secrets: store });
    const value = secret('undeclared');
    await expect(
      svc.addServer({
        definition: { name: 'X', transport: 'stdio', command: 'x', args: [], env: [{ name: 'TOKEN', value: 'plain' }] },
        secrets: [{ name: 'env:TOKEN', value }],
      }),
    ).rejects.toThrow(/secrets\.0\.name: "env:TOKEN" is not a secret server "X" declares/);
    expect(settings.get().servers).toEqual([]);
    expect(await store.keys('')).not.toEqual(expect.arrayContaining([expect.stringMatching(/env%3ATOKEN$/)]));
    expect(filesContaining(dir, value)).toEqual([]);
  });
});

describe('all or nothing', () => {
  it('an edit whose second keychain write fails restores the first secret and leaves the definition as it was', async () => {
    const settingsDir = join(dir, 'rollback');
    mkdirSync(settingsDir);
    const settings = SettingsRepository.open(openConfSettingsStore(settingsDir));
    const svc = new ServerService({ settings, secrets: store });
    const oldValue = secret('old');
    const srv = await svc.addServer({
      definition: { name: 'R', transport: 'stdio', command: 'r', args: ['--v1'], env: [{ name: 'A_KEY', secret: true }] },
      secrets: [{ name: 'env:A_KEY', value: oldValue }],
    });
    const before = readFileSync(join(settingsDir, 'settings.json'), 'utf8');
    const account = srv.accounts[0]!.id;
    await expect(
      svc.editServer({
        serverId: srv.definition.id,
        definition: { name: 'R', transport: 'stdio', command: 'r', args: ['--v2'], env: [{ name: 'A_KEY', secret: true }, { name: 'B_KEY', secret: true }] },
        secrets: [
          { name: 'env:A_KEY', value: secret('new') },
          { name: 'env:B_KEY', value: 'é'.repeat(9000) },
        ],
      }),
    ).rejects.toThrow(/value: a secret must be at most/);
    expect(await store.get(secretKey(srv.definition.id, account, 'env:A_KEY'))).toBe(oldValue);
    expect(await store.get(secretKey(srv.definition.id, account, 'env:B_KEY'))).toBeNull();
    expect(readFileSync(join(settingsDir, 'settings.json'), 'utf8')).toBe(before);
    expect(svc.getServer(srv.definition.id)).toMatchObject({ args: ['--v1'] });
  });
});

describe('accounts', () => {
  it('a server always keeps at least one account', async () => {
    const settingsDir = join(dir, 'switch');
    mkdirSync(settingsDir);
    const journal = new MemoryJournal({ now: () => 42 });
    const svc = new ServerService({ settings: SettingsRepository.open(openConfSettingsStore(settingsDir)), secrets: store, journal, clock: { now: () => 42 } });
    const srv = await svc.addServer({ definition: { name: 'S', transport: 'stdio', command: 's', args: [], env: [] }, accountLabel: 'Work' });
    const work = srv.accounts[0]!.id;
    const personal = (await svc.addAccount({ serverId: srv.definition.id, label: 'Personal' })).id;
    await expect(svc.removeAccount(work)).resolves.toMatchObject({ accountId: work });
    await expect(svc.removeAccount(personal)).rejects.toThrow(/only account of server/);
  });
});

describe('keychain unavailable', () => {
  it('refuses to store a secret, says why, leaves settings unchanged and writes the value nowhere', async () => {
    const home = mkdtempSync(join(tmpdir(), 'warden-nokeychain-'));
    const value = secret('sk-must-not-leak');
    try {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(DBUS_|DISPLAY$|WAYLAND_|GNOME_KEYRING)/.test(k)) env[k] = v;
      Object.assign(env, {
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        XDG_DATA_HOME: join(home, '.local/share'),
        XDG_CACHE_HOME: join(home, '.cache'),
        XDG_RUNTIME_DIR: join(home, 'run'),
        TMPDIR: join(home, 'tmp'),
        WARDEN_TEST_SECRET: value,
      });
      for (const d of ['.config', '.local/share', '.cache', 'run', 'tmp']) mkdirSync(join(home, d), { recursive: true, mode: 0o700 });
      const script = resolve(__dirname, 'keychain-unavailable-child.ts');
      const child = spawn(process.execPath, ['--import', 'tsx', script], { env, cwd: resolve(__dirname, '../../..'), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      const code = await new Promise<number | null>((res) => child.on('close', res));
      expect(code, err).toBe(0);
      const result = JSON.parse(out) as {
        direct: { ok: boolean; code: string; message: string };
        viaService: { ok: boolean; code: string; message: string };
        servers: number;
      };
      expect(result.direct).toMatchObject({ ok: false, code: 'KEYCHAIN_UNAVAILABLE' });
      expect(result.direct.message).toMatch(/keychain is unavailable.*never stores secrets anywhere else/);
      expect(result.viaService).toMatchObject({ ok: false, code: 'KEYCHAIN_UNAVAILABLE' });
      expect(result.servers).toBe(0);
      expect(filesContaining(home, value)).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
