/**
 * Activity's Tool filter in a real browser against the REAL core: it offers a tool that only
 * recorded calls name. A call of `quiet` on a real stdio server (test/fixtures/servers/slow.ts) is
 * recorded and the server disconnected before the window opens, so this window never loaded that
 * server's tools; the filter still lists `quiet`, and choosing it finds the call.
 *
 * Screenshots: test-results/activity-tools-*.png at 1280×800 and 800×600, light and dark. axe-core:
 * no serious or critical violations.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import type { OperationSummary } from '../../shared/contract/operations';
import type { ChannelName } from '../../shared/ipc';
import { MapKeychain } from '../integration/chat/helpers';
import { stdioFixture, waitUntil } from '../integration/mcp/helpers';
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

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

describe("Activity's Tool filter in a real browser against the real core", () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-activity-tools-'));
    const doc = {
      schemaVersion: 1,
      servers: [{ ...stdioFixture('archive', 'slow'), name: 'Archive' }],
      accounts: [{ id: 'archive-default', serverId: 'archive', label: 'Default' }],
      preferences: {},
    };
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(doc, null, 2));
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-activity-tools',
      platform: 'e2e-test-os',
      servers: { settingsStore: openConfSettingsStore(dir), secrets: new MapKeychain() },
      // Stand-in for main's native approval dialog: approves.
      gate: { prompter: { prompt: async () => 'approve' } },
    });
    // A call recorded before this window existed, on a server that is not connected any more.
    await call('connections:connect', { serverId: 'archive', accountId: 'archive-default' });
    const proposed = await call<OperationSummary>('tools:run', { serverId: 'archive', accountId: 'archive-default', toolName: 'quiet', arguments: { ms: 10 } });
    await call('approvals:review', { operationId: proposed.operationId });
    await waitUntil(async () => (await call<OperationSummary>('operations:get', { operationId: proposed.operationId })).state === 'succeeded', 15_000, 'the call to succeed');
    await call('connections:disconnect', { serverId: 'archive', accountId: 'archive-default' });
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

  it('offers a tool only a recorded call names (its server not connected in this window), and choosing it finds that call', async () => {
    await page.getByTestId('nav-activity').click();
    await page.getByTestId('activity-row').first().waitFor({ timeout: 30_000 });
    // Nothing is connected: no tool list was ever loaded here, so the choice comes from the record.
    expect(core!.connections.connection('archive', 'archive-default')?.status.state).toBe('disconnected');
    const options = page.getByTestId('activity-filter-tool').locator('option');
    await expect.poll(() => options.allInnerTexts(), { timeout: 15_000 }).toEqual(['All', 'quiet']);
    await page.getByTestId('activity-filter-tool').selectOption('quiet');
    await expect.poll(() => page.getByTestId('activity-chips').innerText(), { timeout: 15_000 }).toContain('Tool: quiet');
    await expect.poll(() => page.getByTestId('activity-row').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.getByTestId('activity-row').innerText()).toContain('quiet on Archive (Default)');
    const a11y = await screens(page, 'activity-tools', 'activity-filters');
    expect(a11y).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
