/**
 * Errors people understand and running a tool by hand, end to end: the built renderer in
 * Chromium (over the test host) against the REAL core, real spawned stdio servers and real
 * loopback HTTP servers.
 *
 * - An empty or wrong server form says what is missing or wrong next to each field, in words.
 * - Connection failures read as a sentence with the fix: a command that is not on PATH, a
 *   program that exits at start (with what it said), a closed port, an HTTP 401 and 500.
 * - A tool runs from a form generated from its input schema: required marks, help text, problems
 *   under the fields, the raw JSON view in sync both ways, and a call that goes through the gate
 *   (Ask sends it to Approvals; Always Allow runs it) with the server's answer shown.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import type { ApprovalPreview } from '../../electron/core/ports';
import type { ListableSecretStore } from '../../electron/core/secrets/keytar-secret-store';
import type { ServerDraft } from '../../shared/domain/servers';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { screens } from './screens';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');
const noSecrets: ListableSecretStore = { get: async () => null, set: async () => undefined, delete: async () => false, keys: async () => [] };

let dir: string;
let callsFile: string;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const httpServers: Server[] = [];
const prompts: ApprovalPreview[] = [];
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
const a11y: string[] = [];

const received = (): Array<{ tool: string; args: Record<string, unknown> }> =>
  existsSync(callsFile) ? readFileSync(callsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

/** Adds a server through the core (the form is tested on its own) and returns its panel's test-id prefix. */
async function addServer(definition: ServerDraft): Promise<{ serverId: string; accountId: string; prefix: string }> {
  const view = await core!.handlers['servers:add']({ definition });
  const serverId = view.definition.id;
  const accountId = view.accounts[0]!.id;
  return { serverId, accountId, prefix: `account-${serverId}-${accountId}` };
}

/** A loopback port nothing listens on (a server was there a moment ago). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

/** A loopback HTTPS server whose certificate nobody vouches for (self-signed). */
async function selfSigned(): Promise<string> {
  const tls = path.join(root, 'test/fixtures/tls');
  const server = createHttpsServer({ cert: readFileSync(path.join(tls, 'self-signed-cert.pem')), key: readFileSync(path.join(tls, 'self-signed-key.pem')) }, (_req, res) =>
    res.end('{}'),
  );
  httpServers.push(server as unknown as Server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** A loopback HTTP server answering every request with `status`. */
async function answering(status: number): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`));
  httpServers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** The Servers view lists servers; each opens into its details (accounts, tools, Run). */
async function openServer(serverId: string): Promise<void> {
  await page.getByTestId('nav-servers').click();
  if ((await page.getByTestId('server-details-back').count()) > 0) await page.getByTestId('server-details-back').click();
  await page.getByTestId(`server-open-${serverId}`).click();
}

describe('errors people understand, and running a tool by hand', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-everyday-'));
    callsFile = path.join(dir, 'calls.jsonl');
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-everyday',
      platform: 'e2e-test-os',
      servers: { secrets: noSecrets },
      // Stand-in for main's native dialogs: records the trusted preview and approves.
      gate: { prompter: { prompt: async (preview) => (prompts.push(preview), 'approve') } },
      connections: { connectTimeoutMs: 20_000, reconnect: { maxAttempts: 0 } },
    });
    ({ host, browser, page } = await openAppInBrowser(core, errors));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => Promise.all(httpServers.map((s) => new Promise((r) => s.close(r)))),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('an empty server form says what is missing next to each field instead of moving on', async () => {
    await page.getByTestId('nav-servers').click();
    await page.getByTestId('servers-add').click();
    await page.getByTestId('server-form-save').click();
    const name = page.getByTestId('server-form-problem-name');
    await name.waitFor();
    expect(await name.innerText()).toBe('Enter a name: it is how this server appears in Warden.');
    expect(await page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('server-form-name');
    expect(await page.getByTestId('server-form-problem-command').innerText()).toMatch(/^Enter the program to run/);
    // Each problem is tied to its field for assistive technology.
    expect(await page.getByTestId('server-form-name').getAttribute('aria-describedby')).toBe('server-form-problem-name');
    expect(await page.getByTestId('server-form-name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('server-form-missing').innerText()).toMatch(/^2 things are missing/);
    // It stayed on the form: no confirmation step, nothing saved.
    expect(await page.getByTestId('server-form-save').innerText()).toBe('Review command…');
    expect(core!.servers.definitions()).toHaveLength(0);
    a11y.push(...(await screens(page, 'everyday-server-form-missing', 'server-form')));
  });

  it('a URL the core refuses is named in words, with the problem next to the URL field', async () => {
    await page.getByTestId('server-form-name').fill('Remote notes');
    await page.getByTestId('server-form-http').check();
    await page.getByTestId('server-form-url').fill('http://notes.example.com/mcp');
    await page.getByTestId('server-form-save').click();
    const problem = page.getByTestId('server-form-problem-url');
    await problem.waitFor({ timeout: 15_000 });
    expect(await problem.innerText()).toMatch(/^Plain http is only allowed on loopback .*use https for notes\.example\.com\.$/);
    const note = page.getByTestId('server-form-error');
    expect(await note.innerText()).toMatch(/^Some of what you entered isn't valid\. Fix the fields marked in the form and try again\.\s+URL: plain http/);
    // The person lands on the field to fix.
    expect(await page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('server-form-url');
    expect(await note.innerText()).not.toMatch(/INVALID_REQUEST|definition\.url|servers:add/);
    expect(core!.servers.definitions()).toHaveLength(0);
    a11y.push(...(await screens(page, 'everyday-server-form-refused', 'server-form')));
    await page.getByTestId('server-form').getByRole('button', { name: 'Cancel' }).click();
  });

  it('connection failures read as a sentence with the fix, told apart by the core', async () => {
    const missing = await addServer({ name: 'Python tools', transport: 'stdio', command: 'uvx-warden-not-installed', args: ['mcp-server-fetch'], env: [] });
    const exits = await addServer({
      name: 'GitHub',
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', "console.error('Error: GITHUB_PERSONAL_ACCESS_TOKEN is not set'); process.exit(1)"],
      env: [],
    });
    const unauthorized = await addServer({ name: 'Team wiki', transport: 'http', url: await answering(401), headers: [], auth: { kind: 'none' } });
    const broken = await addServer({ name: 'Build service', transport: 'http', url: await answering(500), headers: [], auth: { kind: 'none' } });
    const port = await closedPort();
    const refused = await addServer({ name: 'Local notes', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: [], auth: { kind: 'none' } });
    const untrusted = await addServer({ name: 'Self-signed', transport: 'http', url: await selfSigned(), headers: [], auth: { kind: 'none' } });
    // RFC 6761: a name under .invalid never resolves.
    const unresolved = await addServer({ name: 'Typo', transport: 'http', url: 'https://warden-test.invalid/mcp', headers: [], auth: { kind: 'none' } });
    await page.getByTestId('nav-servers').click();
    const expectations: Array<[{ serverId: string; prefix: string }, RegExp]> = [
      [missing, /^Warden could not start uvx-warden-not-installed: no such program\. Check the command in the server's settings\.$/],
      [exits, /^\/.*node started but stopped right away: it exited with code 1\. Its last message was “Error: GITHUB_PERSONAL_ACCESS_TOKEN is not set”\. Check the server's arguments and environment variables/],
      [unauthorized, /^127\.0\.0\.1 refused Warden's credentials \(HTTP 401, unauthorized\)\. Check the token or header/],
      [broken, /^127\.0\.0\.1 failed on its side \(HTTP 500, server error\)\. Try again later/],
      [refused, new RegExp(`^Nothing is answering at 127\\.0\\.0\\.1:${port}: the connection was refused\\. Start the server, or check the address and port\\.$`)],
      [untrusted, /^Warden didn't connect to 127\.0\.0\.1: its certificate is self-signed, so Warden cannot tell it is the real server\. Use the server's proper https address, or ask whoever runs it to fix its certificate\.$/],
      [unresolved, /^Warden couldn't find warden-test\.invalid: the name doesn't resolve\. Check the address for typos, and your network connection\.$/],
    ];
    const kinds = new Map<string, string>();
    for (const [server, sentence] of expectations) {
      const prefix = server.prefix;
      await openServer(server.serverId);
      await page.getByTestId(`${prefix}-connect`).click();
      const problem = page.getByTestId(`${prefix}-problem`);
      await problem.waitFor({ timeout: 30_000 });
      expect(await problem.innerText()).toMatch(sentence);
      expect(await page.getByTestId(`${prefix}-status`).innerText()).toBe('Couldn’t connect');
      kinds.set(prefix, (await problem.getAttribute('data-kind')) ?? '');
      if (server === missing) a11y.push(...(await screens(page, 'everyday-connection-failures', `server-${missing.serverId}`)));
      if (server === refused) a11y.push(...(await screens(page, 'everyday-connection-failures-network', `server-${refused.serverId}`)));
    }
    expect(kinds.get(missing.prefix)).toBe('command-not-found');
    expect(kinds.get(exits.prefix)).toBe('process-exited');
    // Told apart by the core, not guessed from a message: each kind is carried as data.
    expect(kinds.get(refused.prefix)).toBe('refused');
    expect(kinds.get(untrusted.prefix)).toBe('tls');
    expect(kinds.get(unresolved.prefix)).toBe('dns');
    for (const s of [missing, exits, unauthorized, broken, refused, untrusted, unresolved]) await core!.handlers['servers:remove']({ serverId: s.serverId });
  });

  it('a tool runs from a form generated from its schema: required marks, help text, and what is missing under each field', async () => {
    const tracker = await addServer({
      name: 'Tracker',
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', tsxLoader, path.join(root, 'test/fixtures/servers/tracker.ts')],
      env: [{ name: 'CALLS_FILE', value: callsFile }],
    });
    await page.getByTestId('nav-servers').click();
    await openServer(tracker.serverId);
    await page.getByTestId(`${tracker.prefix}-connect`).click();
    await page.getByTestId('tool-run-create_issue').waitFor({ timeout: 30_000 });
    await page.getByTestId('tool-run-create_issue').click();
    const form = page.getByTestId('run-form');
    await form.getByTestId('run-form-fields').waitFor();
    const formText = await form.innerText();
    expect(formText).toContain('Run Create an issue');
    expect(formText).toMatch(/Repo \(required\)/);
    expect(formText).toContain('The repository, as owner/name.');
    expect(formText).toMatch(/Priority \(optional\)\n[\s\S]*1 is the most urgent\. A whole number from 1 to 5\. Default: 3\./);
    expect(await page.getByTestId('run-field-/priority').inputValue()).toBe('3');

    await page.getByTestId('run-form-submit').click();
    await page.getByTestId('run-problem-/repo').waitFor();
    expect(await page.getByTestId('run-problem-/repo').innerText()).toBe('This is required.');
    expect(await page.getByTestId('run-problem-/title').innerText()).toBe('This is required.');
    expect(await page.getByTestId('run-field-/repo').getAttribute('aria-describedby')).toContain('-problem');
    expect(await page.getByTestId('run-form-problems').innerText()).toMatch(/^2 fields need your attention/);
    expect(await page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('run-field-/repo');
    expect(received()).toEqual([]);
    a11y.push(...(await screens(page, 'everyday-run-form-missing', 'run-form')));
  });

  it('values out of range are named at their field; the JSON view shows the same arguments and edits there fill the form', async () => {
    await page.getByTestId('run-field-/repo').fill('acme/mobile');
    await page.getByTestId('run-field-/title').fill('Crash on start');
    await page.getByTestId('run-field-/priority').fill('9');
    await page.getByTestId('run-add-/labels').click();
    await page.getByTestId('run-field-/labels/0').selectOption({ label: 'bug' });
    await page.getByTestId('run-include-/assignee').click();
    await page.getByTestId('run-field-/assignee/login').fill('sam');
    await page.getByTestId('run-form-submit').click();
    await page.getByTestId('run-problem-/priority').waitFor();
    expect(await page.getByTestId('run-problem-/priority').innerText()).toBe('Enter 5 or less.');
    await page.getByTestId('run-field-/priority').fill('2');

    await page.getByTestId('run-form-json-toggle').check();
    const json = page.getByTestId('run-form-arguments');
    expect(JSON.parse(await json.inputValue())).toEqual({ repo: 'acme/mobile', title: 'Crash on start', labels: ['bug'], priority: 2, draft: false, assignee: { login: 'sam' } });
    a11y.push(...(await screens(page, 'everyday-run-form-json', 'run-form')));
    await json.fill(JSON.stringify({ repo: 'acme/mobile', title: 'Crash when offline', labels: ['bug'], priority: 2, draft: false, assignee: { login: 'sam', notify: true } }));
    await page.getByTestId('run-form-json-toggle').uncheck();
    expect(await page.getByTestId('run-field-/title').inputValue()).toBe('Crash when offline');
    expect(await page.getByTestId('run-field-/assignee/notify').inputValue()).toBe('yes');

    // JSON the form cannot hold is not dropped silently: going back to the form is refused, saying why.
    await page.getByTestId('run-form-json-toggle').check();
    await json.fill('{"repo": "acme/mobile", "title": "x", "priority": "high"}');
    await page.getByTestId('run-form-json-toggle').click();
    expect(await page.getByTestId('run-form-json-toggle').isChecked()).toBe(true);
    expect(await page.getByTestId('run-form-json-problems').innerText()).toMatch(/Some values don't fit the form's fields: Priority\./);
    await json.fill(JSON.stringify({ repo: 'acme/mobile', title: 'Crash when offline', labels: ['bug'], priority: 2, draft: false, assignee: { login: 'sam', notify: true } }));
    await page.getByTestId('run-form-json-toggle').uncheck();
    await page.getByTestId('run-form-fields').waitFor();
  });

  it('the call goes through the gate: Ask sends it to Approvals; once allowed it runs, and the server gets exactly the form’s arguments', async () => {
    await page.getByTestId('run-form-submit').click();
    await page.locator('[data-testid="run-form-state"][data-state="awaiting_approval"]').waitFor({ timeout: 30_000 });
    expect(received()).toEqual([]);
    const pending = core!.gate.gate.pending()[0]!;
    await core!.handlers['approvals:review']({ operationId: pending.operationId });
    await page.locator('[data-testid="run-form-state"][data-state="succeeded"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('run-form-output').innerText()).toBe('Created issue #101 in acme/mobile: Crash when offline (priority 2)');
    expect(received()).toEqual([
      { tool: 'create_issue', args: { repo: 'acme/mobile', title: 'Crash when offline', labels: ['bug'], priority: 2, draft: false, assignee: { login: 'sam', notify: true } } },
    ]);
    expect(prompts.at(-1)).toMatchObject({ toolName: 'create_issue' });
    a11y.push(...(await screens(page, 'everyday-run-form-result', 'run-form-result')));
  });

  it('what only the gate checks (a pattern) is refused before anything is sent, and named next to its field in words', async () => {
    const before = received().length;
    await page.getByTestId('run-field-/repo').fill('acme mobile');
    await page.getByTestId('run-form-submit').click();
    await page.locator('[data-testid="run-form-state"][data-state="validation_failed"]').waitFor({ timeout: 30_000 });
    const problem = page.getByTestId('run-problem-/repo');
    await problem.waitFor();
    expect(await problem.innerText()).toBe("This isn't in the form the tool expects: see the field's description.");
    const note = await page.getByTestId('run-form-operation-error').innerText();
    expect(note).toContain("Repo: This isn't in the form the tool expects");
    expect(note).not.toContain('arguments.repo');
    expect(received()).toHaveLength(before);
    a11y.push(...(await screens(page, 'everyday-run-form-refused', 'run-form-result')));
    // Changing the field clears what the gate said about it.
    await page.getByTestId('run-field-/repo').fill('acme/mobile');
    expect(await problem.count()).toBe(0);
  });

  it('an empty account name is not sent: the inline form says what is missing next to its field, and keeps it open', async () => {
    const tracker = core!.servers.definitions().find((d) => d.name === 'Tracker')!;
    const accounts = async () => (await core!.handlers['accounts:list']({ serverId: tracker.id })).accounts.map((a) => a.label);
    const before = await accounts();
    await openServer(tracker.id);
    await page.getByTestId(`server-${tracker.id}`).getByRole('button', { name: 'Add account…' }).click();
    const formId = `server-${tracker.id}-new-account`;
    await page.getByTestId(`${formId}-submit`).click();
    const problem = page.getByTestId(`${formId}-problem-value`);
    await problem.waitFor();
    expect(await problem.innerText()).toBe('Enter a name for the new account, such as Work or Personal.');
    const input = page.getByTestId(`${formId}-input`);
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(await input.getAttribute('aria-describedby')).toBe(`${formId}-problem-value`);
    expect(await page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe(`${formId}-input`);
    expect(await accounts()).toEqual(before);
    a11y.push(...(await screens(page, 'everyday-account-missing', formId)));

    await input.fill('Personal');
    expect(await problem.count()).toBe(0);
    await page.getByTestId(`${formId}-submit`).click();
    await expect.poll(accounts, { timeout: 15_000 }).toEqual([...before, 'Personal']);
  });

  it('shows no serious accessibility problems, page errors or CSP violations', async () => {
    expect(a11y).toEqual([]);
    expect(errors.pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(errors.consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
