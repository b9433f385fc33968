/**
 * Every view as a new user first sees it, and the frame around them: the built renderer in
 * headless Chromium over the test host, against the REAL core with a REAL ledger on disk, a real
 * settings file and the real keychain.
 *
 * Each screen goes through `look` (test/helpers/look.ts): screenshots at 1280×800 and 800×600 in
 * the light and the dark theme, axe-core with no moderate, serious or critical violation, and nothing cut
 * off. On top of that: every empty state says what to do next, the sidebar collapses and
 * remembers it, the themes really differ, Settings changes what the core does (approval expiry,
 * the default mode, with the native confirmation standing in for main's dialog), "Check now"
 * verifies the ledger on disk, and Recovery shows a call that was running when Warden stopped.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { LedgerService } from '../../electron/core/ledger/service';
import type { Appearance } from '../../electron/core/appearance/theme';
import type { ApprovalPreview } from '../../electron/core/ports';
import { KeytarSecretStore } from '../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import { journalEntry } from '../../shared/domain/journal-events';
import { startTestHost, type TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { waitUntilLive } from '../helpers/chromium';
import { look } from '../helpers/look';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const secrets = new KeytarSecretStore({ service: `warden-e2e-screens-${randomUUID()}` });

let dir: string;
let core: WardenCore | undefined;
let ledger: LedgerService | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const prompts: ApprovalPreview[] = [];
const answer = { next: 'approve' as 'approve' | 'deny' };
/**
 * Stands in for Electron's nativeTheme: the preference main applies becomes the page's
 * prefers-color-scheme, as `nativeTheme.themeSource` does in the app ("system" is light here).
 */
let drawnDark = false;
const appearance: Appearance = {
  apply(preference) {
    drawnDark = preference === 'dark';
    void page?.emulateMedia({ colorScheme: drawnDark ? 'dark' : 'light' });
  },
  isDark: () => drawnDark,
  onChange: () => () => {},
};
const pageErrors: string[] = [];
const consoleErrors: string[] = [];

/** Starts a core on the folder's settings file and ledger, as the app does on each launch. */
async function startCore(): Promise<WardenCore> {
  ledger = await LedgerService.open({ dir: path.join(dir, 'ledger') });
  const c = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: '0.1.0-e2e-screens',
    platform: 'e2e-test-os',
    dataFolder: dir,
    appearance,
    ledger,
    servers: { settingsStore: openConfSettingsStore(dir), secrets },
    gate: { prompter: { prompt: async (p) => (prompts.push(p), answer.next) } },
    connections: { reconnect: { maxAttempts: 0 } },
  });
  await c.recovered;
  return c;
}

/** Opens a view from the sidebar and waits for it. */
async function open(view: string): Promise<void> {
  await page.getByTestId(`nav-${view}`).click();
  await page.getByTestId(`view-${view}`).waitFor();
}

describe('every view as a new user sees it, in both themes and at both sizes', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-screens-'));
    core = await startCore();
    ({ host, browser, page } = await openAppInBrowser(core, { consoleErrors, pageErrors }));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => ledger?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
      async () => {
        for (const key of await secrets.keys('').catch(() => [] as string[])) await secrets.delete(key).catch(() => undefined);
      },
    );
  });

  it('the look helper really catches clipped text, content past the window edge, unlabelled controls and moderate findings such as skipped heading levels', async () => {
    await open('chat');
    await page.evaluate(`(() => {
      const view = document.querySelector('[data-testid="view-chat"]');
      const probe = document.createElement('div');
      probe.id = 'look-probe';
      probe.innerHTML = '<span class="cell-ellipsis-probe">' + 'a very long explanation '.repeat(20) + '</span><input type="text"><div class="wide-probe">wide</div><h6>A heading that skips levels</h6>';
      view.appendChild(probe);
      const clip = probe.querySelector('.cell-ellipsis-probe');
      clip.style.cssText = 'display:block;width:80px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap';
      probe.querySelector('.wide-probe').style.cssText = 'position:relative;width:3000px';
    })()`);
    try {
      const report = await look(page, 'screens-look-probe', { expectProblems: true });
      const layout = report.layout.flatMap((l) => l.problems).join('\n');
      expect(layout).toContain('text cut off with an ellipsis');
      expect(layout).toMatch(/sticks out past the right edge|scrolls sideways/);
      expect(report.axe.flatMap((a) => a.violations.map((v) => v.id))).toContain('label');
      // Moderate findings count too: a heading that skips levels is one.
      expect(report.axe.flatMap((a) => a.violations.map((v) => v.id))).toContain('heading-order');
      expect(report.axe.map((a) => a.scheme).sort()).toEqual(['dark', 'dark', 'light', 'light']);
    } finally {
      await page.evaluate(`document.getElementById('look-probe')?.remove()`);
    }
  });

  it('the first start opens on Chat with a welcome offering three next steps, which can be dismissed for good', async () => {
    expect(await page.getByTestId('nav-chat').getAttribute('aria-current')).toBe('page');
    const welcome = page.getByTestId('chat-welcome');
    await welcome.waitFor();
    expect(await welcome.locator('.welcome-steps h2').allInnerTexts()).toEqual(['Try it offline in one click', 'Add or import your own servers', 'Add a model']);
    await look(page, 'screens-chat-welcome');
    // "Add a model" opens Settings at its Models section.
    await page.getByTestId('chat-welcome-models').click();
    await page.getByTestId('view-settings').waitFor();
    await expect.poll(() => page.evaluate(`document.activeElement?.id`)).toBe('settings-models-title');
    await open('chat');
    await page.getByTestId('chat-welcome-servers').click();
    await page.getByTestId('view-servers').waitFor();
    await open('chat');
    await page.getByTestId('chat-welcome-dismiss').click();
    await page.getByTestId('chat-no-conversation').waitFor();
    expect(await page.getByTestId('chat-no-conversation').getByRole('button').allInnerTexts()).toEqual(['Start an empty conversation', 'Try the demo: summarise my inbox']);
    // With no conversation yet there is nothing "on the left" to pick.
    expect(await page.getByTestId('chat-no-conversation').innerText()).toContain('You have no conversations yet');
    await look(page, 'screens-chat-dismissed');
    await page.reload();
    await waitUntilLive(page);
    await page.getByTestId('chat-no-conversation').waitFor();
    expect(await page.getByTestId('chat-welcome').count()).toBe(0);
  });

  it('Servers, Permissions, Approvals, Activity and Recovery each say what to do next when empty', async () => {

    await open('servers');
    const servers = page.getByTestId('servers-empty');
    expect(await servers.innerText()).toMatch(/No servers yet[\s\S]*built-in demo server[\s\S]*Import/);
    expect(await servers.getByRole('button').allInnerTexts()).toEqual(['Add the built-in demo server', 'Add a server…', 'Import…']);
    await look(page, 'screens-servers-empty');

    await open('permissions');
    expect(await page.getByTestId('perm-empty').innerText()).toMatch(/No tools yet[\s\S]*once it is connected/);
    await look(page, 'screens-permissions-empty');
    await page.getByTestId('perm-empty').getByRole('button', { name: 'Go to Servers' }).click();
    await page.getByTestId('view-servers').waitFor();

    await open('approvals');
    expect(await page.getByTestId('approvals-empty').innerText()).toMatch(/Nothing is waiting for your approval[\s\S]*Nothing is sent before that/);
    await look(page, 'screens-approvals-empty');

    await open('activity');
    expect(await page.getByTestId('activity-empty').innerText()).toMatch(/No activity yet[\s\S]*run one of its tools/);
    await look(page, 'screens-activity-empty');

    await open('recovery');
    expect(await page.getByTestId('recovery-empty').innerText()).toMatch(/Nothing to recover[\s\S]*never sends them again on its own/);
    await look(page, 'screens-recovery-empty');
  });

  it('the sidebar collapses to icons and back, keeps every view reachable, and remembers the choice after a reload', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    const toggle = page.getByTestId('sidebar-toggle');
    // The window-size media query reports the wider window in its own time.
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('true');
    // Collapsed, the labels are gone from sight but every button keeps its name.
    const width = (await page.getByTestId('sidebar').boundingBox())!.width;
    expect(width).toBeLessThan(80);
    for (const view of ['chat', 'servers', 'permissions', 'approvals', 'activity', 'recovery', 'settings']) {
      expect(await page.getByRole('button', { name: new RegExp(`^${view}`, 'i') }).count()).toBeGreaterThan(0);
    }
    await open('servers');
    await look(page, 'screens-sidebar-collapsed');
    await page.reload();
    await waitUntilLive(page);
    expect(await page.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('true');
    await page.getByTestId('sidebar-toggle').click();
    expect(await page.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('false');
  });

  it('a small window collapses the sidebar on its own until the person chooses, and the view keeps its main control in reach', async () => {
    const context = await browser!.newContext({ viewport: { width: 800, height: 600 } });
    const small = await context.newPage();
    try {
      await small.goto(host!.url);
      await waitUntilLive(small);
      expect(await small.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('true');
      await small.getByTestId('nav-servers').click();
      const add = small.getByTestId('servers-add');
      const box = (await add.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(800);
      expect(box.y + box.height).toBeLessThanOrEqual(600);
      // Growing the window brings the labels back (no choice was made yet).
      await small.setViewportSize({ width: 1280, height: 800 });
      await expect.poll(() => small.getByTestId('sidebar').getAttribute('data-collapsed')).toBe('false');
    } finally {
      await context.close();
    }
  });

  it('the dark theme follows prefers-color-scheme: the frame, text and controls change colour', async () => {
    await open('servers');
    const colours = () =>
      page.evaluate(`(() => {
        const c = (sel, prop) => getComputedStyle(document.querySelector(sel))[prop];
        return { content: c('html', 'backgroundColor'), view: c('.view', 'backgroundColor'), text: c('.view', 'color'), scheme: getComputedStyle(document.documentElement).colorScheme };
      })()`) as Promise<Record<string, string>>;
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await colours();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await colours();
    await page.emulateMedia({ colorScheme: 'light' });
    expect(light).toMatchObject({ content: 'rgb(245, 246, 248)', view: 'rgb(255, 255, 255)', text: 'rgb(27, 36, 48)' });
    expect(dark).toMatchObject({ content: 'rgb(15, 19, 23)', view: 'rgb(23, 28, 34)', text: 'rgb(228, 232, 237)' });
    expect(light.scheme).toBe('light dark');
  });

  it('choosing Dark in Settings draws Warden dark (through main, as nativeTheme does), and System brings it back', async () => {
    await open('settings');
    const background = () => page.evaluate(`getComputedStyle(document.documentElement).backgroundColor`);
    await expect.poll(() => page.getByTestId('settings-theme-system').isChecked()).toBe(true);
    expect(await page.getByTestId('settings-theme').innerText()).toContain('Right now: light.');
    // "Right now" names what is drawn: the system turning dark (prefers-color-scheme) changes it at once.
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => page.getByTestId('settings-theme').innerText()).toContain('Right now: dark.');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => page.getByTestId('settings-theme').innerText()).toContain('Right now: light.');
    await page.getByTestId('settings-theme-dark').click();
    await expect.poll(background).toBe('rgb(15, 19, 23)');
    expect(await page.getByTestId('settings-theme-dark').isChecked()).toBe(true);
    expect((await core!.handlers['theme:get']({})).preference).toBe('dark');
    await look(page, 'screens-settings-theme', { focus: 'settings-appearance' });
    await page.getByTestId('settings-theme-system').click();
    await expect.poll(background).toBe('rgb(245, 246, 248)');
  });

  it('Settings: every section is there, the index jumps to each, and nothing a person reads is an internal id', async () => {
    await open('settings');
    const sections = ['appearance', 'models', 'approvals', 'permissions', 'connections', 'results', 'keychain', 'ledger', 'data', 'about'];
    for (const s of sections) await page.getByTestId(`settings-${s}`).waitFor();
    await page.getByTestId('settings-approval-expiry').waitFor();
    await look(page, 'screens-settings');
    await page.getByTestId('settings-jump-about').click();
    await expect.poll(() => page.evaluate(`document.activeElement?.id`)).toBe('settings-about-title');
    expect(await page.getByTestId('settings-version').innerText()).toBe('0.1.0-e2e-screens');
    expect(await page.getByTestId('settings-about-facts').innerText()).toContain(`Node.js\n${process.versions.node}`);
    expect(await page.getByTestId('settings-keychain-status').getAttribute('data-available')).toBe('true');
    expect(await page.getByTestId('settings-data-folder').innerText()).toBe(dir);
    // Connecting at start is per server (its switch in Servers); the section says where, and goes there.
    expect(await page.getByTestId('settings-connections-note').innerText()).toMatch(/Servers that are on connect when Warden starts/);
    await page.getByTestId('settings-open-servers').click();
    await page.getByTestId('view-servers').waitFor();
  });

  it('About lists the licences of what Warden ships, generated at build time from the packages themselves', async () => {
    await open('settings');
    const licences = page.getByTestId('settings-licenses');
    await licences.waitFor();
    await licences.locator('summary').click();
    const text = await licences.innerText();
    expect(text).toMatch(/Open-source licences of the \d+ packages Warden ships/);
    expect(text).toMatch(/react\t19\.[\d.]+\tMIT\twindow/);
    expect(text).toMatch(/electron\t[\d.]+\tMIT\truntime/);
    expect(text).toMatch(/@modelcontextprotocol\/sdk\t[\d.]+\tMIT\tapp/);
    // A dev-only tool is not shipped, so it is not listed.
    expect(text).not.toMatch(/^vitest\t/m);
    await look(page, 'screens-settings-licences', { focus: 'settings-licenses' });
  });

  it('the approval expiry chosen in Settings is what the core uses for the next approval', async () => {
    await open('settings');
    const select = page.getByTestId('settings-approval-expiry');
    expect(await select.inputValue()).toBe('600000');
    expect(await select.locator('option:checked').innerText()).toBe('10 minutes (default)');
    await select.selectOption('120000');
    await expect.poll(async () => (await core!.handlers['settings:get']({})).approvals.expiryMs).toBe(120_000);
    await look(page, 'screens-settings-approvals', { focus: 'settings-approvals' });
  });

  it('Disabled as the default is applied at once; back to Ask waits for Warden’s own dialog, and a refusal there changes nothing', async () => {
    await open('settings');
    // Clicked, not `check()`ed: the choice shows once main has applied it, so the click alone does not tick it.
    await page.getByTestId('settings-default-mode-disabled').click();
    await expect.poll(async () => (await core!.handlers['settings:get']({})).permissions.defaultToolMode).toBe('disabled');
    expect(prompts).toHaveLength(0);

    answer.next = 'deny';
    await page.getByTestId('settings-default-mode-ask').click();
    const error = page.getByTestId('settings-error');
    await error.waitFor();
    // In words; the code is under its details.
    expect(await error.innerText()).toMatch(/^You cancelled in Warden's dialog, so nothing changed./);
    expect(prompts.at(-1)).toMatchObject({ title: 'Offer tools that have no rule again?' });
    // The page shows what is really in force: still Disabled.
    expect(await page.getByTestId('settings-default-mode-disabled').isChecked()).toBe(true);
    expect((await core!.handlers['settings:get']({})).permissions.defaultToolMode).toBe('disabled');
    await look(page, 'screens-settings-permissions', { focus: 'settings-permissions' });

    answer.next = 'approve';
    await page.getByTestId('settings-default-mode-ask').click();
    await expect.poll(async () => (await core!.handlers['settings:get']({})).permissions.defaultToolMode).toBe('ask');
    // The page hears of the change after the core has made it.
    await expect.poll(() => page.getByTestId('settings-default-mode-ask').isChecked()).toBe(true);
    expect(await page.getByTestId('settings-error').count()).toBe(0);
  });

  it('Check now verifies the activity log on disk and says what it found', async () => {
    await open('settings');
    await page.getByTestId('settings-ledger-verify').click();
    const result = page.getByTestId('settings-ledger-result');
    await result.waitFor({ timeout: 60_000 });
    expect(await result.getAttribute('data-outcome')).toBe('intact');
    expect(await result.innerText()).toMatch(/^Intact: all \d+ records? in 1 file pass their checksums and the hash chain is unbroken\./);
    expect(await page.getByTestId('status-ledger').innerText()).toBe('Activity log: no damage found');
    expect(await page.getByTestId('settings-ledger-state').innerText()).toBe('No damage found.');
    await look(page, 'screens-settings-ledger', { focus: 'settings-ledger' });
  });

  it('after a restart with a call that was running, Recovery shows it by name with what to do', async () => {
    // The demo server is configured; one of its calls was executing when Warden "stopped".
    const added = await core!.handlers['servers:add']({ definition: { name: 'Warden demo (built-in)', transport: 'builtin', builtin: 'demo' }, secrets: [] });
    const serverId = added.definition.id;
    const accountId = added.accounts[0]!.id;
    const id = randomUUID();
    const args = { id: 'note-1' };
    await ledger!.ledger.append(
      [
        journalEntry('op.proposed', {
          operationId: id,
          origin: { source: 'user', conversationId: null, round: null, batchId: null },
          identity: { serverId, accountId, toolName: 'notes_delete', endpointHash: 'e'.repeat(64), contractHash: 'c'.repeat(64) },
          arguments: args,
          canonicalArguments: JSON.stringify(args),
          fingerprint: `fp-${id}`,
          requestedAt: Date.now(),
        }),
        journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'approved', reason: 'Approved by you', actor: 'user', fingerprint: `fp-${id}` } as never),
        journalEntry('op.transition', { operationId: id, from: 'approved', to: 'executing', reason: 'Sending the request to the server', fingerprint: `fp-${id}` } as never),
      ],
      { durable: true },
    );
    // Restart: a new core on the same folder recovers the call as outcome unknown, never resending it.
    await host!.close();
    await core!.close();
    // The process that wrote it is gone: its index closes too, so nothing of it commits under the new one.
    await ledger!.close();
    core = await startCore();
    host = await startTestHost({ core, rendererDir: path.join(root, 'out', 'renderer'), logError: () => {} });
    await page.goto(host.url);
    await waitUntilLive(page);
    await open('recovery');
    const card = page.getByTestId(`recovery-${id}`);
    await card.waitFor({ timeout: 30_000 });
    // The server's only account is not repeated.
    expect(await card.locator('h2').innerText()).toBe('notes_delete on Warden demo (built-in)');
    expect(await card.innerText()).not.toContain(serverId);
    await look(page, 'screens-recovery', { focus: `recovery-${id}` });
  });

  it('ran with no page errors, console errors or CSP violations', async () => {
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
