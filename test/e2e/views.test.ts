/**
 * End to end through the real views: the built renderer in headless Chromium, over the test host,
 * against the REAL core and a REAL spawned stdio MCP server (test/fixtures/counting-server.ts,
 * which records every tools/call it actually receives).
 *
 * A person adds the server through the form (and sees the exact command line first), connects,
 * sees its tools, sets a tool to Ask, runs a call, finds it in Approvals, rejects it (the server
 * never gets it), sets Always Allow (confirmed in the stand-in for main's native dialog) and runs
 * again (the server gets exactly one call), then sees both in Activity and exports the log.
 *
 * The only stand-in is the native dialog (Electron's `dialog`), replaced by a prompter that
 * records what it was shown and approves: the renderer itself has no way to approve anything.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { look, type LookOptions } from '../helpers/look';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import type { Handlers } from '../../electron/core/dispatch';
import type { MatrixRow } from '../../shared/contract/permissions';
import type { ApprovalPreview } from '../../electron/core/ports';
import { KeytarSecretStore } from '../../electron/core/secrets/keytar-secret-store';
import { displayCommandLine } from '../../shared/domain/servers';
import { scriptedFileDialogs } from '../host/standin-file-dialogs';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const resultsDir = `${root}test-results`;
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');
const fixture = path.join(root, 'test/fixtures/counting-server.ts');

let dir: string;
let countFile: string;
let core: WardenCore | undefined;
/** A keychain service of its own (the real OS keychain; `npm test` runs in a private keyring session). */
const secrets = new KeytarSecretStore({ service: `warden-e2e-views-${process.pid}-${Date.now()}` });
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const prompts: ApprovalPreview[] = [];
/** Stand-in for main's native open dialog (import reads only the file chosen there). */
const fileDialogs = scriptedFileDialogs();
/** When set, permissions:matrix answers with these rows (to measure the view with 10k tools). */
let bigMatrix: MatrixRow[] | null = null;
const pageErrors: string[] = [];
const consoleErrors: string[] = [];

/** What the fixture server actually received, one entry per tools/call. */
const received = (): Array<{ tool: string; args: Record<string, unknown> }> =>
  existsSync(countFile) ? readFileSync(countFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

/** Looks at the current screen: both sizes, both themes, axe and clipping checks (test/helpers/look.ts). */
const shot = (name: string, options?: LookOptions) => look(page, `views-${name}`, options);

describe('the views in a real browser against the real core and a real stdio server', () => {
  let serverId = '';
  let accountId = '';
  let rejectedId = '';
  let allowedId = '';

  beforeAll(async () => {
    await mkdir(resultsDir, { recursive: true });
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-views-'));
    countFile = path.join(dir, 'calls.jsonl');
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-views',
      platform: 'e2e-test-os',
      servers: { secrets },
      // Stand-in for main's native save dialog: the person picks this file; opening is scripted.
      fileDialogs: { ...fileDialogs, saveFile: async (request) => path.join(dir, request.defaultName) },
      // Stand-in for main's native dialog: records the trusted preview and approves.
      gate: { prompter: { prompt: async (preview) => (prompts.push(preview), 'approve') } },
    });
    const real = core.handlers;
    const handlers: Handlers = { ...real, 'permissions:matrix': (request) => bigMatrix ? { rows: bigMatrix, configErrors: [] } : real['permissions:matrix'](request) };
    ({ host, browser, page } = await openAppInBrowser({ handlers, events: core.events }, { consoleErrors, pageErrors }, { width: 1400, height: 900 }));
  });

  afterAll(async () => {
    // Disconnects every connection and kills each spawned server's process tree.
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
      async () => {
        for (const key of await secrets.keys('').catch(() => [] as string[])) await secrets.delete(key).catch(() => undefined);
      },
    );
  });

  it('the built-in offline demo can be added from the empty Servers view, connects in-process and lists its tools; removing it empties the list', async () => {
    await page.getByTestId('nav-servers').click();
    await page.getByTestId('servers-empty').waitFor();
    await page.getByTestId('servers-add-demo').click();
    const card = page.locator('[data-testid^="server-"][data-testid$="-builtin"]');
    await card.waitFor({ timeout: 30_000 });
    const demoId = core!.servers.definitions()[0]!.id;
    const demoAccount = (await core!.handlers['accounts:list']({ serverId: demoId })).accounts[0]!.id;
    const prefix = `account-${demoId}-${demoAccount}`;
    await page.getByTestId(`${prefix}-connect`).click();
    await page.locator(`[data-testid="${prefix}-status"][data-state="connected"]`).waitFor({ timeout: 30_000 });
    const tools = page.getByTestId(`${prefix}-tools`);
    await tools.getByTestId('tool-notes_delete').waitFor();
    expect(await tools.locator('.tool-item').count()).toBe(6);
    expect(await tools.getByTestId('tool-notes_delete').innerText()).toMatch(/destructive \(claimed\)/);
    await shot('demo');
    await page.getByTestId(`server-${demoId}`).getByRole('button', { name: 'Remove…' }).click();
    await page.getByTestId(`server-${demoId}`).getByRole('button', { name: 'Remove server and its secrets' }).click();
    await page.getByTestId('servers-empty').waitFor({ timeout: 30_000 });
    expect(core!.servers.definitions()).toHaveLength(0);
  });

  it('adding a local server shows the exact, untruncated command line before it is saved', async () => {
    await page.getByTestId('nav-servers').click();
    await page.getByTestId('servers-empty').waitFor();
    await page.getByTestId('servers-add').click();
    await page.getByTestId('server-form-name').fill('Counting fixture');
    await page.getByTestId('server-form-command').fill(process.execPath);
    await page.getByTestId('server-form-args').fill(['--import', tsxLoader, fixture].join('\n'));
    await page.getByTestId('server-form-cwd').fill(root);
    await page.getByTestId('server-form-add-env').click();
    await page.getByLabel('env name 1').fill('COUNT_FILE');
    await page.getByLabel('env value 1').fill(countFile);
    const expected = displayCommandLine(process.execPath, ['--import', tsxLoader, fixture]);
    await page.getByTestId('server-form-save').click();
    // First click only shows the confirmation with the full command line; nothing is saved yet.
    expect(await page.getByTestId('server-form-save').innerText()).toBe('Confirm and save');
    expect(await page.getByTestId('server-form-commandline').innerText()).toBe(expected);
    expect(core!.servers.definitions()).toHaveLength(0);
    await shot('server-form', { focus: 'server-form' });
    // The form's main control is reachable at 800×600 (scrolled to, not cut off).
    await shot('server-form-confirm', { focus: 'server-form-save' });
    await page.getByTestId('server-form-save').click();
    await page.getByTestId('server-form').waitFor({ state: 'detached' });
    const defs = core!.servers.definitions();
    expect(defs).toHaveLength(1);
    serverId = defs[0]!.id;
    accountId = (await core!.handlers['accounts:list']({ serverId })).accounts[0]!.id;
    expect(await page.getByTestId(`server-${serverId}-commandline`).innerText()).toBe(expected);
  });

  it('connecting shows the status and the tools, with descriptions labelled as the server’s claim', async () => {
    const prefix = `account-${serverId}-${accountId}`;
    await page.getByTestId(`${prefix}-connect`).click();
    await page.locator(`[data-testid="${prefix}-status"][data-state="connected"]`).waitFor({ timeout: 60_000 });
    const tools = page.getByTestId(`${prefix}-tools`);
    await tools.getByTestId('tool-close_issue').waitFor();
    expect(await tools.locator('.tool-item').count()).toBe(4);
    expect(await tools.getByTestId('tool-close_issue').innerText()).toMatch(/server says:\s*close_issue \(counting fixture\)/i);
    // The status bar follows the connection (re-read on the connection event).
    await expect.poll(() => page.getByTestId('status-servers').innerText(), { timeout: 15_000 }).toBe('Server connected');
    await page.getByTestId(`${prefix}-logs-toggle`).click();
    await page.getByTestId(`${prefix}-logs`).waitFor();
    await shot('servers');
  });

  it('a tool set to Ask and run from the UI waits in Approvals, which has no approve button; rejecting it sends nothing', async () => {
    await page.getByTestId('nav-permissions').click();
    const mode = page.getByTestId(`perm-mode-${serverId}-${accountId}-close_issue`);
    await mode.waitFor();
    await page.getByTestId(`perm-mode-${serverId}-${accountId}-close_issue-ask`).click();
    await expect.poll(() => mode.getAttribute('data-mode'), { timeout: 15_000 }).toBe('ask');
    expect(await page.getByTestId(`perm-row-${serverId}-${accountId}-close_issue`).getAttribute('data-effective')).toBe('ask');
    await shot('permissions');

    await page.getByTestId('nav-servers').click();
    await page.getByTestId('tool-run-close_issue').click();
    // The form generated from the tool's schema: one field per argument.
    await page.getByTestId('run-field-/n').fill('42');
    await page.getByTestId('run-field-/text').fill('first');
    await page.getByTestId('run-form-submit').click();
    await page.locator('[data-testid="run-form-state"][data-state="awaiting_approval"]').waitFor({ timeout: 30_000 });

    await page.getByTestId('nav-approvals').click();
    // The arguments in words first, in the schema's order; the JSON one click away.
    const card = page.locator('[data-testid^="approval-"][data-testid$="-arguments"]');
    await card.waitFor({ timeout: 30_000 });
    expect(await card.innerText()).toBe('text: first\nn: 42');
    rejectedId = (await card.getAttribute('data-testid'))!.replace(/^approval-/, '').replace(/-arguments$/, '');
    await page.getByTestId(`approval-${rejectedId}`).getByText('Show JSON').click();
    expect(JSON.parse(await page.getByTestId(`approval-${rejectedId}-arguments-json`).innerText())).toEqual({ n: 42, text: 'first' });
    // The renderer cannot approve: no approve control anywhere, and the view says so.
    expect(await page.getByRole('button', { name: /approve/i }).count()).toBe(0);
    expect(await page.getByTestId('approvals-cannot-approve').innerText()).toContain('never in this window');
    await shot('approvals');
    await page.getByTestId(`approval-${rejectedId}-reject`).click();
    await page.getByTestId(`approval-${rejectedId}-reason`).fill('not now');
    await page.getByTestId(`approval-${rejectedId}-reject-confirm`).click();
    await page.getByTestId('approvals-empty').waitFor({ timeout: 30_000 });
    expect((await core!.gate.gate.get(rejectedId))?.state).toBe('rejected');
    expect(received()).toEqual([]);
  });

  it('Always Allow (confirmed in the native-dialog stand-in) lets the next run through: the server gets exactly one call', async () => {
    await page.getByTestId('nav-permissions').click();
    await page.getByTestId(`perm-mode-${serverId}-${accountId}-close_issue-allow`).click();
    await expect.poll(() => page.getByTestId(`perm-row-${serverId}-${accountId}-close_issue`).getAttribute('data-effective'), { timeout: 15_000 }).toBe('allow');
    expect(prompts.some((p) => p.toolName === 'close_issue' && p.title.startsWith('Always allow'))).toBe(true);

    await page.getByTestId('nav-servers').click();
    const runForm = page.getByTestId('run-form');
    if ((await runForm.count()) === 0) await page.getByTestId('tool-run-close_issue').click();
    await page.getByTestId('run-field-/n').fill('7');
    await page.getByTestId('run-field-/text').fill('second');
    await page.getByTestId('run-form-submit').click();
    await page.locator('[data-testid="run-form-state"][data-state="succeeded"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('run-form-output').innerText()).toBe('close_issue done');
    const calls = received();
    expect(calls.map((c) => [c.tool, c.args])).toEqual([['close_issue', { n: 7, text: 'second' }]]);
    // Finished operations are read from the history (the gate holds live ones only).
    allowedId = (await core!.gate.handlers['operations:list']({ limit: 200 })).operations.find((o) => o.state === 'succeeded')!.operationId;
    await shot('run-form', { focus: 'run-form' });
  });

  it('Activity shows one row per run in words, opens into why it ran and its timeline, filters with visible chips, and exports the filtered calls', async () => {
    await page.getByTestId('nav-activity').click();
    const row = (id: string) => page.locator(`[data-testid="activity-row"][data-operation="${id}"]`);
    await page.locator(`[data-testid="activity-row"][data-operation="${allowedId}"][data-state="succeeded"]`).waitFor({ timeout: 30_000 });
    expect(await page.locator(`[data-testid="activity-row"][data-operation="${rejectedId}"][data-state="rejected"]`).count()).toBe(1);
    // One row per operation, newest first.
    expect(await page.getByTestId('activity-row').count()).toBe(2);
    // What, who asked, decision and outcome in words: the trusted preview, names, never ids or codes.
    const rowText = await row(allowedId).innerText();
    expect(rowText).toContain('close_issue on Counting fixture (Default)');
    expect(rowText).toContain('You, with Run…');
    expect(await row(allowedId).getByTestId('activity-row-outcome').innerText()).toBe('Succeeded');
    expect(await row(rejectedId).getByTestId('activity-row-outcome').innerText()).toBe('Rejected');
    for (const hidden of [allowedId, serverId, 'op.transition', 'op.proposed', 'succeeded', 'awaiting_approval']) expect(await page.getByTestId('activity-table').innerText()).not.toContain(hidden);

    await row(allowedId).getByTestId('activity-row-toggle').click();
    const details = page.getByTestId('activity-call-details');
    await details.waitFor({ timeout: 15_000 });
    const why = await details.getByTestId('activity-why').innerText();
    expect(why).toContain('Why did this run?');
    expect(why).toMatch(/Decision\s+It ran without asking because you set Always Allow .*\./);
    expect(why).toContain('No one needed to approve it: your Always Allow let it run.');
    const timeline = await details.getByTestId('activity-timeline').innerText();
    expect(timeline).toMatch(/Requested[\s\S]*Approved[\s\S]*Sent to the server[\s\S]*Succeeded/);
    expect(timeline).toContain('Requested: by you, with Run…');
    expect(timeline).not.toMatch(/op\.|awaiting_approval|by user/);
    expect(await details.innerText()).not.toContain(allowedId);
    await details.getByTestId('activity-call-ids').locator('summary').click();
    expect(await details.getByTestId('activity-call-ids').innerText()).toContain(allowedId);
    await shot('activity', { focus: 'activity-table' });

    // Filters show as chips a person can remove one by one.
    await page.getByTestId('activity-filter-outcome').selectOption('rejected');
    await expect.poll(() => page.getByTestId('activity-row').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.getByTestId('activity-chips').innerText()).toContain('Outcome: Rejected by you');
    await page.getByTestId('activity-filter-decision').selectOption('deny');
    await page.getByTestId('activity-no-match').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('activity-no-match').innerText()).toMatch(/No calls match these filters\. To see more, remove a filter above/);
    await shot('activity-no-match');
    await page.getByRole('button', { name: 'Remove filter Decision: Refused' }).click();
    await expect.poll(() => page.getByTestId('activity-row').count(), { timeout: 15_000 }).toBe(1);
    await page.getByTestId('activity-clear-filters').click();
    await expect.poll(() => page.getByTestId('activity-row').count(), { timeout: 15_000 }).toBe(2);

    // Export of the filtered rows: one line per call, to the file chosen in the save dialog.
    await page.getByTestId('activity-filter-tool').selectOption('close_issue');
    await expect.poll(() => page.getByTestId('activity-chips').innerText(), { timeout: 15_000 }).toContain('Tool: close_issue');
    await page.getByTestId('activity-export-jsonl').click();
    const saved = page.getByTestId('activity-export-path');
    await saved.waitFor();
    const savedPath = await saved.innerText();
    expect(savedPath).toMatch(/warden-activity-.*\.jsonl$/);
    const exported = readFileSync(savedPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { operationId: string; outcome: string; server: string });
    expect(exported.map((e) => [e.operationId, e.outcome, e.server])).toEqual([
      [rejectedId, 'rejected', 'Counting fixture'],
      [allowedId, 'succeeded', 'Counting fixture'],
    ]);
    await page.getByTestId('activity-clear-filters').click();
    await page.getByTestId('nav-recovery').click();
    await page.getByTestId('recovery-empty').waitFor();
    await shot('recovery');
  });

  it('a compromised window passing hostile Activity filters gets a plain error, and SQL in a name only matches nothing', async () => {
    const answers = (await page.evaluate(`Promise.all([
      window.warden.activity.calls({ filter: { from: 2000, to: 1000 } }),
      window.warden.activity.calls({ filter: { serverId: "' OR 1=1 --" } }),
      window.warden.activity.calls({ limit: 100000 }),
      window.warden.activity.exportCalls({ format: 'jsonl', filter: { outcome: 'everything' } }),
    ])`)) as Array<{ ok: boolean; value?: { calls: unknown[] }; error?: { code: string; message: string } }>;
    expect(answers[0]).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/time range ends before it starts/) } });
    expect(answers[1]).toMatchObject({ ok: true, value: { calls: [], next: null } });
    expect(answers[2]).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/at most 200 rows a page/) } });
    expect(answers[3]).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/outcome/) } });
  });

  it('Review… asks main to show its dialog with the trusted preview; only the dialog’s answer (here: approve) sends the call', async () => {
    await page.getByTestId('nav-servers').click();
    await page.getByTestId('tool-run-read_file').click();
    // The raw JSON view (advanced) sends exactly what is typed there.
    await page.getByTestId('run-form-json-toggle').last().check();
    await page.getByTestId('run-form-arguments').last().fill('{"path": "/tmp/reviewed.txt"}');
    await page.getByTestId('run-form-submit').last().click();
    await page.locator('[data-testid="run-form-state"][data-state="awaiting_approval"]').waitFor({ timeout: 30_000 });
    expect(received().filter((c) => c.tool === 'read_file')).toEqual([]);
    await page.getByTestId('nav-approvals').click();
    const review = page.locator('[data-testid^="approval-"][data-testid$="-review"]');
    await review.waitFor({ timeout: 30_000 });
    const before = prompts.length;
    await review.click();
    await page.getByTestId('approvals-empty').waitFor({ timeout: 30_000 });
    expect(prompts.length).toBe(before + 1);
    expect(prompts.at(-1)).toMatchObject({ toolName: 'read_file' });
    expect(JSON.parse(prompts.at(-1)!.argumentsJson)).toEqual({ path: '/tmp/reviewed.txt' });
    await expect.poll(() => received().filter((c) => c.tool === 'read_file').map((c) => c.args), { timeout: 30_000 }).toEqual([{ path: '/tmp/reviewed.txt' }]);
  });

  it('import from a Claude Desktop config shows each exact command line and asks about every secret-looking value', async () => {
    await page.getByTestId('nav-servers').click();
    await page.getByTestId('servers-import').click();
    await page.getByTestId('import-source').selectOption('file');
    // The page names no file: the person picks it in main's open dialog (here, its stand-in).
    fileDialogs.choose(path.join(root, 'test/fixtures/configs/claude_desktop_config.json'));
    await page.getByTestId('import-preview').click();
    const panel = page.getByTestId('import-panel');
    await panel.getByText('Will run exactly:').first().waitFor({ timeout: 30_000 });
    const text = await panel.innerText();
    expect(text).toContain(displayCommandLine('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop', '/Users/me/My Documents']));
    expect(text).toContain('GITHUB_PERSONAL_ACCESS_TOKEN');
    expect(text).not.toContain('ghp_FAKE');
    const importButton = panel.getByRole('button', { name: /^Import \d+ server/ });
    // Importing before every secret-looking value has a decision says which ones, next to each, and imports nothing.
    await importButton.click();
    await panel.locator('.field-problem').first().waitFor();
    expect(await panel.locator('.field-problem').first().innerText()).toMatch(/^Choose what to do with GITHUB_PERSONAL_ACCESS_TOKEN/);
    expect(core!.servers.definitions()).toHaveLength(1);
    const choices = panel.getByLabel(/^what to do with /);
    for (let i = 0; i < (await choices.count()); i++) await choices.nth(i).selectOption('keychain');
    await shot('import', { focus: 'import-panel' });
    await importButton.click();
    await panel.getByText(/Imported 3 servers/).waitFor({ timeout: 30_000 });
    expect(core!.servers.definitions().map((d) => d.name).sort()).toEqual(['Counting fixture', 'filesystem', 'github', 'remote-notes']);
    expect(fileDialogs.requests.map((r) => r.title)).toEqual(['Warden: choose the MCP config file (.json) to import']);
    expect(await page.content()).not.toContain('ghp_FAKE');
  });

  it('an HTTP server with OAuth is added through the form and shows its sign-in state (no token ever reaches the page)', async () => {
    await page.getByTestId('nav-servers').click();
    await page.getByTestId('servers-add').click();
    await page.getByTestId('server-form-name').fill('Remote OAuth');
    await page.getByTestId('server-form-http').check();
    await page.getByTestId('server-form-url').fill('https://mcp.example.com/mcp');
    await page.getByRole('radio', { name: 'OAuth' }).check();
    await page.getByTestId('server-form-save').click();
    await page.getByTestId('server-form').waitFor({ state: 'detached', timeout: 30_000 });
    const def = core!.servers.definitions().find((d) => d.name === 'Remote OAuth')!;
    expect(def).toMatchObject({ transport: 'http', url: 'https://mcp.example.com/mcp', auth: { kind: 'oauth' } });
    const account = (await core!.handlers['accounts:list']({ serverId: def.id })).accounts[0]!.id;
    const auth = page.getByTestId(`auth-${def.id}-${account}`);
    await auth.getByText('Not signed in').waitFor({ timeout: 30_000 });
    expect(await auth.getByRole('button', { name: 'Sign in…' }).count()).toBe(1);
  });

  it('the permission matrix stays fast with 10,000 tools: only visible rows are in the DOM, search filters locally', async () => {
    bigMatrix = Array.from({ length: 10_000 }, (_, i) => ({
      serverId: `srv-${i % 50}`,
      accountId: 'default',
      toolName: `tool_${String(i).padStart(5, '0')}`,
      serverLabel: `Server ${i % 50}`,
      accountLabel: 'Default',
      serverDescription: `Synthetic tool number ${i}`,
      serverAnnotations: null,
      mode: null,
      ruleId: null,
      effective: 'ask' as const,
      explanation: 'Ask every time: no rule',
      layer: 'default',
      pin: i % 1000 === 0 ? ('contract-changed' as const) : ('none' as const),
      orgLocked: i % 2000 === 0,
      contractHash: `h${i}`,
    }));
    try {
      await page.getByTestId('nav-chat').click();
      const started = Date.now();
      await page.getByTestId('nav-permissions').click();
      await page.getByTestId('perm-count').filter({ hasText: '10000 of 10000 tools' }).waitFor({ timeout: 30_000 });
      const shownMs = Date.now() - started;
      const domRows = await page.locator('.matrix-data').count();
      expect(domRows).toBeGreaterThan(0);
      expect(domRows).toBeLessThan(60);
      // Scrolling to the end renders the last rows (and still only a window of them).
      await page.evaluate(`(() => { const el = document.querySelector('[data-testid="perm-body"]'); el.scrollTo(0, el.scrollHeight); })()`);
      await page.getByTestId('perm-row-srv-49-default-tool_09999').waitFor({ timeout: 15_000 });
      expect(await page.locator('.matrix-data').count()).toBeLessThan(60);
      const searchStarted = Date.now();
      await page.getByTestId('perm-search').fill('tool_0424');
      await page.getByTestId('perm-count').filter({ hasText: '10 of 10000 tools' }).waitFor({ timeout: 15_000 });
      const searchMs = Date.now() - searchStarted;
      console.log(`permission matrix, 10k rows: shown in ${shownMs} ms (incl. contract round trip), search in ${searchMs} ms, ${domRows} rows in the DOM`);
      // Generous bounds for a loaded 2-core CI machine; a non-virtualized table of 10k rows takes far longer.
      expect(shownMs).toBeLessThan(10_000);
      expect(searchMs).toBeLessThan(5_000);
      await page.getByTestId('perm-search').fill('');
      await page.evaluate(`document.querySelector('[data-testid="perm-body"]').scrollTo(0, 0)`);
      await shot('permissions-10k');
    } finally {
      bigMatrix = null;
    }
  });

  it('ran with no page errors and no CSP violations', async () => {
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
