/**
 * The Servers list, servers that start themselves, and progress, in a real browser against the
 * REAL core with a real settings file (as an earlier Warden wrote it: no enabled switch) and REAL
 * spawned stdio servers (test/fixtures/servers/slow.ts), one of which cannot start.
 *
 * A person opens Warden: the list shows every server connecting at once, the slow one with an
 * elapsed time, the one that cannot start failing with its reason in one sentence (the same on its
 * page) and saying it is not retried, and the summary line. They search, turn a server off and on, restart one, open one into
 * its details (definition, accounts, tools with their mode, instructions collapsed, logs), run a
 * long tool and watch its progress bar and message, and stop it: it ends "outcome unknown".
 *
 * Screenshots: test-results/servers-*.png at 1280×800 and 800×600, light and dark. axe-core: no
 * moderate, serious or critical violations in the list and the details, in both colour schemes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import { MapKeychain } from '../integration/chat/helpers';
import { stdioFixture } from '../integration/mcp/helpers';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const resultsDir = `${root}test-results`;
const MISSING = 'warden-e2e-no-such-command';

let dir: string;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const pageErrors: string[] = [];
const consoleErrors: string[] = [];

function writeSettings(): void {
  const servers = [
    { ...stdioFixture('notes', 'slow', [{ name: 'FIXTURE_SLOW_START_MS', value: '4000' }]), name: 'Notes (slow to start)' },
    { ...stdioFixture('builds', 'slow'), name: 'Builds' },
    { ...stdioFixture('reports', 'slow'), name: 'Reports' },
    { id: 'files', name: 'Files', transport: 'stdio', command: MISSING, args: ['--root', '/home/me'], env: [] },
  ];
  const doc = {
    schemaVersion: 1,
    servers,
    accounts: servers.map((s) => ({ id: `${s.id}-default`, serverId: s.id, label: s.id === 'builds' ? 'Work' : 'Default' })),
    preferences: {},
  };
  writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(doc, null, 2));
}

/** Both window sizes and both colour schemes of what is on screen now. */
async function shots(name: string, focusTestId?: string): Promise<void> {
  for (const [w, h] of [
    [1280, 800],
    [800, 600],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    if (focusTestId) await page.getByTestId(focusTestId).scrollIntoViewIfNeeded();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: `${resultsDir}/servers-${name}-${w}x${h}-${scheme}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** axe-core on the Servers view in both colour schemes: moderate, serious or critical violations, if any. */
async function axeSerious(): Promise<unknown[]> {
  await page.evaluate(await readFile(`${root}node_modules/axe-core/axe.min.js`, 'utf8'));
  const found: unknown[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const violations = (await page.evaluate(
      `axe.run(document.querySelector('[data-testid="view-servers"]'), { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
    )) as Array<{ impact: string }>;
    found.push(...violations.filter((v) => v.impact === 'moderate' || v.impact === 'serious' || v.impact === 'critical').map((v) => ({ scheme, ...v })));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

describe('the Servers view in a real browser against the real core and real stdio servers', () => {
  beforeAll(async () => {
    await mkdir(resultsDir, { recursive: true });
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-servers-'));
    writeSettings();
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-servers',
      platform: 'e2e-test-os',
      servers: { settingsStore: openConfSettingsStore(dir), secrets: new MapKeychain() },
      // Stand-in for main's native dialog: approves (here: the Always Allow for the slow tools).
      gate: { prompter: { prompt: async () => 'approve' } },
      autoConnect: true,
      autostartPolicy: { baseDelayMs: 20_000, maxDelayMs: 60_000, maxAttempts: 6 },
    });
    ({ host, browser, page } = await openAppInBrowser(core, { consoleErrors, pageErrors }));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('at launch every server connects at once: a slow connect shows its elapsed time, a missing program its reason and that it is not retried, and the summary names it', async () => {
    await page.getByTestId('nav-servers').click();
    // The slow server is still connecting after a second: an indeterminate bar with its elapsed time.
    const connecting = page.getByTestId('server-connecting-notes');
    await connecting.waitFor({ timeout: 30_000 });
    expect(await connecting.getAttribute('data-determinate')).toBe('false');
    expect(await connecting.innerText()).toMatch(/\d+ s/);
    await page.locator('[data-testid="server-row-files"][data-state="failed"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('server-state-files').innerText()).toBe('Failed, not retrying: press Connect to try again');
    expect(await page.getByTestId('server-reason-files').innerText()).toBe(`Warden could not start ${MISSING}: no such program. Check the command in the server's settings.`);
    expect(await page.getByTestId('server-restart-files').innerText()).toBe('Connect');
    await shots('launch');

    await page.locator('[data-testid="server-row-notes"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid="server-row-builds"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid="server-row-reports"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByTestId('servers-summary').innerText(), { timeout: 15_000 }).toBe('3 of 4 connected — Files failed, not retrying');
    expect(await page.getByTestId('server-tools-builds').innerText()).toBe('2 tools');
    expect(await page.getByTestId('server-row-builds').innerText()).toContain('Work');
    await shots('list');
    expect(await axeSerious()).toEqual([]);
  });

  it('a missing program reads the same on its page as in the list, says it is not retried, and is tried once per Connect', async () => {
    const listed = await page.getByTestId('server-reason-files').innerText();
    await page.getByTestId('server-open-files').click();
    await page.getByTestId('server-files').waitFor();
    const problem = page.getByTestId('account-files-files-default-problem');
    expect(await problem.innerText()).toBe(listed);
    expect(await problem.getAttribute('data-kind')).toBe('command-not-found');
    expect(await page.getByTestId('server-files-not-retrying').innerText()).toBe('Not retrying; press Connect to try again.');
    // Long past the schedule this core was given (20 s, doubling): still the one attempt, and no countdown.
    const failures = () => core!.connections.logLines('files', 'files-default').lines.filter((l) => l.text.startsWith('connect failed')).length;
    expect(failures()).toBe(1);
    expect(await page.getByTestId('view-servers').innerText()).not.toMatch(/retrying in/i);
    await shots('not-retrying', 'server-files');
    expect(await axeSerious()).toEqual([]);
    await page.getByTestId('server-restart-files').click();
    await expect.poll(failures, { timeout: 15_000 }).toBe(2);
    expect(await page.getByTestId('server-files-not-retrying').innerText()).toBe('Not retrying; press Connect to try again.');
    await page.getByTestId('server-details-back').click();
  });

  it('search narrows the list; the switch turns a server off and on in one click, saved; Restart starts it again', async () => {
    await page.getByTestId('servers-search').fill('fail');
    await expect.poll(() => page.locator('.server-row').count()).toBe(1);
    expect(await page.getByTestId('servers-search-count').innerText()).toBe('1 of 4 servers');
    await page.getByTestId('servers-search').fill('');

    await page.getByTestId('server-enabled-reports').click();
    await page.locator('[data-testid="server-row-reports"][data-state="turned_off"]').waitFor({ timeout: 15_000 });
    expect(core!.autostart.isEnabled('reports')).toBe(false);
    await expect.poll(() => page.getByTestId('servers-summary').innerText()).toContain('(1 turned off)');
    await page.getByTestId('server-enabled-reports').click();
    await page.locator('[data-testid="server-row-reports"][data-state="connected"]').waitFor({ timeout: 60_000 });

    const before = core!.connections.connection('builds', 'builds-default')!.pid;
    await page.getByTestId('server-restart-builds').click();
    await page.locator('[data-testid="server-row-builds"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await expect.poll(() => core!.connections.connection('builds', 'builds-default')!.pid).not.toBe(before);
    await page.getByTestId('server-disconnect-builds').click();
    await page.locator('[data-testid="server-row-builds"][data-state="not_connected"]').waitFor({ timeout: 15_000 });
    await page.getByTestId('server-restart-builds').click();
    await page.locator('[data-testid="server-row-builds"][data-state="connected"]').waitFor({ timeout: 60_000 });
  });

  it('a server opens into its details: definition, account, tools with their mode, logs; a long call shows a bar with the server’s message, and Stop ends it outcome unknown', async () => {
    for (const tool of ['steps', 'quiet']) {
      const set = await core!.handlers['permissions:set']({ scope: 'tool', serverId: 'builds', accountId: null, toolName: tool, mode: 'allow' });
      expect(set.ruleId).toBeTruthy();
    }
    await page.getByTestId('server-open-builds').click();
    await page.getByTestId('server-builds').waitFor();
    const prefix = 'account-builds-builds-default';
    await page.getByTestId(`${prefix}-tools`).getByTestId('tool-steps').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('tool-mode-steps').innerText(), { timeout: 15_000 }).toBe('Always Allow');
    expect(await page.getByTestId('server-builds-commandline').innerText()).toContain('slow.ts');
    // The server's instructions: collapsed at first, then rendered as markdown, raw HTML as text.
    const instructions = page.getByTestId(`${prefix}-instructions`);
    expect(await instructions.getAttribute('open')).toBeNull();
    await instructions.locator('summary').click();
    expect(await instructions.locator('strong').allInnerTexts()).toContain('a while');
    expect(await instructions.locator('b').count()).toBe(0);
    expect(await instructions.innerText()).toContain('<b>raw html stays text</b>');
    await page.getByTestId(`${prefix}-logs-toggle`).click();
    await page.getByTestId(`${prefix}-logs`).waitFor();
    await shots('details');
    expect(await axeSerious()).toEqual([]);

    await page.getByTestId('tool-run-steps').click();
    await page.getByTestId('run-form-json-toggle').check();
    await page.getByTestId('run-form-arguments').fill(JSON.stringify({ steps: 40, stepMs: 250 }));
    await page.getByTestId('run-form-submit').click();
    const bar = page.getByTestId('run-form-progress-bar');
    await bar.waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="run-form-progress-bar"][data-determinate="true"]').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId('run-form-progress-bar-message').innerText(), { timeout: 15_000 }).toMatch(/Step ([6-9]|[1-3]\d) of 40/);
    expect(await bar.innerText()).toMatch(/\d+ of 40 · \d+ s/);
    await shots('progress', 'run-form-progress');

    await page.getByTestId('run-form-stop').click();
    await page.locator('[data-testid="run-form-state"][data-state="outcome_unknown"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('run-form-progress').count()).toBe(0);
    // What to do about it is said where the call is, with the way to where it is settled.
    // Never "nothing happened": the call had left when it was stopped.
    expect(await page.getByTestId('run-form-unknown').innerText()).toMatch(/can't tell whether the server did it.*won't send it again on its own/s);
    expect(await page.getByTestId('view-servers').innerText()).not.toMatch(/nothing happened/i);
    await shots('outcome-unknown', 'run-form-unknown');
    expect(await axeSerious()).toEqual([]);
    await page.getByTestId('run-form-unknown-open').click();
    const settle = page.locator('[data-testid^="recovery-"]').filter({ has: page.locator('h2', { hasText: /^steps on / }) });
    await settle.first().waitFor({ timeout: 15_000 });
    await page.getByTestId('nav-servers').click();
    if ((await page.getByTestId('server-details-back').count()) > 0) await page.getByTestId('server-details-back').click();
    await page.getByTestId('server-open-builds').click();
    await page.getByTestId(`${prefix}-tools`).getByTestId('tool-steps').waitFor({ timeout: 30_000 });
  });

  it('a call with no progress from the server shows an indeterminate bar with the elapsed time', async () => {
    await page.getByTestId('tool-run-steps').click();
    await page.getByTestId('tool-run-quiet').click();
    await page.getByTestId('run-form-json-toggle').check();
    await page.getByTestId('run-form-arguments').fill(JSON.stringify({ ms: 2500 }));
    await page.getByTestId('run-form-submit').click();
    const bar = page.locator('[data-testid="run-form-progress-bar"][data-determinate="false"]');
    await bar.waitFor({ timeout: 30_000 });
    expect(await bar.innerText()).toMatch(/^\d+ s$/);
    await page.locator('[data-testid="run-form-state"][data-state="succeeded"]').waitFor({ timeout: 30_000 });
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
  it('removing an account from a server’s details needs the confirmation that says what is deleted (its secrets, its rules), and Keep it keeps it', async () => {
    const personal = await core!.handlers['accounts:add']({ serverId: 'reports', label: 'Personal' });
    await core!.handlers['permissions:set']({ scope: 'server', serverId: 'reports', accountId: personal.id, mode: 'disabled' });
    await page.getByTestId('nav-servers').click();
    if (await page.getByTestId('server-details-back').count()) await page.getByTestId('server-details-back').click();
    await page.getByTestId('server-open-reports').click();
    const prefix = `account-reports-${personal.id}`;
    await page.getByTestId(`${prefix}-remove`).click();
    const confirm = page.getByTestId(`${prefix}-confirm`);
    await confirm.waitFor({ timeout: 15_000 });
    const text = await confirm.innerText();
    expect(text).toContain('Remove the account Personal of Reports?');
    expect(text).toContain('It has no secrets in your keychain.');
    expect(text).toContain('Its 1 permission rule is deleted.');
    // Nothing is deleted by the first click.
    expect((await core!.handlers['accounts:list']({ serverId: 'reports' })).accounts.map((a) => a.label)).toEqual(['Default', 'Personal']);
    await shots('remove-account', `${prefix}-confirm`);
    expect(await axeSerious()).toEqual([]);
    await page.getByTestId(`${prefix}-cancel`).click();
    expect(await confirm.count()).toBe(0);
    expect((await core!.handlers['accounts:list']({ serverId: 'reports' })).accounts).toHaveLength(2);
    await page.getByTestId(`${prefix}-remove`).click();
    await page.getByTestId(`${prefix}-confirm-remove`).click();
    await page.getByTestId(prefix).waitFor({ state: 'detached', timeout: 15_000 });
    expect((await core!.handlers['accounts:list']({ serverId: 'reports' })).accounts.map((a) => a.label)).toEqual(['Default']);
    expect(core!.gate.policy.current().user.filter((r) => 'accountId' in r.scope && r.scope.accountId === personal.id)).toEqual([]);
  });

  it('Use in chats makes a second account the one chats use, and says so', async () => {
    const home = await core!.handlers['accounts:add']({ serverId: 'builds', label: 'Home' });
    await page.getByTestId('nav-servers').click();
    if (await page.getByTestId('server-details-back').count()) await page.getByTestId('server-details-back').click();
    await page.getByTestId('server-open-builds').click();
    const prefix = `account-builds-${home.id}`;
    await page.getByTestId(`${prefix}-use-in-chats`).click();
    await page.getByTestId(`${prefix}-in-chats`).waitFor({ timeout: 15_000 });
    expect(await page.getByTestId(`${prefix}-in-chats`).innerText()).toBe('Chats now use Home for Builds, except a conversation where you chose another account.');
    // Every conversation without a choice of its own, not one literally named "default".
    expect(core!.gate.policy.current().activeAccounts).toEqual([expect.objectContaining({ serverId: 'builds', conversationId: null, accountId: home.id })]);
    await shots('use-in-chats', `${prefix}-in-chats`);
    expect(await axeSerious()).toEqual([]);
    // Back to the first account: only its panel says so.
    await page.getByTestId('account-builds-builds-default-use-in-chats').click();
    await page.getByTestId('account-builds-builds-default-in-chats').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId(`${prefix}-in-chats`).count()).toBe(0);
    await core!.handlers['accounts:remove']({ accountId: home.id });
  });

  it('a tool whose name hides characters is listed with them written out, says Warden never calls it, and has no Run…', async () => {
    const def = stdioFixture('ignored', 'hostile-schema');
    const added = await core!.handlers['servers:add']({ definition: { name: 'Odd names', transport: 'stdio', command: def.command, args: def.args, env: [] } });
    const serverId = added.definition.id;
    // Saved while Warden runs, it connects by itself.
    await page.getByTestId('nav-servers').click();
    if (await page.getByTestId('server-details-back').count()) await page.getByTestId('server-details-back').click();
    await page.getByTestId(`server-open-${serverId}`).click();
    const name = 'read\\u000aTool: safe';
    const note = page.getByTestId(`tool-${name}-unusable`);
    await note.waitFor({ timeout: 30_000 });
    expect(await page.getByTestId(`tool-${name}`).locator('.tool-name').innerText()).toBe(name);
    expect(await note.innerText()).toMatch(/^Warden never calls this tool: its name or a field name holds hidden characters/);
    expect(await page.getByTestId(`tool-mode-${name}`).count()).toBe(0);
    expect(await page.getByTestId(`tool-run-${name}`).count()).toBe(0);
    expect(await page.getByTestId('tool-run-read').count()).toBe(1);
    await shots('unusable-tool', `tool-${name}`);
    expect(await axeSerious()).toEqual([]);
  });
});
