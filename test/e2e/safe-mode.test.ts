/**
 * Safe mode, end to end: a real core opens a durable ledger whose record was changed after it was
 * written; the background verification finds the break and every tool is held at Ask. The built
 * renderer in Chromium (over the test host) shows the banner, leads to Settings, asks for a reason
 * and leaves safe mode only when main's native dialog (the stand-in prompter here) says yes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import { segmentName } from '../../electron/core/ledger/ledger';
import { LedgerService } from '../../electron/core/ledger/service';
import type { ApprovalPreview } from '../../electron/core/ports';
import { look } from '../helpers/look';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { tempDir } from '../unit/ledger/helpers';

let dir: { dir: string; cleanup: () => void };
let core: WardenCore | undefined;
let service: LedgerService;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
/** What the stand-in for main's native dialog was asked, and what it answers next. */
const asked: ApprovalPreview[] = [];
let answer: 'approve' | 'deny' = 'deny';

describe('safe mode after the ledger was changed', () => {
  beforeAll(async () => {
    dir = tempDir();
    const seed = await LedgerService.open({ dir: dir.dir });
    for (let i = 0; i < 6; i++) await seed.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    await seed.close();
    const segment = join(dir.dir, segmentName(1));
    const bytes = readFileSync(segment);
    bytes[bytes.indexOf('"i":2') + 4] = '7'.charCodeAt(0);
    writeFileSync(segment, bytes);

    service = await LedgerService.open({ dir: dir.dir });
    expect((await service.verification)?.safeMode).toBe(true);
    core = createCore({
      version: '0.1.0-e2e-safe-mode',
      ledger: service,
      gate: { prompter: { prompt: async (preview) => (asked.push(preview), answer) } },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    await core.recovered;
    ({ host, browser, page } = await openAppInBrowser(core, errors));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => dir?.cleanup(),
    );
  });

  it('the banner says every tool asks and leads to the place where safe mode can be left', async () => {
    const banner = page.getByTestId('safe-mode-banner');
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.innerText()).toMatch(/Every tool is held at Ask until you review the damage and leave safe mode in Settings/);
    await page.getByTestId('safe-mode-banner-review').click();
    await expect.poll(() => page.evaluate(`document.activeElement?.id`)).toBe('settings-ledger-title');
    expect(await page.getByTestId('settings-ledger-state').innerText()).toMatch(/Damage was found/);
    await look(page, 'safe-mode-settings', { focus: 'settings-ledger' });
  });

  it('without a reason nothing is asked; the field says what is missing', async () => {
    await page.getByTestId('settings-leave-safe-mode-submit').click();
    expect(await page.getByTestId('settings-safe-mode-reason-error').innerText()).toMatch(/Write a reason first/);
    expect(asked).toHaveLength(0);
  });

  it('a "no" in the native dialog keeps safe mode and says so in words', async () => {
    answer = 'deny';
    await page.getByTestId('settings-safe-mode-reason').fill('compared with the backup from Monday');
    await page.getByTestId('settings-leave-safe-mode-submit').click();
    const error = page.getByTestId('settings-safe-mode-error');
    await error.waitFor({ timeout: 15_000 });
    expect(asked.at(-1)?.title).toBe('Leave safe mode?');
    expect(asked.at(-1)?.argumentsJson).toContain('compared with the backup from Monday');
    expect(await page.getByTestId('safe-mode-banner').isVisible()).toBe(true);
    expect(service.ledger.safeMode).toBe(true);
  });

  it('a "yes" leaves safe mode: the banner goes, the page says the damage was acknowledged, and the log records why', async () => {
    answer = 'approve';
    await page.getByTestId('settings-leave-safe-mode-submit').click();
    await expect.poll(() => page.getByTestId('safe-mode-banner').count(), { timeout: 15_000 }).toBe(0);
    expect(await page.getByTestId('settings-ledger-state').innerText()).toMatch(/Damage acknowledged/);
    expect(await page.getByTestId('settings-leave-safe-mode').count()).toBe(0);
    // The status bar does not call the log whole again: the damage is still in it.
    await expect.poll(() => page.getByTestId('status-ledger').innerText(), { timeout: 15_000 }).toBe('Activity log: damage found and acknowledged');
    expect((await core!.handlers['core:status']({})).safeMode).toBe(false);
    const audit = await dispatch(core!.handlers, 'activity:audit', { limit: 1 });
    expect(audit).toMatchObject({ ok: true, value: { rows: [{ type: 'ledger.safe_mode_acknowledged' }] } });
    await look(page, 'safe-mode-left', { focus: 'settings-ledger' });
    expect(errors.pageErrors).toEqual([]);
  });
});
