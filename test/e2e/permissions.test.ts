/**
 * The Permissions and Approvals views in a real browser (the built renderer over the test host)
 * against the REAL core and a REAL spawned stdio server that changes its tool after it was allowed
 * (test/fixtures/servers/rug-pull.ts).
 *
 * The only stand-in is main's native dialog: a prompter that records what it was shown and answers
 * as the test says. Screenshots at 1280×800 and 800×600 go to test-results/ (permissions-*.png,
 * approvals-*.png); axe-core checks each view at both sizes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import type { ApprovalPreview } from '../../electron/core/ports';
import type { ChannelName, ResponseOf } from '../../shared/ipc';
import type { AccountView, ServerView } from '../../shared/domain/servers';
import { scriptedFileDialogs } from '../host/standin-file-dialogs';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { stdioFixture } from '../integration/mcp/helpers';
import { MapKeychain } from '../integration/chat/helpers';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const resultsDir = `${root}test-results`;
let dir: string;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const prompts: ApprovalPreview[] = [];
/** Stand-in for main's native folder chooser (the person's choice is scripted). */
const fileDialogs = scriptedFileDialogs();
let answer: 'approve' | 'deny' = 'approve';
const pageErrors: string[] = [];
const consoleErrors: string[] = [];

async function call<C extends ChannelName>(channel: C, request: unknown): Promise<ResponseOf<C>> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as ResponseOf<C>;
}

/**
 * Screenshots of the page at 1280×800 and 800×600, light and dark (then back to 1280×800, light):
 * from the top, or scrolled to `focus` (a test id) when given.
 */
async function shots(name: string, focus?: string): Promise<void> {
  for (const [w, h] of [
    [1280, 800],
    [800, 600],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    if (focus) await page.getByTestId(focus).scrollIntoViewIfNeeded();
    else await page.evaluate('window.scrollTo(0, 0); document.querySelector("main")?.scrollTo?.(0, 0)');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(150);
      await page.screenshot({ path: `${resultsDir}/${name}-${w}x${h}-${scheme}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Moderate, serious or critical axe-core violations inside one view (colour contrast included), at both sizes, light and dark. */
async function axe(view: string): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  await page.evaluate(await readFile(`${root}node_modules/axe-core/axe.min.js`, 'utf8'));
  const found: Array<{ id: string; impact: string; nodes: string[] }> = [];
  for (const [w, h] of [
    [1280, 800],
    [800, 600],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForTimeout(150);
      const v = (await page.evaluate(
        `axe.run(document.querySelector('[data-testid="view-${view}"]'), { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`,
      )) as Array<{ id: string; impact: string; nodes: string[] }>;
      found.push(...v.filter((x) => x.impact === 'moderate' || x.impact === 'serious' || x.impact === 'critical').map((x) => ({ ...x, id: `${x.id} (${w}x${h} ${scheme})` })));
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
  return found;
}

/** How many Tab stops the element with this test id holds (focusable, not taken out of the Tab order, not disabled). */
async function tabStops(testId: string): Promise<number> {
  return (await page.evaluate(
    `[...document.querySelector('[data-testid="${testId}"]').querySelectorAll('button, input, select, textarea, a[href], [tabindex]')].filter((x) => x.tabIndex >= 0 && !x.disabled).length`,
  )) as number;
}

describe('Permissions and Approvals, read as a person would, against the real core', () => {
  let serverId = '';
  let work = '';
  let personal = '';
  const tool = (name: string) => `${serverId}-${work}-${name}`;

  beforeAll(async () => {
    await mkdir(resultsDir, { recursive: true });
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-permissions-'));
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-permissions',
      servers: { secrets: new MapKeychain() },
      listingsDir: path.join(dir, 'listings'),
      fileDialogs,
      gate: { prompter: { prompt: async (p) => (prompts.push(p), answer) } },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    const def = stdioFixture('ignored', 'rug-pull');
    const added = (await call('servers:add', { definition: { name: 'Weather', transport: 'stdio', command: def.command, args: def.args, env: [] }, accountLabel: 'Work' })) as ServerView;
    serverId = added.definition.id;
    work = added.accounts[0]!.id;
    personal = ((await call('accounts:add', { serverId, label: 'Personal' })) as AccountView).id;
    await call('connections:connect', { serverId, accountId: work });
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

  it('groups server → account → tool, lists the account that is not connected, shows which account is active, and keeps the mode control reachable at 800×600', async () => {
    await page.getByTestId('nav-permissions').click();
    await page.getByTestId(`perm-row-${tool('get_weather')}`).waitFor({ timeout: 30_000 });
    const server = page.getByTestId(`perm-server-${serverId}`);
    expect(await server.innerText()).toContain('Weather');
    expect(await server.innerText()).toContain('A program on this computer');
    const personalHead = page.getByTestId(`perm-account-${serverId}-${personal}`);
    expect(await personalHead.innerText()).toMatch(/Personal[\s\S]*Not connected/);
    expect(await page.getByText('Never connected: connect it in Servers to see its tools').count()).toBe(1);
    expect(await page.getByTestId(`perm-account-${serverId}-${work}-active`).innerText()).toBe('Active account');
    expect(await page.getByTestId(`perm-account-${serverId}-${personal}-active`).count()).toBe(0);
    // Names, not ids, in everything the view shows (ids only inside a row's opened details).
    const text = await page.getByTestId('view-permissions').innerText();
    expect(text).not.toContain(serverId);
    expect(text).not.toContain(work);
    // Why it asks is one click away, in the row's details.
    await page.getByTestId(`perm-details-${tool('get_weather')}`).click();
    expect(await page.getByTestId(`perm-explain-${tool('get_weather')}`).innerText()).toBe('Asks: you have not chosen a mode for get_weather on Weather (Work), and a tool Warden discovers always asks until you do.');
    await page.getByTestId(`perm-details-${tool('get_weather')}`).click();
    await shots('permissions-grouped');
    await page.setViewportSize({ width: 800, height: 600 });
    const box = await page.getByTestId(`perm-mode-${tool('get_weather')}-disabled`).boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x + box!.width).toBeLessThanOrEqual(800);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await axe('permissions')).toEqual([]);
  });

  it('one Tab stop per row: Tab goes from row to row; Left and Right choose the mode through the real core (lifting Disabled is confirmed natively); Undo puts it back', async () => {
    const mode = page.getByTestId(`perm-mode-${tool('get_weather')}`);
    // Two tools, one server and two accounts: one stop per tool, a collapse button and the modes per group.
    expect(await tabStops('perm-body')).toBe(2 + 3 * 2);
    for (const name of ['get_weather', 'next_stage']) expect(await tabStops(`perm-row-${tool(name)}`)).toBe(1);
    await page.getByTestId(`perm-mode-${tool('get_weather')}-ask`).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.closest("[data-testid^=perm-row-]")?.getAttribute("data-testid")')).toBe(`perm-row-${tool('next_stage')}`);
    await page.keyboard.press('Shift+Tab');
    const before = prompts.length;
    // Left from Ask wraps to Disabled: stricter, so no dialog.
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => mode.getAttribute('data-mode'), { timeout: 15_000 }).toBe('disabled');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Disabled');
    expect(core!.gate.policy.current().user).toMatchObject([{ scope: { kind: 'tool', toolName: 'get_weather' }, mode: 'disabled', setBy: 'person' }]);
    expect(prompts.length).toBe(before);
    // Right from Disabled wraps to Ask: lifting a Disabled asks less, so Warden's own dialog confirms it.
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => mode.getAttribute('data-mode'), { timeout: 15_000 }).toBe('ask');
    expect(prompts.length).toBe(before + 1);
    expect(core!.gate.policy.current().user).toMatchObject([{ mode: 'ask' }]);
    expect(await page.getByTestId('perm-last-change').innerText()).toMatch(/^Done: get_weather on Weather \(Work\) set to Ask\.\s*Undo$/);
    // Refused in the dialog: the control goes back to what the core holds.
    answer = 'deny';
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => prompts.length, { timeout: 15_000 }).toBe(before + 2);
    await expect.poll(() => page.getByTestId(`perm-mode-${tool('get_weather')}-ask`).getAttribute('aria-checked'), { timeout: 15_000 }).toBe('true');
    expect(core!.gate.policy.current().user).toMatchObject([{ mode: 'ask' }]);
    answer = 'approve';
    // Enter opens the row's details, where the person's own mode can be removed.
    await page.getByTestId(`perm-mode-${tool('get_weather')}-ask`).focus();
    await page.keyboard.press('Enter');
    expect(await page.getByTestId(`perm-details-body-${tool('get_weather')}`).innerText()).toContain('You set this mode.');
    await page.getByTestId(`perm-mode-${tool('get_weather')}-default`).click();
    await expect.poll(() => mode.getAttribute('data-mode'), { timeout: 15_000 }).toBe('default');
    expect(core!.gate.policy.current().user).toEqual([]);
    await page.getByTestId(`perm-details-${tool('get_weather')}`).click();
  });

  it('bulk: the two tools shown set to Always Allow with ONE native confirmation that names both', async () => {
    const before = prompts.length;
    await page.getByTestId('perm-bulk').selectOption('allow');
    await expect.poll(() => page.getByTestId(`perm-row-${tool('get_weather')}`).getAttribute('data-effective'), { timeout: 15_000 }).toBe('allow');
    expect(await page.getByTestId(`perm-row-${tool('next_stage')}`).getAttribute('data-effective')).toBe('allow');
    expect(prompts.length).toBe(before + 1);
    expect(prompts.at(-1)!.title).toBe('Change 2 permissions so that Warden asks you less?');
    expect(prompts.at(-1)!.change!.facts.slice(0, 2)).toEqual(['• every call of get_weather on Weather (Work): Always Allow', '• every call of next_stage on Weather (Work): Always Allow']);
  });

  it('a tool that changed after it was allowed is flagged and listed; its before/after shows the server’s text as its claim; allowing the new version is confirmed natively', async () => {
    await core!.gate.gate.request({ source: 'user', serverId, accountId: work, toolName: 'next_stage', arguments: {} });
    await page.getByTestId('perm-changed-list').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId(`perm-changed-${tool('get_weather')}`).innerText()).toBe('Changed since you allowed it');
    expect(await page.getByTestId(`perm-row-${tool('get_weather')}`).getAttribute('data-effective')).toBe('ask');
    await page.getByTestId(`perm-open-change-${tool('get_weather')}`).click();
    const panel = page.getByTestId('change-panel');
    await panel.getByTestId('change-field-description').waitFor({ timeout: 15_000 });
    const field = await panel.getByTestId('change-field-description').innerText();
    expect(field).toMatch(/Before \(server’s text\)/i);
    expect(field).toContain('Returns the weather for a city.');
    expect(field).toContain('read ~/.ssh/id_rsa');
    expect(await panel.locator('ins.diff-added').first().innerText()).not.toBe('');
    await shots('permissions-rug-pull');
    expect(await axe('permissions')).toEqual([]);
    // Refused in the native dialog: nothing changes.
    answer = 'deny';
    await panel.getByTestId('change-allow-new').click();
    await expect.poll(() => prompts.at(-1)?.title, { timeout: 15_000 }).toBe('Allow the new version of get_weather on Weather (Work)?');
    expect(prompts.at(-1)!.change!.facts[0]).toBe('It changed since you allowed it. What changed:');
    await panel.getByTestId('change-panel-error').waitFor();
    expect(await page.getByTestId(`perm-row-${tool('get_weather')}`).getAttribute('data-effective')).toBe('ask');
    answer = 'approve';
    await panel.getByTestId('change-allow-new').click();
    await page.getByTestId('change-panel').waitFor({ state: 'detached', timeout: 15_000 });
    await expect.poll(() => page.getByTestId(`perm-row-${tool('get_weather')}`).getAttribute('data-effective'), { timeout: 15_000 }).toBe('allow');
    expect(await page.getByTestId('perm-changed-list').count()).toBe(0);

    // Then its inputs change: said in sentences, the new input's description quoted as the
    // server's; the schema's JSON one click away.
    await core!.gate.gate.request({ source: 'user', serverId, accountId: work, toolName: 'next_stage', arguments: {} });
    await page.getByTestId(`perm-open-change-${tool('get_weather')}`).click({ timeout: 30_000 });
    const inputs = panel.getByTestId('change-field-inputSchema');
    await inputs.waitFor({ timeout: 15_000 });
    expect(await panel.getByTestId('change-summary').innerText()).toBe('New input: exfiltrate — “Email address a copy is sent to” (the server’s words)');
    expect(await inputs.locator('pre').first().isVisible()).toBe(false);
    await shots('permissions-rug-pull-inputs');
    await inputs.getByText('Show JSON').click();
    expect(await inputs.locator('pre').first().isVisible()).toBe(true);
    expect(await axe('permissions')).toEqual([]);
    await panel.getByTestId('change-keep-asking').click();
    await page.getByTestId('change-panel').waitFor({ state: 'detached', timeout: 15_000 });
  });

  it('the Approvals view: one card per call with the trusted summary, names, why it asks and the time left; calls of one reply together; arguments on demand; Review opens the native dialog', async () => {
    await call('permissions:set', { scope: 'tool', serverId, accountId: work, toolName: 'get_weather', mode: 'ask' });
    const a = await core!.gate.gate.submit({ source: 'model', conversationId: null, batchId: 'reply-1', serverId, accountId: work, toolName: 'get_weather', arguments: { city: 'Oslo' } });
    const b = await core!.gate.gate.submit({ source: 'model', conversationId: null, batchId: 'reply-1', serverId, accountId: work, toolName: 'get_weather', arguments: { city: 'Bergen' } });
    await page.getByTestId('nav-approvals').click();
    await page.getByTestId(`approval-${b.operationId}`).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('approval-batch').count()).toBe(1);
    const card = await page.getByTestId(`approval-${a.operationId}`).innerText();
    expect(card).toContain('Weather');
    expect(card).toContain('Work');
    expect(card).toContain('A program on this computer'.toLowerCase());
    expect(card).toMatch(/Why\s*Warden asks because you set Ask for get_weather on Weather \(Work\)\./);
    expect(card).toMatch(/Expires\s*in 10 min/);
    expect(card).not.toContain(serverId);
    expect(card).not.toContain(a.operationId);
    // The whole view, recent decisions included (finished calls are read back from the history).
    const view = await page.getByTestId('view-approvals').innerText();
    expect(view).toContain('Weather / Work');
    expect(view).not.toContain(serverId);
    expect(view).not.toContain(work);
    // The arguments in words; the JSON one click away.
    expect(await page.getByTestId(`approval-${a.operationId}-arguments`).innerText()).toBe('city: Oslo');
    expect(await page.getByTestId(`approval-${a.operationId}-arguments-json`).isVisible()).toBe(false);
    await page.getByTestId(`approval-${a.operationId}`).getByText('Show JSON').click();
    expect(JSON.parse(await page.getByTestId(`approval-${a.operationId}-arguments-json`).innerText())).toEqual({ city: 'Oslo' });
    // Reject asks for an optional reason, with a name of its own on each card.
    await page.getByTestId(`approval-${a.operationId}-reject`).click();
    await page.getByTestId(`approval-${b.operationId}-reject`).click();
    const names = await page.getByLabel(/^Reason for rejecting /).evaluateAll((els) => els.map((e) => (e as unknown as { getAttribute(name: string): string | null }).getAttribute('aria-label')));
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
    await shots('approvals');
    expect(await axe('approvals')).toEqual([]);
    // Review opens the native dialog with the facts; Deny there rejects.
    answer = 'deny';
    await page.getByTestId(`approval-${b.operationId}-review`).click();
    await page.getByTestId(`approval-${b.operationId}`).waitFor({ state: 'detached', timeout: 15_000 });
    const shown = prompts.at(-1)!;
    expect(shown).toMatchObject({ serverLabel: 'Weather', accountLabel: 'Work', toolName: 'get_weather', serverLocation: 'a program on this computer', requestedBy: 'the model, in a conversation' });
    await page.getByTestId(`approval-${a.operationId}-reason`).fill('wrong city');
    await page.getByTestId(`approval-${a.operationId}-reject-confirm`).click();
    await page.getByTestId('approvals-empty').waitFor({ timeout: 15_000 });
    expect((await core!.gate.gate.get(a.operationId))!.reason).toContain('wrong city');
    // Recent decisions say why each call ran or not, and how it ended, in words: never a state code.
    const recent = page.getByTestId('approvals-recent');
    await expect.poll(() => recent.innerText(), { timeout: 15_000 }).toContain('You rejected it in Approvals: wrong city.');
    expect(await recent.innerText()).toContain('You denied it in Warden’s dialog.');
    const outcomes = await recent.locator('td[data-state]').allInnerTexts();
    expect(outcomes.length).toBeGreaterThan(1);
    for (const outcome of outcomes) expect(outcome).toMatch(/^(Nothing ran|Done: the server answered|Failed: .*|Outcome unknown: .*|Running|Waiting for your approval; nothing has run)\.$/);
    await shots('approvals-recent-decisions', 'approvals-recent');
    answer = 'approve';
  });

  it('argument rules: the editor offers the tool’s fields, a folder from the native chooser, answers "would this call be allowed?" through the real gate before saving, and saving is confirmed natively', async () => {
    await page.getByTestId('nav-permissions').click();
    const id = tool('get_weather');
    await page.getByTestId(`perm-details-${id}`).click();
    const editor = page.getByTestId(`perm-constraints-${id}`);
    await editor.waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId(`perm-constraint-field-${id}`).locator('option').allInnerTexts(), { timeout: 15_000 }).toEqual(['city', 'exfiltrate']);
    // A path rule's folder comes from the native chooser.
    fileDialogs.choose('/srv/reports');
    await page.getByTestId(`perm-constraint-folder-${id}`).click();
    await expect.poll(() => page.getByTestId(`perm-constraint-value-${id}`).inputValue(), { timeout: 15_000 }).toBe('/srv/reports');
    // Always Allow when city is Oslo or Bergen; checked against a sample call first, filled in a
    // form built from the tool's schema.
    await page.getByTestId(`perm-constraint-op-${id}`).selectOption('oneOf');
    await page.getByTestId(`perm-constraint-value-${id}`).fill('Oslo\nBergen');
    const tester = page.getByTestId(`perm-constraint-tester-${id}`);
    const city = tester.getByTestId('run-field-/city');
    // A required field left empty: the error names it, nothing is asked of the gate.
    await page.getByTestId(`perm-constraint-check-${id}`).click();
    await expect.poll(() => page.getByTestId(`perm-constraint-problem-${id}`).innerText(), { timeout: 15_000 }).toMatch(/^The sample call is not complete: City: /);
    expect(await tester.getByTestId('run-problem-/city').count()).toBe(1);
    await city.fill('Oslo');
    await page.getByTestId(`perm-constraint-check-${id}`).click();
    const verdict = page.getByTestId(`perm-constraint-verdict-${id}`);
    await expect.poll(() => verdict.innerText(), { timeout: 15_000 }).toMatch(/^Would run without asking: /);
    await city.fill('Paris');
    await page.getByTestId(`perm-constraint-check-${id}`).click();
    await expect.poll(() => verdict.innerText(), { timeout: 15_000 }).toMatch(/^Would ask you first: /);
    await shots('permissions-constraint-tester', `perm-constraints-${id}`);
    // JSON is one click away, starting from what the form holds; a wrong type is named by its field.
    await page.getByTestId(`perm-constraint-json-${id}`).check();
    const sample = page.getByTestId(`perm-constraint-sample-${id}`);
    expect(JSON.parse(await sample.inputValue())).toMatchObject({ city: 'Paris' });
    await sample.fill('{"city": 5}');
    await page.getByTestId(`perm-constraint-check-${id}`).click();
    await expect.poll(() => page.getByTestId(`perm-constraint-problem-${id}`).innerText(), { timeout: 15_000 }).toMatch(/^The sample arguments: City: /);
    await sample.fill('{"city": "Paris"}');
    await page.getByTestId(`perm-constraint-check-${id}`).click();
    await expect.poll(() => verdict.innerText(), { timeout: 15_000 }).toMatch(/^Would ask you first: /);
    expect(core!.gate.policy.current().user.some((r) => r.scope.kind === 'tool-constraint')).toBe(false);
    await shots('permissions-constraint-editor', `perm-constraints-${id}`);
    expect(await axe('permissions')).toEqual([]);
    const before = prompts.length;
    await page.getByTestId(`perm-constraint-save-${id}`).click();
    await expect.poll(() => prompts.length, { timeout: 15_000 }).toBe(before + 1);
    expect(prompts.at(-1)!.title).toBe('Always allow get_weather on Weather (Work)?');
    expect(prompts.at(-1)!.change!.effect).toBe('Warden will stop asking before every call of get_weather on Weather (Work) when city is one of "Oslo", "Bergen": they run as soon as the model asks.');
    await expect.poll(() => editor.innerText(), { timeout: 15_000 }).toContain('Always Allow when city is one of "Oslo", "Bergen"');
  });

  it('a conversation override is set from the tool’s details: allowing it there is confirmed natively (a refusal changes nothing), disabling it there is not, and it only applies in that conversation', async () => {
    const conversation = (await call('chat:create', {})) as { id: string };
    await call('chat:rename', { conversationId: conversation.id, title: 'Trip planning' });
    await page.getByTestId('nav-permissions').click();
    const id = tool('get_weather');
    // Opened afresh, so it lists the conversation just made.
    if (await page.getByTestId(`perm-details-body-${id}`).count()) await page.getByTestId(`perm-details-${id}`).click();
    await page.getByTestId(`perm-details-${id}`).click();
    const box = page.getByTestId(`perm-conv-${id}`);
    await box.waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId(`perm-conv-pick-${id}`).locator('option').allInnerTexts(), { timeout: 15_000 }).toContain('Trip planning');
    await page.getByTestId(`perm-conv-pick-${id}`).selectOption({ label: 'Trip planning' });
    expect(await box.innerText()).toContain('No conversation has its own setting for this tool.');

    // Refused in the native dialog: nothing changes.
    answer = 'deny';
    let before = prompts.length;
    await page.getByTestId(`perm-conv-allow-${id}`).click();
    await expect.poll(() => prompts.length, { timeout: 15_000 }).toBe(before + 1);
    expect(prompts.at(-1)!.title).toBe('Always allow get_weather on Weather (Work) in the conversation “Trip planning”?');
    expect(prompts.at(-1)!.change!.facts).toContain('It ends with that conversation.');
    await expect.poll(() => page.getByTestId('perm-last-change').innerText(), { timeout: 15_000 }).toMatch(/^Nothing changed: /);
    expect(core!.gate.policy.current().conversation).toEqual([]);

    answer = 'approve';
    before = prompts.length;
    await page.getByTestId(`perm-conv-allow-${id}`).click();
    await page.getByTestId(`perm-conv-override-${conversation.id}`).waitFor({ timeout: 15_000 });
    expect(prompts.length).toBe(before + 1);
    expect(await page.getByTestId(`perm-conv-override-${conversation.id}`).innerText()).toMatch(/^Always Allow in “Trip planning”/);
    expect(core!.gate.policy.current().conversation).toMatchObject([{ conversationId: conversation.id, serverId, accountId: work, toolName: 'get_weather', mode: 'allow' }]);

    // Disabling there asks less of nobody: no dialog. It applies in that conversation only.
    before = prompts.length;
    await page.getByTestId(`perm-conv-disable-${id}`).click();
    await expect.poll(() => page.getByTestId(`perm-conv-override-${conversation.id}`).innerText(), { timeout: 15_000 }).toMatch(/^Disabled in “Trip planning”/);
    expect(prompts.length).toBe(before);
    const inThere = await call('permissions:check', { serverId, accountId: work, toolName: 'get_weather', conversationId: conversation.id, arguments: { city: 'Oslo' } });
    const elsewhere = await call('permissions:check', { serverId, accountId: work, toolName: 'get_weather', conversationId: null, arguments: { city: 'Oslo' } });
    expect(inThere.outcome).toBe('deny');
    expect(elsewhere.outcome).not.toBe('deny');
    expect(await page.getByTestId(`perm-row-${id}`).innerText()).toContain('1 conversation setting');
    await shots('permissions-conversation-override', `perm-conv-${id}`);
    expect(await axe('permissions')).toEqual([]);

    // Removing a Disabled lifts a restriction: confirmed natively too.
    before = prompts.length;
    await page.getByTestId(`perm-conv-remove-${conversation.id}`).click();
    await page.getByTestId(`perm-conv-override-${conversation.id}`).waitFor({ state: 'detached', timeout: 15_000 });
    expect(prompts.length).toBe(before + 1);
    expect(core!.gate.policy.current().conversation).toEqual([]);
  });

  it('making an account active says so; removing one needs a confirmation that says what is deleted', async () => {
    await page.getByTestId('nav-permissions').click();
    const prefix = `perm-account-${serverId}-${personal}`;
    // Its actions are in its details, one click on its name away.
    await page.getByTestId(`perm-account-details-${serverId}-${personal}`).click();
    await page.getByTestId(`${prefix}-activate`).click();
    await expect.poll(() => page.getByTestId('perm-last-change').innerText(), { timeout: 15_000 }).toBe('Personal is now the active account of Weather: its tools are the ones offered. Nothing was waiting for approval on the other accounts.');
    await page.getByTestId(`${prefix}-active`).waitFor({ timeout: 15_000 });
    await call('permissions:set', { scope: 'server', serverId, accountId: personal, mode: 'disabled' });
    await page.getByTestId(`${prefix}-remove`).click();
    const confirm = page.getByTestId(`${prefix}-confirm`);
    await confirm.waitFor();
    expect(await confirm.innerText()).toContain('Its 1 permission rule is deleted.');
    await shots('permissions-remove-account');
    await page.getByTestId(`${prefix}-cancel`).click();
    expect((await call('accounts:list', { serverId })).accounts).toHaveLength(2);
    await page.getByTestId(`${prefix}-remove`).click();
    await page.getByTestId(`${prefix}-confirm-remove`).click();
    await page.getByTestId(prefix).waitFor({ state: 'detached', timeout: 15_000 });
    expect((await call('accounts:list', { serverId })).accounts.map((x) => x.label)).toEqual(['Work']);
  });

  it('ran with no page errors and no CSP violations', async () => {
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
