/**
 * The import's native confirmation must describe what will actually be saved. A compromised
 * renderer sends `decisions: [{ action: 'plain' }]` for a token: the dialog used to be built from
 * the drafts before the decisions ("(secret, from the keychain)") while the token went to
 * settings.json and back to the renderer in servers:list. Now the dialog is built from the final
 * definitions, says where each value goes, and keeping a secret-looking value in plain settings
 * is a choice the person makes in that dialog — the renderer's "plain" alone never does it.
 *
 * The real core over dispatch, a real settings file and the real keychain (scripts/with-keyring.sh).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { ServerChangeAnswer, ServerChangeSummary } from '../../../electron/core/settings/server-confirmation';
import type { ImportPreview } from '../../../shared/contract/servers';
import type { Result } from '../../../shared/result';
import { filesContaining } from '../secrets/scan';

const store = new KeytarSecretStore({ service: `Warden-import-confirm-test-${process.pid}-${randomBytes(3).toString('hex')}` });
const token = `ghp_${randomBytes(20).toString('hex')}`;
const bearer = `Bearer ${randomBytes(20).toString('hex')}`;
const dropped = `sk-${randomBytes(20).toString('hex')}`;

/** The settings folder (scanned for secret values) and, apart from it, the folder of the config file being imported. */
let dir: string;
let sourceDir: string;
let core: WardenCore | undefined;
let shown: ServerChangeSummary[];
let answer: ServerChangeAnswer;
const seenByRenderer: unknown[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-import-confirm-'));
  sourceDir = mkdtempSync(join(tmpdir(), 'warden-import-source-'));
  const config = join(sourceDir, 'claude_desktop_config.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        github: { command: 'docker', args: ['run', '-i', 'ghcr.io/github/github-mcp-server'], env: { GITHUB_TOKEN: token, OPENAI_API_KEY: dropped } },
        notes: { url: 'https://notes.example.com/mcp', headers: { Authorization: bearer } },
      },
    }),
  );
  shown = [];
  answer = true;
  seenByRenderer.length = 0;
  core = createCore({
    version: 'test',
    servers: { settingsStore: openConfSettingsStore(dir), secrets: store },
    fileDialogs: { openFile: async () => config, saveFile: async () => null },
    confirmServerChange: async (s) => (shown.push(s), answer),
  });
});
afterEach(async () => {
  await core?.close();
  core = undefined;
  for (const k of await store.keys('')) await store.delete(k);
  rmSync(dir, { recursive: true, force: true });
  rmSync(sourceDir, { recursive: true, force: true });
});

async function run(channel: string, request: unknown): Promise<Result<unknown>> {
  const r = await dispatch(core!.handlers, channel, request, () => {});
  seenByRenderer.push(r);
  return r;
}

/** Previews the file and imports both servers with the renderer's decisions: token "plain", header "keychain", API key "omit". */
async function importWithRendererDecisions(): Promise<Result<unknown>> {
  const preview = (await run('servers:import-preview', { source: 'claude-desktop' })) as Result<ImportPreview>;
  if (!preview.ok) throw new Error(preview.error.message);
  const secrets = preview.value.entries.flatMap((e) => e.detectedSecrets);
  const id = (name: string) => secrets.find((s) => s.name === name)!.valueId;
  return run('servers:import', {
    previewId: preview.value.previewId,
    entryIds: preview.value.entries.map((e) => e.entryId),
    decisions: [
      { valueId: id('GITHUB_TOKEN'), action: 'plain' },
      { valueId: id('Authorization'), action: 'keychain' },
      { valueId: id('OPENAI_API_KEY'), action: 'omit' },
    ],
  });
}

const settingsText = () => readFileSync(join(dir, 'settings.json'), 'utf8');

describe('the import confirmation says where each value goes, and only it can keep a secret in plain settings', () => {
  it("a renderer's 'plain' alone never puts a token in settings: the dialog's Save keeps it in the keychain", async () => {
    const r = await importWithRendererDecisions();
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(filesContaining(dir, token)).toEqual([]);
    expect(settingsText()).not.toContain(token);
    await run('servers:list', {});
    expect(JSON.stringify(seenByRenderer)).not.toContain(token);
    expect((await store.keys('')).length).toBe(2);
    const github = core!.servers.definitions().find((d) => d.name === 'github')!;
    expect(github).toMatchObject({ env: [{ name: 'GITHUB_TOKEN', secret: true }, { name: 'OPENAI_API_KEY', secret: true }] });
  });

  it('the dialog is built from the final definitions and names each value’s destination, never its value', async () => {
    answer = false;
    expect(await importWithRendererDecisions()).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(core!.servers.definitions()).toEqual([]);
    expect(await store.keys('')).toEqual([]);
    const { detail, plainValues } = shown[0]!;
    expect(plainValues).toEqual(['GITHUB_TOKEN of "github"']);
    expect(detail).toMatch(/GITHUB_TOKEN = \(secret-looking value, 44 characters: the OS keychain, or plain settings only if you choose that below\)/);
    expect(detail).toMatch(/OPENAI_API_KEY = \(secret; no value stored: left out of this import, set it later in Servers\)/);
    expect(detail).toMatch(/Authorization \(secret, from the keychain; a new value is set by this change, not shown\)/);
    expect(detail).toMatch(/OS keychain: Authorization of "notes"/);
    expect(detail).toMatch(/Left out \(not stored anywhere\): OPENAI_API_KEY of "github"/);
    expect(detail).toMatch(/Plain settings, only if you choose that below .*: GITHUB_TOKEN of "github"/);
    for (const v of [token, bearer, dropped]) expect(JSON.stringify(shown)).not.toContain(v);
  });

  it('keeping it in plain settings is the person’s choice in the native dialog, and then exactly that happens', async () => {
    answer = 'keep-plain';
    expect((await importWithRendererDecisions()).ok).toBe(true);
    expect(settingsText()).toContain(token);
    expect(settingsText()).not.toContain(bearer.split(' ')[1]!);
    expect(settingsText()).not.toContain(dropped);
    expect((await store.keys('')).length).toBe(1);
  });

  it('with nothing to keep in plain settings, the dialog offers no such choice and a stray answer keeps nothing plain', async () => {
    const preview = (await run('servers:import-preview', { source: 'claude-desktop' })) as Result<ImportPreview>;
    if (!preview.ok) throw new Error(preview.error.message);
    answer = 'keep-plain';
    const r = await run('servers:import', {
      previewId: preview.value.previewId,
      entryIds: preview.value.entries.map((e) => e.entryId),
      decisions: preview.value.entries.flatMap((e) => e.detectedSecrets).map((s) => ({ valueId: s.valueId, action: 'keychain' })),
    });
    expect(r.ok).toBe(true);
    expect(shown[0]!.plainValues ?? []).toEqual([]);
    for (const v of [token, dropped]) expect(settingsText()).not.toContain(v);
  });

  it('a code-loading variable in an imported config is never hidden: it is imported as a plain setting and shown in full', async () => {
    const config = join(sourceDir, 'mcp.json');
    const payload = `--import=data:text/javascript,${randomBytes(24).toString('base64url')}`;
    writeFileSync(config, JSON.stringify({ mcpServers: { helper: { command: 'node', args: ['server.js'], env: { NODE_OPTIONS: payload } } } }));
    await core!.close();
    core = createCore({ version: 'test', servers: { settingsStore: openConfSettingsStore(dir), secrets: store }, fileDialogs: { openFile: async () => config, saveFile: async () => null }, confirmServerChange: async (s) => (shown.push(s), false) });
    const preview = (await run('servers:import-preview', { source: 'cursor' })) as Result<ImportPreview>;
    if (!preview.ok) throw new Error(preview.error.message);
    const entry = preview.value.entries[0]!;
    expect(entry.detectedSecrets).toEqual([]);
    expect(entry.draft).toMatchObject({ env: [{ name: 'NODE_OPTIONS', value: payload }] });
    expect(entry.notes.join(' ')).toMatch(/"NODE_OPTIONS" changes which code the program loads; it is imported as a plain setting/);
    await run('servers:import', { previewId: preview.value.previewId, entryIds: [entry.entryId] });
    expect(shown[0]!.detail).toContain(`NODE_OPTIONS = ${payload} (changes which code the program loads)`);
  });
  it('a setting in an imported config is imported as a plain setting and shown in full, and one that looks secret or hides behind a VS Code input is refused with the reason', async () => {
    const config = join(sourceDir, 'mcp.json');
    const gitDir = `/tmp/payload-${randomBytes(6).toString('hex')}/.git`;
    writeFileSync(
      config,
      JSON.stringify({
        inputs: [{ id: 'kube', type: 'promptString', password: true }],
        servers: {
          git: { command: 'git', args: ['status'], env: { GIT_DIR: gitDir, GITHUB_TOKEN: token } },
          aws: { command: 'aws', args: ['s3', 'ls'], env: { AWS_CONFIG_FILE: `sk-ant-${randomBytes(20).toString('hex')}` } },
          kube: { command: 'kubectl', args: ['get', 'pods'], env: { KUBECONFIG: '${input:kube}' } },
        },
      }),
    );
    await core!.close();
    core = createCore({ version: 'test', servers: { settingsStore: openConfSettingsStore(dir), secrets: store }, fileDialogs: { openFile: async () => config, saveFile: async () => null }, confirmServerChange: async (s) => (shown.push(s), false) });
    const preview = (await run('servers:import-preview', { source: 'vscode-user' })) as Result<ImportPreview>;
    if (!preview.ok) throw new Error(preview.error.message);
    const [git, aws, kube] = preview.value.entries;
    expect(git!.draft).toMatchObject({ env: [{ name: 'GIT_DIR', value: gitDir }, { name: 'GITHUB_TOKEN', secret: true }] });
    expect(git!.detectedSecrets.map((d) => d.name)).toEqual(['GITHUB_TOKEN']);
    // Its value could only be kept in plain settings, which import never does on its own.
    expect(aws!.draft).toBeNull();
    expect(aws!.problem).toMatch(/"AWS_CONFIG_FILE" looks like it holds a secret, but AWS_CONFIG_FILE is a setting, not a credential.*add this server by hand/);
    expect(kube!.draft).toBeNull();
    expect(kube!.problem).toMatch(/KUBECONFIG is a setting, not a credential .* so Warden must show its value/);
    const imported = await run('servers:import', { previewId: preview.value.previewId, entryIds: [git!.entryId], decisions: [{ valueId: git!.detectedSecrets[0]!.valueId, action: 'keychain' }] });
    expect(imported).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(shown[0]!.detail).toContain(`GIT_DIR = ${gitDir}`);
  });
});
