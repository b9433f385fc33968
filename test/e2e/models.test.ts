/**
 * The Models panel end to end: the built renderer in headless Chromium, over the test host,
 * against the REAL core, the REAL keychain and loopback servers speaking the Anthropic Messages
 * and OpenAI Chat Completions protocols (test/fixtures/models).
 *
 * A person adds a provider with a key (never shown again: the page only says it is saved), picks
 * the default model from the provider's list, tests the connection, adds a local server without
 * a key, sees a bad base URL refused with the field named, moves a provider to another host
 * (warned first; the key is removed, never sent there) and sees a wrong key explained.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import type { ModelProvider } from '../../electron/core/models/provider';
import { KeytarSecretStore } from '../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import { startAnthropicFixture, startOpenAIFixture, type ModelFixture } from '../fixtures/models';
import { waitUntilLive } from '../helpers/chromium';
import { look } from '../helpers/look';
import { filesContaining } from '../integration/secrets/scan';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const resultsDir = `${root}test-results`;
const KEY = `sk-ant-e2e-${randomBytes(20).toString('hex')}`;
const WRONG_KEY = `sk-ant-wrong-${randomBytes(20).toString('hex')}`;

let dir: string;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
let anthropic: ModelFixture;
let local: ModelFixture;
let elsewhere: ModelFixture;
const secrets = new KeytarSecretStore({ service: `warden-e2e-models-${process.pid}-${Date.now()}` });
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
/** Every WebSocket frame the page received from the core (responses and events). */
const framesToPage: string[] = [];

/** A stand-in for the built-in Demo model (the real one is electron/core/models/demo-model.ts). */
const demo: ModelProvider = {
  kind: 'demo',
  listModels: async () => [{ id: 'demo-script', label: 'Demo script' }],
  async *stream() {
    yield { type: 'finish', stopReason: 'end_turn', usage: null };
  },
};

/** Looks at the Models section (both sizes, both themes, axe and clipping) with `focus` (or the section) in the window. */
async function shot(name: string, focus?: string): Promise<void> {
  await look(page, `models-${name}`, { focus: focus ?? 'settings-models' });
}
/** Opens Settings, where the Models panel lives. */
async function openModels(): Promise<void> {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings-models').waitFor();
}
const providerIds = async () => (await core!.models.list()).filter((c) => c.kind !== 'demo');

describe('the Models panel in a real browser against the real core and loopback providers', () => {
  let anthropicId = '';

  beforeAll(async () => {
    await mkdir(resultsDir, { recursive: true });
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-models-'));
    anthropic = await startAnthropicFixture({ apiKey: KEY, models: [{ id: 'claude-fixture-large', label: 'Claude Fixture Large' }, { id: 'claude-fixture-small', label: 'Claude Fixture Small' }] });
    local = await startOpenAIFixture({ models: [{ id: 'llama3.1:8b' }, { id: 'qwen2.5:7b' }] });
    elsewhere = await startAnthropicFixture({ apiKey: 'its-own-key', echoCredentialOnAuthFailure: true, models: [] });
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-models',
      platform: 'e2e-test-os',
      servers: { settingsStore: openConfSettingsStore(dir), secrets },
      models: {
        settingsStore: openConfSettingsStore(dir, 'models'),
        builtins: [{ choice: { providerId: 'demo', kind: 'demo', label: 'Demo (offline, scripted)', defaultModel: 'demo-script' }, provider: demo }],
        adapter: { maxRetries: 0, connectTimeoutMs: 10_000, idleTimeoutMs: 10_000 },
      },
    });
    ({ host, browser, page } = await openAppInBrowser(core, { consoleErrors, pageErrors }));
    page.on('websocket', (ws) => ws.on('framereceived', (f) => framesToPage.push(String(f.payload))));
    // The socket opened before the listener: reload so every frame of this session is seen.
    await page.reload();
    await waitUntilLive(page);
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => Promise.all([anthropic?.close(), local?.close(), elsewhere?.close()]),
      () => rmSync(dir, { recursive: true, force: true }),
      async () => {
        for (const key of await secrets.keys('').catch(() => [] as string[])) await secrets.delete(key).catch(() => undefined);
      },
    );
  });

  it('Models is a section of Settings (no sidebar entry of its own) and shows the built-in Demo and an explanation', async () => {
    expect(await page.getByTestId('nav-models').count()).toBe(0);
    await openModels();
    await page.getByTestId('models-demo').waitFor();
    expect(await page.getByTestId('models-demo').innerText()).toMatch(/no network and no key/);
    expect(await page.getByTestId('models-empty').isVisible()).toBe(true);
    expect(await page.getByTestId('settings-models').innerText()).toContain('only ever sent to the host you entered them for');
    await shot('empty');
  });

  it('adding a provider with a key: the field is emptied, the card only says the key is saved, and the page never holds the key', async () => {
    await page.getByTestId('models-add').click();
    await page.getByTestId('models-add-preset').selectOption('anthropic');
    await page.getByTestId('models-add-label').fill('Anthropic (work)');
    await page.getByTestId('models-add-base-url').fill(anthropic.baseUrl);
    await page.getByTestId('models-add-key').fill(KEY);
    await shot('add-form');
    await page.getByTestId('models-add-save').click();
    await page.getByTestId('models-add-form').waitFor({ state: 'detached', timeout: 30_000 });
    anthropicId = (await providerIds())[0]!.providerId;
    const keyState = page.getByTestId(`models-${anthropicId}-key`);
    await keyState.waitFor();
    expect(await keyState.getAttribute('data-has-key')).toBe('true');
    expect(await keyState.innerText()).toContain('Key saved in the keychain');
    expect(await keyState.innerText()).toContain(`Sent only to ${new URL(anthropic.baseUrl).host}`);
    // The key is in the keychain, and nowhere the page or the disk could show it.
    expect((await secrets.keys('')).some((k) => k.startsWith(`model-provider:${anthropicId}@`))).toBe(true);
    expect(await page.content()).not.toContain(KEY);
    const inputs = (await page.evaluate(`[...document.querySelectorAll('input')].map((e) => e.value)`)) as string[];
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.join('\n')).not.toContain(KEY);
    expect(await page.evaluate(`JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })`)).not.toContain(KEY);
    expect(framesToPage.join('\n')).not.toContain(KEY);
    expect(filesContaining(dir, KEY)).toEqual([]);
  });

  it('the default model is chosen from the provider’s own list, and the connection test passes', async () => {
    await page.getByTestId(`models-${anthropicId}-load-models`).click();
    const select = page.getByTestId(`models-${anthropicId}-model-select`);
    await select.waitFor({ timeout: 30_000 });
    expect(await select.locator('option').allInnerTexts()).toEqual(['Choose a model…', 'Claude Fixture Large (claude-fixture-large)', 'Claude Fixture Small (claude-fixture-small)']);
    await select.selectOption('claude-fixture-large');
    await expect.poll(() => page.getByTestId(`models-${anthropicId}-default-model`).innerText(), { timeout: 15_000 }).toBe('claude-fixture-large');
    expect(await core!.models.list()).toContainEqual({ providerId: anthropicId, kind: 'anthropic', label: 'Anthropic (work)', defaultModel: 'claude-fixture-large' });
    await page.getByTestId(`models-${anthropicId}-test`).click();
    const result = page.getByTestId(`models-${anthropicId}-test-result`);
    await result.waitFor({ timeout: 30_000 });
    expect(await result.getAttribute('data-ok')).toBe('true');
    expect(await result.innerText()).toMatch(/Connected to 127\.0\.0\.1:\d+: 2 models listed, including "claude-fixture-large"/);
    // The fixture saw the key on the wire; the page never did.
    expect(anthropic.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(framesToPage.join('\n')).not.toContain(KEY);
    await shot('provider', `models-${anthropicId}`);
  });

  it('a bad base URL is refused with a plain error naming the field, next to the field', async () => {
    await page.getByTestId('models-add').click();
    await page.getByTestId('models-add-preset').selectOption('custom');
    await page.getByTestId('models-add-label').fill('Remote vLLM');
    await page.getByTestId('models-add-base-url').fill('http://models.example.com/v1');
    await page.getByTestId('models-add-save').click();
    const error = page.getByTestId('models-add-error');
    await error.waitFor({ timeout: 15_000 });
    // The field is named in words, and the problem sits next to the field it is about.
    expect(await error.innerText()).toMatch(/Base URL: plain http is only allowed on this machine .*use https for models\.example\.com/);
    const problem = page.getByTestId('models-add-problem-baseUrl');
    expect(await problem.innerText()).toMatch(/^Plain http is only allowed on this machine .*use https for models\.example\.com/);
    expect(await page.getByTestId('models-add-base-url').getAttribute('aria-describedby')).toBe('models-add-problem-baseUrl');
    await shot('bad-url', 'models-add-form');
    await page.getByTestId('models-add-form').getByRole('button', { name: 'Cancel' }).click();
    expect(await providerIds()).toHaveLength(1);
  });

  it('a local OpenAI-compatible server needs no key: add it, type nothing, pick a model, test it', async () => {
    await page.getByTestId('models-add').click();
    await page.getByTestId('models-add-preset').selectOption('ollama');
    expect(await page.getByTestId('models-add-base-url').inputValue()).toBe('http://127.0.0.1:11434/v1');
    await page.getByTestId('models-add-base-url').fill(local.baseUrl);
    await page.getByTestId('models-add-save').click();
    await page.getByTestId('models-add-form').waitFor({ state: 'detached', timeout: 30_000 });
    const localId = (await providerIds()).find((p) => p.label === 'Ollama on this computer')!.providerId;
    expect(await page.getByTestId(`models-${localId}-key`).innerText()).toContain('No key (usually not needed on this computer)');
    await page.getByTestId(`models-${localId}-load-models`).click();
    await page.getByTestId(`models-${localId}-model-select`).selectOption('llama3.1:8b');
    await expect.poll(() => page.getByTestId(`models-${localId}-default-model`).innerText(), { timeout: 15_000 }).toBe('llama3.1:8b');
    await page.getByTestId(`models-${localId}-test`).click();
    await page.locator(`[data-testid="models-${localId}-test-result"][data-ok="true"]`).waitFor({ timeout: 30_000 });
    expect(local.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('moving a provider to another host warns first, removes the key, and never sends it there', async () => {
    await page.getByTestId(`models-${anthropicId}-edit`).click();
    await page.getByTestId(`models-${anthropicId}-edit-base-url`).fill(elsewhere.baseUrl);
    const warning = page.getByTestId(`models-${anthropicId}-edit-key-warning`);
    await warning.waitFor();
    expect(await warning.innerText()).toContain(`The key saved for ${new URL(anthropic.baseUrl).host} will be removed`);
    await shot('move-warning', `models-${anthropicId}`);
    await page.getByTestId(`models-${anthropicId}-edit-save`).click();
    await page.getByTestId(`models-${anthropicId}-notice`).waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId(`models-${anthropicId}-key`).getAttribute('data-has-key'), { timeout: 15_000 }).toBe('false');
    expect((await secrets.keys('')).filter((k) => k.startsWith(`model-provider:${anthropicId}@`))).toEqual([]);
    await page.getByTestId(`models-${anthropicId}-test`).click();
    const result = page.locator(`[data-testid="models-${anthropicId}-test-result"][data-ok="false"]`);
    await result.waitFor({ timeout: 30_000 });
    expect(await result.innerText()).toMatch(/No API key is stored/);
    expect(elsewhere.requests).toEqual([]);
  });

  it('a wrong key is explained in plain words; the key typed is never shown back', async () => {
    await page.getByTestId(`models-${anthropicId}-key-edit`).click();
    await page.getByTestId(`models-${anthropicId}-key-input`).fill(WRONG_KEY);
    await page.getByTestId(`models-${anthropicId}-key-save`).click();
    await expect.poll(() => page.getByTestId(`models-${anthropicId}-key`).getAttribute('data-has-key'), { timeout: 15_000 }).toBe('true');
    await page.getByTestId(`models-${anthropicId}-test`).click();
    const result = page.locator(`[data-testid="models-${anthropicId}-test-result"][data-ok="false"]`);
    await result.waitFor({ timeout: 30_000 });
    // The hostile fixture echoes the credential it got in its 401: Warden scrubs it.
    // The sentence with the fix (renderer/src/errors.ts), then the provider's own words; never the code.
    expect(await result.innerText()).toMatch(/^The provider refused the API key\. Enter a valid key for this provider in Models\.\s[\s\S]*refused the API key \(HTTP 401\).*\[REDACTED\]/);
    expect(await result.innerText()).not.toContain('UNAUTHORIZED');
    expect(await page.content()).not.toContain(WRONG_KEY);
    expect(framesToPage.join('\n')).not.toContain(WRONG_KEY);
    await shot('wrong-key', `models-${anthropicId}-test-result`);
  });

  it('fits a small window (800×600) and has no serious accessibility violations in either theme', async () => {
    await openModels();
    // look() fails on any serious/critical axe violation or clipped text, at both sizes and in both themes.
    const report = await look(page, 'models-settled', { focus: 'settings-models' });
    expect(report.screenshots).toHaveLength(4);
  });

  it('produced no page errors, console errors or CSP violations, and no key reached the page or the disk', async () => {
    // The frames were really watched: they carry the provider views the page showed.
    expect(framesToPage.some((f) => f.includes('"hasKey":true'))).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
    for (const key of [KEY, WRONG_KEY]) {
      expect(framesToPage.join('\n')).not.toContain(key);
      expect(filesContaining(dir, key)).toEqual([]);
    }
  });
});
