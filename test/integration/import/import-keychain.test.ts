/**
 * Import against the REAL keychain and a real settings file: secrets move only after a
 * per-value confirmation. Run with `scripts/with-keyring.sh`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ImportService } from '../../../electron/core/import/import-service';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { ServerService } from '../../../electron/core/settings/server-service';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import { refusingFileDialogs } from '../../../electron/core/ports';
import { secretKey } from '../../../shared/domain/servers';

const fixture = (name: string) => resolve(__dirname, '../../fixtures/configs', name);
const GH_TOKEN = 'ghp_FAKEfakeFAKEfake0123456789abcdefABCD';
const BEARER = 'Bearer FAKE.token.value-1234567890';

const store = new KeytarSecretStore({ service: `Warden-import-test-${process.pid}-${randomBytes(3).toString('hex')}` });
let dir: string;
let settings: SettingsRepository;
let servers: ServerService;
let importer: ImportService;

function settingsBytes(): string {
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

beforeAll(() => {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) throw new Error('No D-Bus session: run with scripts/with-keyring.sh (real OS keychain)');
});
beforeEach(async () => {
  for (const k of await store.keys('')) await store.delete(k);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = mkdtempSync(join(tmpdir(), 'warden-import-'));
  settings = SettingsRepository.open(openConfSettingsStore(dir));
  servers = new ServerService({ settings, secrets: store });
  importer = new ImportService({ servers, location: { platform: 'linux', env: {}, home: dir }, fileDialogs: refusingFileDialogs });
});
afterAll(async () => {
  for (const k of await store.keys('')) await store.delete(k);
  rmSync(dir, { recursive: true, force: true });
});

describe('import from Claude Desktop into settings + keychain', () => {
  it('a confirmed secret moves into the keychain and never into the settings file', async () => {
    const preview = await importer.preview({ source: 'claude-desktop', path: fixture('claude_desktop_config.json') });
    const [fsEntry, gh, remote] = preview.entries;
    const views = await importer.import({
      previewId: preview.previewId,
      entryIds: [fsEntry!.entryId, gh!.entryId, remote!.entryId],
      decisions: [
        { valueId: gh!.detectedSecrets[0]!.valueId, action: 'keychain' },
        { valueId: remote!.detectedSecrets[0]!.valueId, action: 'keychain' },
      ],
    });
    expect(views.map((v) => v.definition.name)).toEqual(['filesystem', 'github', 'remote-notes']);
    const ghView = views[1]!;
    expect(ghView.accounts[0]!.secrets).toEqual([{ name: 'env:GITHUB_PERSONAL_ACCESS_TOKEN', hasSecret: true }]);
    expect(await store.get(secretKey(ghView.definition.id, ghView.accounts[0]!.id, 'env:GITHUB_PERSONAL_ACCESS_TOKEN'))).toBe(GH_TOKEN);
    const remoteView = views[2]!;
    expect(await store.get(secretKey(remoteView.definition.id, remoteView.accounts[0]!.id, 'header:authorization'))).toBe(BEARER);
    // The command that will run is exactly the one previewed.
    expect(views[0]!.commandLine).toBe(fsEntry!.commandLine);
    const bytes = settingsBytes();
    expect(bytes).toContain('GITHUB_PERSONAL_ACCESS_TOKEN');
    expect(bytes).not.toContain(GH_TOKEN);
    expect(bytes).not.toContain('FAKE.token.value');
    // A preview is single-use.
    await expect(importer.import({ previewId: preview.previewId, entryIds: [fsEntry!.entryId], decisions: [] })).rejects.toThrow(/previewId: no such preview/);
  });

  it('without a decision for a detected secret nothing is imported and nothing is stored', async () => {
    const preview = await importer.preview({ source: 'claude-desktop', path: fixture('claude_desktop_config.json') });
    const gh = preview.entries[1]!;
    await expect(importer.import({ previewId: preview.previewId, entryIds: [gh.entryId], decisions: [] })).rejects.toThrow(
      /decisions: no decision for env "GITHUB_PERSONAL_ACCESS_TOKEN" of "github"/,
    );
    expect(settings.get().servers).toEqual([]);
    expect(await store.keys('')).toEqual([]);
  });

  it('declining the keychain keeps the choice explicit: "omit" stores no value, "plain" keeps it as a plain setting', async () => {
    const preview = await importer.preview({ source: 'cursor', path: fixture('cursor-mcp.json') });
    const pg = preview.entries.find((e) => e.sourceName === 'postgres')!;
    const [omitted] = await importer.import({ previewId: preview.previewId, entryIds: [pg.entryId], decisions: [{ valueId: pg.detectedSecrets[0]!.valueId, action: 'omit' }] });
    expect(omitted!.accounts[0]!.secrets).toEqual([{ name: 'env:PGPASSWORD', hasSecret: false }]);
    expect(await store.keys('')).toEqual([]);
    expect(settingsBytes()).not.toContain('hunter2-but-longer');

    const again = await importer.preview({ source: 'cursor', path: fixture('cursor-mcp.json') });
    const pg2 = again.entries.find((e) => e.sourceName === 'postgres')!;
    const [plain] = await importer.import({ previewId: again.previewId, entryIds: [pg2.entryId], decisions: [{ valueId: pg2.detectedSecrets[0]!.valueId, action: 'plain' }] });
    expect(plain!.definition).toMatchObject({ env: [{ name: 'PGPASSWORD', value: 'hunter2-but-longer' }, { name: 'PGHOST', value: 'localhost' }] });
  });

  it('an entry with a problem cannot be imported and the error names it', async () => {
    const preview = await importer.preview({ source: 'claude-desktop', path: fixture('claude_desktop_config.json') });
    const insecure = preview.entries[3]!;
    await expect(importer.import({ previewId: preview.previewId, entryIds: [insecure.entryId], decisions: [] })).rejects.toThrow(
      /entryIds\.0: "insecure" cannot be imported: url: plain http/,
    );
  });
});

describe('import finds a secret wherever it sits in a value', () => {
  const ANTHROPIC = 'sk-ant-api03-FAKEfakeFAKEfake0123456789';
  const SLACK = 'xoxb-1234567890-FAKEfakeFAKE';
  const OPENAI = 'sk-proj-FAKEfakeFAKEfake0123456789';

  it('a token after other text, in a URL query or after a variable reference, is detected and never lands in the settings file', async () => {
    // The config file lives elsewhere: `dir` holds only what Warden wrote.
    const configDir = mkdtempSync(join(tmpdir(), 'warden-import-config-'));
    const path = join(configDir, 'claude_desktop_config.json');
    writeFileSync(
      path,
      JSON.stringify({
        mcpServers: {
          tools: {
            command: 'npx',
            args: ['-y', 'some-server'],
            env: {
              SERVICE_KEY: `https://api.example.com/v1?region=eu&key=${ANTHROPIC}`,
              GITHUB_TOKEN: `my token is ${GH_TOKEN}`,
              SLACK_AUTH: `\${env:HOME}/slack?auth=${SLACK}`,
              LOG_LEVEL: 'debug',
            },
          },
          // A secret under a name that may not be secret could only go to plain settings.
          notes: { command: 'npx', args: ['-y', 'other-server'], env: { NOTES: `my token is ${GH_TOKEN}` } },
          remote: { url: 'https://notes.example.com/mcp', headers: { 'X-Config': `region=eu; key=${OPENAI}` } },
          leaky: { url: `https://notes.example.com/mcp?api_key=${OPENAI}` },
        },
      }),
    );
    const preview = await importer.preview({ source: 'claude-desktop', path });
    const [tools, notes, remote, leaky] = preview.entries;
    expect(tools!.detectedSecrets.map((s) => s.name).sort()).toEqual(['GITHUB_TOKEN', 'SERVICE_KEY', 'SLACK_AUTH']);
    expect(notes!.problem).toMatch(/env "NOTES" looks like it holds a secret, but NOTES is a setting.*add this server by hand/);
    expect(remote!.detectedSecrets.map((s) => s.name)).toEqual(['X-Config']);
    // A URL is kept in plain settings, so one carrying a credential cannot be imported as it is.
    expect(leaky!.problem).toMatch(/url: .*credential/);
    await importer.import({
      previewId: preview.previewId,
      entryIds: [tools!.entryId, remote!.entryId],
      decisions: [...tools!.detectedSecrets, ...remote!.detectedSecrets].map((s) => ({ valueId: s.valueId, action: 'keychain' as const })),
    });
    const bytes = settingsBytes();
    expect(bytes).toContain('LOG_LEVEL');
    for (const token of [ANTHROPIC, GH_TOKEN, SLACK, OPENAI]) expect(bytes.includes(token), `${token.slice(0, 8)}… reached the settings file`).toBe(false);
    rmSync(configDir, { recursive: true, force: true });
  });
});
