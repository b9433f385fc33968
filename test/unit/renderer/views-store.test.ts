/**
 * The view slices (servers, permissions, approvals, activity) against the REAL core, a REAL
 * spawned stdio MCP server (test/fixtures/counting-server.ts, which records every call it gets)
 * and the REAL OS keychain (run inside scripts/with-keyring.sh, as `npm test` does). The store is
 * built over the same `createWardenApi` the preload uses, wired to `dispatch` and the core's events.
 *
 * The only stand-in is the native approval dialog (an Electron `dialog`), replaced by a prompter
 * that records what it was shown and answers as the test says.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ApprovalPreview } from '../../../electron/core/ports';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { createWardenApi } from '../../../shared/ipc';
import { displayCommandLine } from '../../../shared/domain/servers';
import { createAppStore, type AppStore } from '../../../renderer/src/store';
import { connectionKey } from '../../../renderer/src/store/servers-slice';
import { parseArgs } from '../../../renderer/src/views/view-helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');
const fixture = path.join(root, 'test/fixtures/counting-server.ts');

let dir: string;
let countFile: string;
let core: WardenCore;
let store: AppStore;
let unwatch: () => void;
let secrets: KeytarSecretStore;
const prompts: ApprovalPreview[] = [];
let dialogAnswer: 'approve' | 'deny' = 'deny';
/** The file the person picks in main's open dialog (its stand-in here). */
let chosenFile: string | null = null;

/** What the fixture server actually received (not what the client believes it sent). */
const received = (): Array<{ tool: string; args: Record<string, unknown> }> =>
  existsSync(countFile) ? readFileSync(countFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

/** Waits until `check` is true (the core pushes events asynchronously). */
async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-views-store-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(() => {
  countFile = path.join(dir, `calls-${randomUUID()}.jsonl`);
  prompts.length = 0;
  dialogAnswer = 'deny';
  secrets = new KeytarSecretStore({ service: `warden-views-test-${randomUUID()}` });
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: '0.0.0-views',
    platform: 'unit-os',
    servers: { secrets },
    // Stand-ins for main's native dialogs: the store names no file; the "person" opens chosenFile
    // and saves exports to a file in the test folder.
    fileDialogs: { openFile: async () => chosenFile, saveFile: async (request) => path.join(dir, `${randomUUID()}-${request.defaultName}`) },
    gate: { prompter: { prompt: async (p) => (prompts.push(p), dialogAnswer) } },
  });
  const api = createWardenApi(
    (channel, request) => dispatch(core.handlers, channel, request, () => {}),
    (event, listener) => core.events.subscribe((e, payload) => e === event && listener(payload)),
  );
  store = createAppStore({ api: () => api });
  const s = store.getState();
  const offs = [s.watchServers(), s.watchPermissions(), s.watchApprovals(), s.watchActivity()];
  unwatch = () => offs.forEach((off) => off());
});

afterEach(async () => {
  unwatch();
  // Closing the core disconnects every connection and kills each spawned server's process tree.
  await core.close();
  for (const key of await secrets.keys('').catch(() => [] as string[])) await secrets.delete(key).catch(() => undefined);
});

/** Adds the counting server through the store (as the Servers form does) and connects its first account. */
async function addAndConnect(extraEnv: Array<{ name: string; value?: string; secret?: boolean }> = [], secretValues: Array<{ name: string; value: string }> = []) {
  const args = parseArgs(`--import\n${tsxLoader}\n${fixture}`);
  const view = await store.getState().addServer(
    { name: 'Counting', transport: 'stdio', command: process.execPath, args, cwd: root, env: [{ name: 'COUNT_FILE', value: countFile }, ...extraEnv] },
    secretValues,
  );
  const serverId = view.definition.id;
  const accountId = view.accounts[0]!.id;
  await store.getState().connect(serverId, accountId);
  return { serverId, accountId, view, args };
}

describe('view slices over the real core and a real stdio server', () => {
  it('an added server shows the exact command line, connects, and lists its tools', async () => {
    const { serverId, accountId, args } = await addAndConnect();
    const cached = store.getState().servers.find((s) => s.definition.id === serverId)!;
    expect(cached.commandLine).toBe(displayCommandLine(process.execPath, args));
    expect(cached.commandLine).toContain(fixture);
    const key = connectionKey(serverId, accountId);
    expect(store.getState().connections[key]?.status.state).toBe('connected');
    expect(store.getState().tools[key]?.map((t) => t.name).sort()).toEqual(['close_issue', 'delete_file', 'read_file', 'set_permission']);
    // The matrix follows the connection: every tool starts without a mode and is decided Ask.
    await until(() => store.getState().matrix.length === 4, 'the matrix to list 4 tools');
    expect(store.getState().matrix.every((r) => r.mode === null && r.effective === 'ask')).toBe(true);
  });

  it('a run under Ask waits in the approval queue, and rejecting it means the server never gets it', async () => {
    const { serverId, accountId } = await addAndConnect();
    await store.getState().setToolMode({ serverId, accountId, toolName: 'close_issue' }, 'ask');
    const op = await store.getState().runTool({ serverId, accountId, toolName: 'close_issue', arguments: { n: 42 } });
    expect(op.state).toBe('awaiting_approval');
    expect(op.origin.source).toBe('user');
    await until(() => store.getState().approvals.some((a) => a.operation.operationId === op.operationId), 'the approval to be queued');
    const pending = store.getState().approvals.find((a) => a.operation.operationId === op.operationId)!;
    expect(JSON.parse(pending.preview.argumentsJson)).toEqual({ n: 42 });
    await store.getState().reject(op.operationId, 'not now');
    await until(() => store.getState().approvals.length === 0, 'the queue to empty');
    expect(store.getState().operations.find((o) => o.operationId === op.operationId)?.state).toBe('rejected');
    expect(received()).toEqual([]);
  });

  it('review goes through the dialog: a denied dialog sends nothing, an approved one sends exactly the previewed arguments once', async () => {
    const { serverId, accountId } = await addAndConnect();
    const first = await store.getState().runTool({ serverId, accountId, toolName: 'read_file', arguments: { path: 'a.txt' } });
    dialogAnswer = 'deny';
    expect(await store.getState().review(first.operationId)).toBe('rejected');
    expect(received()).toEqual([]);
    const second = await store.getState().runTool({ serverId, accountId, toolName: 'read_file', arguments: { path: 'b.txt' } });
    dialogAnswer = 'approve';
    expect(await store.getState().review(second.operationId)).toBe('approved');
    await until(() => store.getState().operations.find((o) => o.operationId === second.operationId)?.state === 'succeeded', 'the call to succeed');
    expect(received().map((r) => [r.tool, r.args])).toEqual([['read_file', { path: 'b.txt' }]]);
    expect(prompts.at(-1)?.toolName).toBe('read_file');
  });

  it('Always Allow is confirmed in the dialog, then a run goes straight through (one call), and Activity, history and export show it', async () => {
    const { serverId, accountId } = await addAndConnect();
    dialogAnswer = 'deny';
    await store.getState().setToolMode({ serverId, accountId, toolName: 'close_issue' }, 'allow');
    // Cancelling Warden's dialog is said once, as what happened, never as a refusal by the rules.
    expect([store.getState().permissionsError, store.getState().lastChange?.message]).toEqual([null, expect.stringMatching(/^Nothing changed: you cancelled .* in Warden’s dialog\.$/)]);
    expect(store.getState().matrix.find((r) => r.toolName === 'close_issue')?.effective).toBe('ask');
    dialogAnswer = 'approve';
    await store.getState().setToolMode({ serverId, accountId, toolName: 'close_issue' }, 'allow');
    await until(() => store.getState().matrix.find((r) => r.toolName === 'close_issue')?.effective === 'allow', 'the matrix to show allow');
    expect(store.getState().permissionsError).toBeNull();
    // A rule can be reset to the default (tightening: no dialog) and set again.
    const allowRule = store.getState().matrix.find((r) => r.toolName === 'close_issue')!.ruleId!;
    const promptsBeforeReset = prompts.length;
    await store.getState().revokeRule(allowRule);
    await until(() => store.getState().matrix.find((r) => r.toolName === 'close_issue')?.mode === null, 'the rule to be removed');
    expect(store.getState().matrix.find((r) => r.toolName === 'close_issue')?.effective).toBe('ask');
    expect(prompts.length).toBe(promptsBeforeReset);
    await store.getState().setToolMode({ serverId, accountId, toolName: 'close_issue' }, 'allow');
    await until(() => store.getState().matrix.find((r) => r.toolName === 'close_issue')?.effective === 'allow', 'the matrix to show allow again');
    expect(prompts.length).toBe(promptsBeforeReset + 1);
    const op = await store.getState().runTool({ serverId, accountId, toolName: 'close_issue', arguments: { n: 7 } });
    await until(() => store.getState().operations.find((o) => o.operationId === op.operationId)?.state === 'succeeded', 'the call to succeed');
    expect(received().map((r) => r.args)).toEqual([{ n: 7 }]);
    await store.getState().refreshCalls();
    const row = store.getState().calls.filter((c) => c.operationId === op.operationId);
    expect(row.map((c) => c.state)).toEqual(['succeeded']);
    await store.getState().toggleCall(op.operationId);
    const opened = store.getState().openCalls[op.operationId];
    expect(opened !== 'loading' && opened?.operation.operationId).toBe(op.operationId);
    expect(opened !== 'loading' && opened?.executing).not.toBeNull();
    const exported = await store.getState().exportCalls('jsonl');
    expect(exported.path).toMatch(/warden-activity-.*\.jsonl$/);
    expect(readFileSync(exported.path!, 'utf8').split('\n').filter(Boolean).some((l) => JSON.parse(l).operationId === op.operationId)).toBe(true);
  });

  it('import shows each exact command line and needs a decision per secret-looking value; confirmed secrets go to the keychain, never the store', async () => {
    chosenFile = path.join(root, 'test/fixtures/configs/claude_desktop_config.json');
    const preview = await store.getState().importPreview({ source: 'file' });
    expect(preview.path).toBe(chosenFile);
    const byName = Object.fromEntries(preview.entries.map((e) => [e.sourceName, e]));
    expect(byName.filesystem!.commandLine).toBe(displayCommandLine('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop', '/Users/me/My Documents']));
    expect(byName.insecure!.problem).not.toBeNull();
    const github = byName.github!;
    expect(github.detectedSecrets.map((d) => d.name)).toEqual(['GITHUB_PERSONAL_ACCESS_TOKEN']);
    expect(JSON.stringify(preview)).not.toContain('ghp_FAKE');
    await expect(store.getState().importServers(preview.previewId, [github.entryId], [])).rejects.toMatchObject({ code: expect.any(String) });
    const imported = await store.getState().importServers(preview.previewId, [github.entryId], [{ valueId: github.detectedSecrets[0]!.valueId, action: 'keychain' }]);
    expect(imported).toHaveLength(1);
    const cached = store.getState().servers.find((s) => s.definition.id === imported[0]!.definition.id)!;
    expect(cached.accounts[0]!.secrets).toEqual([{ name: 'env:GITHUB_PERSONAL_ACCESS_TOKEN', hasSecret: true }]);
    expect(JSON.stringify(store.getState())).not.toContain('ghp_FAKE');
  });

  it('accounts can be added, renamed and removed, and an edit keeps the server id', async () => {
    const view = await store.getState().addServer({ name: 'Acc', transport: 'stdio', command: 'true', args: [], env: [] }, []);
    const serverId = view.definition.id;
    await store.getState().addAccount(serverId, 'Work', []);
    const work = store.getState().servers.find((s) => s.definition.id === serverId)!.accounts.find((a) => a.label === 'Work')!;
    await store.getState().renameAccount(work.id, 'Office');
    expect(store.getState().servers.find((s) => s.definition.id === serverId)!.accounts.map((a) => a.label)).toEqual(['Default', 'Office']);
    await store.getState().removeAccount(work.id);
    expect(store.getState().servers.find((s) => s.definition.id === serverId)!.accounts.map((a) => a.label)).toEqual(['Default']);
    const edited = await store.getState().editServer(serverId, { name: 'Acc 2', transport: 'stdio', command: 'true', args: ['--x'], env: [] }, []);
    expect(edited.definition.id).toBe(serverId);
    expect(store.getState().servers.find((s) => s.definition.id === serverId)!.commandLine).toBe('true --x');
    await store.getState().removeServer(serverId);
    expect(store.getState().servers.some((s) => s.definition.id === serverId)).toBe(false);
  });

  it('a secret env value goes to the keychain and reaches the server, but never the store', async () => {
    const secretValue = `s3cret-${randomUUID()}`;
    const { serverId, accountId } = await addAndConnect([{ name: 'API_TOKEN', secret: true }], [{ name: 'env:API_TOKEN', value: secretValue }]);
    expect(store.getState().connections[connectionKey(serverId, accountId)]?.status.state).toBe('connected');
    const account = store.getState().servers.find((s) => s.definition.id === serverId)!.accounts[0]!;
    expect(account.secrets).toEqual([{ name: 'env:API_TOKEN', hasSecret: true }]);
    expect(await secrets.get(`${serverId}/${accountId}/${encodeURIComponent('env:API_TOKEN')}`)).toBe(secretValue);
    expect(JSON.stringify(store.getState())).not.toContain(secretValue);
  });
});
