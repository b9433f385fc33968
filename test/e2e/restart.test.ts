/**
 * After a restart, in a real browser against the REAL core on the same settings file and a REAL
 * spawned stdio server with two accounts: a person connects the second account (Work) on the
 * server's page, Warden closes, Warden starts again, and the Servers view shows both accounts
 * connected by themselves, not only the first.
 *
 * Screenshots: test-results/restart-*.png at 1280×800 and 800×600, light and dark. axe-core: no
 * serious or critical violations.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import { MapKeychain } from '../integration/chat/helpers';
import { stdioFixture } from '../integration/mcp/helpers';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { screens } from './screens';

let dir: string;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const pageErrors: string[] = [];
const consoleErrors: string[] = [];

/** Starts Warden on `dir` (as main does at every launch) and opens it in the browser. */
async function launch(): Promise<void> {
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: '0.1.0-e2e-restart',
    platform: 'e2e-test-os',
    servers: { settingsStore: openConfSettingsStore(dir), secrets: new MapKeychain() },
    gate: { prompter: { prompt: async () => 'approve' } },
    autoConnect: true,
  });
  ({ host, browser, page } = await openAppInBrowser(core, { consoleErrors, pageErrors }));
}

/** Closes Warden as quitting does: the window, then the core (which stops the server's process). */
async function quit(): Promise<void> {
  await closeInOrder(
    () => browser?.close(),
    () => host?.close(),
    () => core?.close(),
  );
  browser = undefined;
  host = undefined;
  core = undefined;
}

describe('after a restart, in a real browser against the real core', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-restart-'));
    const doc = {
      schemaVersion: 1,
      servers: [{ ...stdioFixture('notes', 'slow'), name: 'Notes' }],
      accounts: [
        { id: 'notes-personal', serverId: 'notes', label: 'Personal' },
        { id: 'notes-work', serverId: 'notes', label: 'Work' },
      ],
      preferences: {},
    };
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(doc, null, 2));
    await launch();
  });

  afterAll(async () => {
    await closeInOrder(quit, () => rmSync(dir, { recursive: true, force: true }));
  });

  it('the second account the person connected is connected again after Warden restarts, beside the first', async () => {
    await page.getByTestId('nav-servers').click();
    await page.locator('[data-testid="server-row-notes"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await page.getByTestId('server-open-notes').click();
    await page.locator('[data-testid="account-notes-notes-personal-status"][data-state="connected"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('account-notes-notes-work-status').getAttribute('data-state')).toBe('disconnected');
    await page.getByTestId('account-notes-notes-work-connect').click();
    await page.locator('[data-testid="account-notes-notes-work-status"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await quit();

    await launch();
    await page.getByTestId('nav-servers').click();
    await page.locator('[data-testid="server-row-notes"][data-state="connected"]').waitFor({ timeout: 60_000 });
    await expect.poll(() => core!.connections.connection('notes', 'notes-work')?.status.state, { timeout: 30_000 }).toBe('connected');
    // The list counts both accounts' tools: two each.
    await expect.poll(() => page.getByTestId('server-tools-notes').innerText(), { timeout: 15_000 }).toBe('4 tools');
    expect(await page.getByTestId('servers-summary').innerText()).toBe('1 of 1 connected');
    // The row names the accounts it runs in, not only the first.
    expect(await page.getByTestId('server-accounts-notes').innerText()).toBe('Personal, Work');
    const a11y = await screens(page, 'restart-servers', 'server-row-notes');

    await page.getByTestId('server-open-notes').click();
    for (const account of ['personal', 'work']) {
      await page.locator(`[data-testid="account-notes-notes-${account}-status"][data-state="connected"]`).waitFor({ timeout: 30_000 });
    }
    a11y.push(...(await screens(page, 'restart-server-page', 'account-notes-notes-work')));
    expect(a11y).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
