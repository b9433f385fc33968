import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import type { ServerDefinition } from '../../../shared/domain/servers';
import { mayBeSecretEnvName } from '../../../shared/domain/secret-env-names';

const dir = mkdtempSync(join(tmpdir(), 'warden-roundtrip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const envName = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,15}$/);
// Only a name that says it holds a credential may be secret when saved, so a secret gets such a name.
const secretEnvName = envName.map((n) => `${n}_TOKEN`).filter(mayBeSecretEnvName);
const stdioServer = (id: string) =>
  fc.record({
    id: fc.constant(id),
    // eslint-disable-next-line no-control-regex
    name: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0 && !/[\u0000-\u001f\u007f]/.test(s)).map((s) => s.trim()),
    transport: fc.constant('stdio' as const),
    command: fc.string({ minLength: 1, maxLength: 50 }),
    args: fc.array(fc.string({ maxLength: 40 }), { maxLength: 6 }),
    env: fc.uniqueArray(fc.oneof(fc.record({ name: envName, value: fc.string({ maxLength: 20 }) }), fc.record({ name: secretEnvName, secret: fc.constant(true) })), {
      maxLength: 5,
      selector: (e) => e.name,
    }),
  });

describe('settings round trip', () => {
  it('any valid set of servers written is read back exactly, nothing dropped or reordered', () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 6 }).chain((xs) => fc.tuple(...xs.map((_, i) => stdioServer(`s-${i}`)))), (servers) => {
        const sub = join(dir, String(n++));
        const repo = SettingsRepository.open(openConfSettingsStore(sub));
        repo.update((d) => {
          d.servers = servers as ServerDefinition[];
          d.accounts = servers.map((s) => ({ id: `${s.id}-a`, serverId: s.id, label: 'Default' }));
        });
        const again = SettingsRepository.open(openConfSettingsStore(sub));
        expect(again.problem).toBeNull();
        expect(again.get().servers).toEqual(servers);
      }),
      { numRuns: 60 },
    );
  });
});
