/**
 * The permission matrix read as a person would, on the built-in demo server with its starting
 * rules, in a real browser against the REAL core: each fact once (one mode control per row, the
 * reason one click or Enter away), "you set" only for what the person set, one Tab stop per row
 * with Left and Right choosing the mode, and at least six rows on an 800×600 screen.
 *
 * The only stand-in is main's native dialog (a prompter that records what it was shown and
 * approves). Screenshots at 1280×800 and 800×600, light and dark, go to test-results/
 * (permission-matrix-*.png); axe-core runs on each.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import type { ApprovalPreview } from '../../electron/core/ports';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { look } from '../helpers/look';
import { MapKeychain } from '../integration/chat/helpers';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { openLedgerForApp } from '../../electron/core/ledger';

let core: WardenCore | undefined;
let ledgerDir = '';
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const prompts: ApprovalPreview[] = [];
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
let serverId = '';
let accountId = '';
const row = (toolName: string) => `${serverId}-${accountId}-${toolName}`;

/** How many Tab stops the element with this test id holds (focusable, in the Tab order, not disabled). */
async function tabStops(testId: string): Promise<number> {
  return (await page.evaluate(
    `[...document.querySelector('[data-testid="${testId}"]').querySelectorAll('button, input, select, textarea, a[href], [tabindex]')].filter((x) => x.tabIndex >= 0 && !x.disabled).length`,
  )) as number;
}

/** How many tool rows lie wholly inside the window. */
async function rowsInWindow(): Promise<number> {
  return (await page.evaluate(
    `[...document.querySelectorAll('[data-testid^="perm-row-"]')].filter((el) => { const r = el.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }).length`,
  )) as number;
}

describe('the permission matrix says each fact once', () => {
  beforeAll(async () => {
    // The activity log on disk, as the app keeps it: the screenshots show what a person sees.
    ledgerDir = await mkdtemp(path.join(tmpdir(), 'warden-e2e-matrix-'));
    core = createCore({
      ledger: (await openLedgerForApp(ledgerDir)).ledger,
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-permission-matrix',
      offerDemoServer: true,
      servers: { secrets: new MapKeychain() },
      gate: { prompter: { prompt: async (p) => (prompts.push(p), 'approve') } },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    expect(await core.demoOffered).toBe('added');
    ({ host, browser, page } = await openAppInBrowser(core, errors));
    await page.getByTestId('nav-permissions').click();
    await page.getByTestId('perm-demo-rules').waitFor({ timeout: 30_000 });
    const seeded = core.gate.policy.current().user.find((r) => r.setBy === 'demo')!.scope as { serverId: string; accountId: string };
    ({ serverId, accountId } = seeded);
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => rm(ledgerDir, { recursive: true, force: true }),
    );
  });

  it('one mode control per row; the demo’s starting rules are said once, as the demo’s, and never as "you set"', async () => {
    const demo = core!.gate.policy.current().user.filter((r) => r.setBy === 'demo');
    expect(demo.length).toBe(4);
    // One line above the table says whose rules these are.
    expect(await page.getByTestId('perm-demo-rules').count()).toBe(1);
    expect(await page.getByTestId('perm-demo-rules').innerText()).toBe(
      'The demo server starts with its own rules: notes_list Always Allow, notes_add Ask, notes_delete Disabled, read_inbox Always Allow. Change one and it is yours.',
    );
    const view = page.getByTestId('view-permissions');
    expect(await view.innerText()).not.toContain('you set');
    // Each row: its name and one mode control, nothing else saying the mode again.
    const rows = page.locator('[data-testid^="perm-row-"]');
    expect(await rows.count()).toBe(6);
    for (const r of await rows.all()) {
      expect(await r.getByRole('radiogroup').count()).toBe(1);
      expect(await r.locator('.pill-decision-allow, .pill-decision-ask, .pill-decision-deny').count()).toBe(0);
    }
    const del = page.getByTestId(`perm-mode-${row('notes_delete')}`);
    expect(await del.getByRole('radio', { checked: true }).innerText()).toBe('Disabled');
    // The mode is read as Disabled everywhere, never "Deny".
    expect(await view.innerText()).not.toMatch(/\bDeny\b/);
    // Why, one click away: the demo's rule, in words.
    await page.getByTestId(`perm-details-${row('notes_delete')}`).click();
    const why = await page.getByTestId(`perm-details-body-${row('notes_delete')}`).innerText();
    expect(why).toContain('Disabled: the demo’s starting rules set Disabled for notes_delete');
    expect(why).toContain('This mode is one of the demo’s starting rules; change it and it is yours.');
    expect(why).not.toContain('you set');
    await look(page, 'permission-matrix-demo-details', { focus: `perm-details-body-${row('notes_delete')}`, scope: '[data-testid="view-permissions"]' });
    await page.getByTestId(`perm-details-${row('notes_delete')}`).click();
  });

  it('at 800×600 at least six rows are on the screen, and the matrix looks right at both sizes and themes', async () => {
    await look(page, 'permission-matrix', { scope: '[data-testid="view-permissions"]' });
    await page.setViewportSize({ width: 800, height: 600 });
    try {
      await page.evaluate(`document.querySelector('.content')?.scrollTo(0, 0)`);
      expect(await rowsInWindow()).toBeGreaterThanOrEqual(6);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('one Tab stop per row; Left and Right choose the mode through the real core, and the rule becomes the person’s', async () => {
    // Six tools, and one server and one account with a collapse button and the modes each.
    expect(await tabStops('perm-body')).toBe(6 + 2 * 2);
    for (const name of ['notes_list', 'read_inbox', 'notes_add', 'notes_delete', 'files_read']) expect(await tabStops(`perm-row-${row(name)}`)).toBe(1);
    await page.getByTestId(`perm-mode-${row('notes_add')}-ask`).focus();
    // Right from Ask is Always Allow: Warden's own dialog confirms it.
    const before = prompts.length;
    await page.keyboard.press('ArrowRight');
    const mode = page.getByTestId(`perm-mode-${row('notes_add')}`);
    await expect.poll(() => mode.getAttribute('data-mode'), { timeout: 15_000 }).toBe('allow');
    expect(prompts.length).toBe(before + 1);
    expect(prompts.at(-1)!.title).toBe('Always allow notes_add on Warden demo (built-in) (Default)?');
    expect(core!.gate.policy.current().user.find((r) => r.scope.kind === 'tool' && r.scope.toolName === 'notes_add')).toMatchObject({ mode: 'allow', setBy: 'person' });
    expect(await page.evaluate('document.activeElement.getAttribute("data-testid")')).toBe(`perm-mode-${row('notes_add')}-allow`);
    // Right again is Disabled: stricter, no dialog.
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => mode.getAttribute('data-mode'), { timeout: 15_000 }).toBe('disabled');
    expect(prompts.length).toBe(before + 1);
    // Now it is the person's: the line above the table no longer counts it, and its reason says "you set".
    await expect.poll(() => page.getByTestId('perm-demo-rules').innerText(), { timeout: 15_000 }).not.toContain('notes_add');
    await page.keyboard.press('Enter');
    expect(await page.getByTestId(`perm-explain-${row('notes_add')}`).innerText()).toMatch(/^Disabled: you set Disabled for notes_add/);
    // With its details closed again, Tab leaves the row for the next row's mode, not for another control of the same row.
    await page.keyboard.press('Enter');
    await page.getByTestId(`perm-details-body-${row('notes_add')}`).waitFor({ state: 'detached' });
    await page.keyboard.press('Tab');
    const next = (await page.evaluate('document.activeElement.closest("[data-testid^=perm-row-]")?.getAttribute("data-testid")')) as string;
    expect(next).toMatch(/^perm-row-/);
    expect(next).not.toBe(`perm-row-${row('notes_add')}`);
  });

  it('ran with no page errors', () => {
    expect(errors.pageErrors).toEqual([]);
    expect(errors.consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
