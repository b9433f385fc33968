/**
 * Recovery after a crash, end to end: a real Warden core (test/fixtures/crash-while-running.ts)
 * is SIGKILLed while a call to a real stdio server is running; a new core opens the same durable
 * ledger and settings, and the built renderer in Chromium (over the test host) shows what a person
 * needs: a banner pointing to Recovery, a badge with the count in the sidebar, the call with
 * names (never ids), and after "Retry as a new call" where the retry went — its new operation, its
 * state as it changes, and links to it in Approvals and Activity. The server gets the first call
 * once (before the crash) and the retry once (after the person approved it): nothing is re-sent
 * on its own.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { LedgerService } from '../../electron/core/ledger/service';
import type { ApprovalPreview } from '../../electron/core/ports';
import type { ListableSecretStore } from '../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import { killFixtureWhen } from '../helpers/kill-fixture';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { screens } from './screens';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const noSecrets: ListableSecretStore = { get: async () => null, set: async () => undefined, delete: async () => false, keys: async () => [] };

let dir: string;
let callsFile: string;
let crashedOperation = '';
/** The new operation the person's "Retry as a new call" created. */
let retriedAs = '';
let service: LedgerService | undefined;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const prompts: ApprovalPreview[] = [];
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
const a11y: string[] = [];

const received = (): Array<{ tool: string; args: Record<string, unknown> }> =>
  existsSync(callsFile) ? readFileSync(callsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

/** Runs a core until its call is executing at the server, then SIGKILLs it (and the server's process group). */
async function crashWhileRunning(slowFile: string): Promise<string> {
  const line = await killFixtureWhen({
    fixture: 'test/fixtures/crash-while-running.ts',
    env: { WARDEN_DIR: dir, SLOW_FILE: slowFile, CALLS_FILE: callsFile },
    ready: /executing (\S+) (\d+)/,
    alsoWait: () => received().length > 0,
    what: 'the call reaching executing at the server',
    timeoutMs: 60_000,
  });
  return line[1]!;
}

describe('after a crash while a call was running', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-recovery-'));
    callsFile = path.join(dir, 'calls.jsonl');
    const slowFile = path.join(dir, 'slow');
    writeFileSync(slowFile, 'the invoice call hangs while this file exists\n');
    crashedOperation = await crashWhileRunning(slowFile);
    rmSync(slowFile);

    // The restart: same ledger, same settings, a fresh core.
    service = await LedgerService.open({ dir: path.join(dir, 'ledger') });
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-recovery',
      platform: 'e2e-test-os',
      ledger: service,
      servers: { settingsStore: openConfSettingsStore(dir), secrets: noSecrets },
      // Stand-in for main's native approval dialog: records the trusted preview and approves.
      gate: { prompter: { prompt: async (preview) => (prompts.push(preview), 'approve') } },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    const report = await core.recovered;
    expect(report?.outcomeUnknown).toEqual([crashedOperation]);
    const server = core.servers.definitions()[0]!;
    const account = (await core.handlers['accounts:list']({ serverId: server.id })).accounts[0]!;
    expect((await core.connections.connect(server.id, account.id)).state).toBe('connected');

    ({ host, browser, page } = await openAppInBrowser(core, errors));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('the app opens with a banner pointing to Recovery and a badge with the count in the sidebar', async () => {
    const banner = page.getByTestId('recovery-banner');
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.innerText()).toMatch(/Warden stopped while 1 call was running\..*may or may not have happened/s);
    expect(await page.getByTestId('nav-recovery-badge').innerText()).toBe('1');
    expect(received()).toHaveLength(1);
    a11y.push(...(await screens(page, 'recovery-banner')));
  });

  it('Recovery names the call, asks for a reason before anything, and a retry is a new call that waits for approval', async () => {
    await page.getByTestId('recovery-banner-open').click();
    const card = page.getByTestId(`recovery-${crashedOperation}`);
    await card.waitFor({ timeout: 30_000 });
    const text = await card.innerText();
    expect(text).toContain('send_invoice on Billing');
    expect(text).toContain('may have reached the server');
    // What was sent, so the person knows which invoice to look for at the server.
    expect(await page.getByTestId(`recovery-${crashedOperation}-arguments`).innerText()).toBe('amount: 1200\ncurrency: EUR\ncustomer: Acme Ltd');
    await card.getByText('Show JSON').click();
    expect(JSON.parse(await page.getByTestId(`recovery-${crashedOperation}-arguments-json`).innerText())).toEqual({ amount: 1200, currency: 'EUR', customer: 'Acme Ltd' });
    expect(text).not.toMatch(/billing-[0-9a-z]{4,}/);
    // The banner points here; on Recovery itself it is not repeated.
    expect(await page.getByTestId('recovery-banner').count()).toBe(0);

    await page.getByTestId(`recovery-${crashedOperation}-retry`).click();
    const problem = page.getByTestId(`recovery-${crashedOperation}-reason-problem`);
    await problem.waitFor();
    expect(await problem.innerText()).toMatch(/Say what you found/);
    expect(await page.getByTestId(`recovery-${crashedOperation}-reason`).getAttribute('aria-describedby')).toBe(`recovery-${crashedOperation}-reason-problem`);
    a11y.push(...(await screens(page, 'recovery-card', `recovery-${crashedOperation}`)));

    await page.getByTestId(`recovery-${crashedOperation}-reason`).fill('Acme says no invoice arrived');
    await page.getByTestId(`recovery-${crashedOperation}-retry`).click();
    const trace = page.getByTestId(`recovery-settled-${crashedOperation}-retry`);
    await trace.waitFor({ timeout: 30_000 });
    await page.locator(`[data-testid="recovery-settled-${crashedOperation}-retry"][data-state="awaiting_approval"]`).waitFor({ timeout: 30_000 });
    const retryId = (await trace.getAttribute('data-retry'))!;
    expect(retryId).not.toBe(crashedOperation);
    retriedAs = retryId;
    expect(await trace.innerText()).toMatch(/Retried as a new call\.[\s\S]*waiting for your approval/);
    // Names where a person reads: the new call's id is for Activity's record, not this card.
    expect(await trace.innerText()).not.toContain(retryId);
    // Settled: no longer counted, and the retry has not been sent (it waits for the person).
    await expect.poll(() => page.getByTestId('nav-recovery-badge').count(), { timeout: 15_000 }).toBe(0);
    expect(received()).toHaveLength(1);
    a11y.push(...(await screens(page, 'recovery-retried', `recovery-settled-${crashedOperation}`)));
  });

  it('the retry’s card follows it through approval to its answer, and links to it in Activity', async () => {
    const trace = page.getByTestId(`recovery-settled-${crashedOperation}-retry`);
    const retryId = (await trace.getAttribute('data-retry'))!;
    await page.getByTestId(`recovery-settled-${crashedOperation}-retry-approvals`).click();
    const review = page.getByTestId(`approval-${retryId}-review`);
    await review.waitFor({ timeout: 30_000 });
    await review.click();
    await page.getByTestId('approvals-empty').waitFor({ timeout: 30_000 });
    expect(prompts.at(-1)).toMatchObject({ toolName: 'send_invoice' });
    await expect.poll(() => received().length, { timeout: 30_000 }).toBe(2);
    expect(received().map((c) => c.args)).toEqual([
      { customer: 'Acme Ltd', amount: 1200, currency: 'EUR' },
      { customer: 'Acme Ltd', amount: 1200, currency: 'EUR' },
    ]);

    await page.getByTestId('nav-recovery').click();
    await page.locator(`[data-testid="recovery-settled-${crashedOperation}-retry"][data-state="succeeded"]`).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId(`recovery-settled-${crashedOperation}-retry-sentence`).innerText()).toBe('It ran and the server answered.');
    a11y.push(...(await screens(page, 'recovery-retry-succeeded', `recovery-settled-${crashedOperation}`)));

    await page.getByTestId(`recovery-settled-${crashedOperation}-retry-activity`).click();
    await page.getByTestId('activity-chips').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('activity-chips').innerText(), { timeout: 15_000 }).toContain('Only this call: send_invoice on Billing');
    const history = page.getByTestId('activity-call-details');
    await history.waitFor({ timeout: 30_000 });
    // The id is one click away, under Technical details (names where a person reads).
    await history.getByTestId('activity-call-ids').locator('summary').click();
    expect(await history.getByTestId('activity-call-ids').innerText()).toContain(retryId);
    const rows = page.getByTestId('activity-row');
    const shownOperations = async () => {
      const ids = new Set<string>();
      for (let i = 0; i < (await rows.count()); i++) ids.add((await rows.nth(i).getAttribute('data-operation')) ?? '');
      return ids;
    };
    await expect.poll(shownOperations, { timeout: 15_000 }).toEqual(new Set([retryId]));
    a11y.push(...(await screens(page, 'recovery-activity-link')));
  });

  it('the Why? panel of the call that was tried again says so in words; the new call’s id is only under Technical details', async () => {
    const retry = retriedAs;
    expect(retry).toBeTruthy();
    await page.getByTestId('nav-activity').click();
    if (await page.getByTestId('activity-clear-filters').count()) await page.getByTestId('activity-clear-filters').click();
    const settled = page.locator(`[data-testid="activity-row"][data-operation="${crashedOperation}"]`);
    await settled.waitFor({ timeout: 30_000 });
    if ((await settled.getByTestId('activity-row-toggle').getAttribute('aria-expanded')) !== 'true') await settled.getByTestId('activity-row-toggle').click();
    const history = page.locator(`#activity-call-${crashedOperation.replace(/[^A-Za-z0-9_-]/g, '_')}`).getByTestId('activity-call-details');
    await expect.poll(() => history.innerText(), { timeout: 15_000 }).toContain('you tried it again as a new call (“Acme says no invoice arrived”)');
    const details = history.getByTestId('activity-call-ids');
    if ((await details.getAttribute('open')) !== null) await details.locator('summary').click();
    expect(await history.innerText()).not.toContain(retry);
    expect(await history.innerText()).not.toContain(crashedOperation);
    await details.locator('summary').click();
    expect(await details.innerText()).toContain(retry);
    await history.scrollIntoViewIfNeeded();
    a11y.push(...(await screens(page, 'recovery-why-retried')));
  });

  it('shows no serious accessibility problems, page errors or CSP violations', async () => {
    expect(a11y).toEqual([]);
    expect(errors.pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(errors.consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
