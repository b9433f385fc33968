/**
 * Run by keychain.test.ts in a child process WITHOUT a D-Bus session: tries to store a secret
 * through the keytar store and through the server service (with a conf settings file in the
 * child's data dir) and prints what happened as JSON. The parent then scans every file under the
 * child's HOME for the secret value.
 */
import { join } from 'node:path';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import { ServerService } from '../../../electron/core/settings/server-service';
import { WardenError } from '../../../shared/result';

const value = process.env.WARDEN_TEST_SECRET!;
const dataDir = join(process.env.HOME!, 'warden-data');

async function attempt(fn: () => Promise<unknown>): Promise<{ ok: boolean; code?: string; message?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, code: e instanceof WardenError ? e.code : 'THROWN', message: e instanceof Error ? e.message : String(e) };
  }
}

const store = new KeytarSecretStore({ service: 'Warden-test-unavailable' });
const direct = await attempt(() => store.set('srv-1/acct-1/env%3ATOKEN', value));
const settings = SettingsRepository.open(openConfSettingsStore(dataDir));
const service = new ServerService({ settings, secrets: store });
const viaService = await attempt(() =>
  service.addServer({
    definition: { name: 'GitHub', transport: 'stdio', command: 'npx', args: ['-y', 'github-mcp'], env: [{ name: 'GITHUB_TOKEN', secret: true }] },
    secrets: [{ name: 'env:GITHUB_TOKEN', value }],
  }),
);
process.stdout.write(JSON.stringify({ direct, viaService, servers: settings.get().servers.length, settingsPath: join(dataDir, 'settings.json') }));
