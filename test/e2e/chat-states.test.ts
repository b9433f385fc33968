/**
 * What the chat says while an approved call runs, and how it ends when the person stops it: the
 * built renderer in headless Chromium over the test host, the real core, a loopback Anthropic
 * server driven through the official SDK, and a slow archive server run in the place of Warden's
 * built-in one (test/fixtures/servers/slow-builtin.ts: Warden believes its annotations).
 *
 * The model asks to search the archive; the call waits for approval; the person reviews it and
 * approves. While it runs, the conversation list, the composer and the status bar all say a tool
 * is running and nothing waits (not "Waiting for your approval"). Then the person presses Stop:
 * the tool only reads, so the card says it stopped and nothing needs checking, and Recovery has
 * nothing to settle.
 *
 * And Warden quitting while a call runs: the conversation, opened again in the next start, says
 * Warden quit and what is known of the call, never "Stopped by you".
 *
 * Screenshots: test-results/chat-states-*.png at 1280×800 and 800×600, light and dark.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import type { ChatTool, Conversation } from '../../shared/contract/chat';
import type { ChannelName } from '../../shared/ipc';
import { startAnthropicFixture, type ModelFixture } from '../fixtures/models';
import { openSlowBuiltin, type SlowBuiltinState } from '../fixtures/servers/slow-builtin';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { look } from '../helpers/look';
import type { TestHost } from '../host/test-host';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { openLedgerForApp } from '../../electron/core/ledger';
import { call as callOn, DialogStandIn, MapKeychain, startChatCore, until, type ChatCore } from '../integration/chat/helpers';
import { offeredName, ScriptedModel, withScripted } from '../integration/chat/scripted-model';

const KEY = 'sk-ant-e2e-chat-states';
let dir: string;
let model: ModelFixture | undefined;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
let conversationId = '';
const state: SlowBuiltinState = { started: {}, cancelled: {} };
const dialogs = new DialogStandIn();
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}
/** Looks at the Chat view with the newest messages in sight. */
const shot = (name: string) => look(page, `chat-states-${name}`, { arrange: (p) => p.evaluate("document.querySelector('[data-testid=chat-messages]')?.scrollTo(0, 1e9)") });

describe('a chat call approved and running, then stopped', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-chat-states-'));
    model = await startAnthropicFixture({ apiKey: KEY, models: [{ id: 'claude-fixture' }] });
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-chat-states',
      platform: 'e2e-test-os',
      offerDemoServer: true,
      servers: { secrets: new MapKeychain() },
      gate: { prompter: dialogs.prompter },
      connections: { reconnect: { maxAttempts: 0 }, builtinTransport: () => openSlowBuiltin(state) },
    });
    await core.demoOffered;
    const provider = await call<{ provider: { providerId: string } }>('models:add-provider', { kind: 'anthropic', label: 'Anthropic (work)', baseUrl: model.baseUrl, apiKey: KEY, defaultModel: 'claude-fixture' });
    conversationId = (await call<Conversation>('chat:create', { providerId: provider.provider.providerId, model: 'claude-fixture' })).id;
    ({ host, browser, page } = await openAppInBrowser(core, errors));
  }, 90_000);

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => model?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('says a tool is running once it is approved, and a stopped read-only call needs nothing checked', async () => {
    const tools = (await call<{ tools: ChatTool[] }>('chat:tools', { conversationId })).tools;
    const search = tools.find((x) => x.toolName === 'archive_search')!;
    expect(search.effective).toBe('ask');
    model!.enqueue({ kind: 'reply', text: ['Searching the archive.'], toolCalls: [{ name: search.modelName, argumentsJson: JSON.stringify({ steps: 200, stepMs: 300 }) }] });
    await page.getByTestId(`chat-item-${conversationId}`).click();
    await page.getByTestId('chat-input').fill('Find last year’s board minutes in the archive.');
    await page.getByTestId('chat-input').press('Enter');

    const listed = page.getByTestId(`chat-item-${conversationId}`).locator('.chat-list-state');
    const composer = page.getByTestId('chat-state');
    const card = page.locator('[data-testid^="call-"][data-status]').last();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('awaiting_approval');
    await expect.poll(() => composer.innerText(), { timeout: 15_000 }).toBe('Waiting for your approval');
    expect(await listed.innerText()).toBe('Waiting for your approval');

    dialogs.single = 'approve';
    dialogs.batch = 'approve-all';
    await page.getByTestId('chat-review').click();
    // Running at the server, with progress on its card.
    await expect.poll(() => state.started.archive_search ?? 0, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    await expect.poll(() => card.innerText(), { timeout: 15_000 }).toMatch(/\d+ of 200/);
    // The conversation follows the gate: approved and running reads as running, nothing waits.
    await expect.poll(() => composer.getAttribute('data-state'), { timeout: 5_000 }).toBe('running_tools');
    expect(await composer.innerText()).toBe('Running tools…');
    expect(await listed.innerText()).toBe('Running tools…');
    expect(await page.getByTestId('chat-pending').count()).toBe(0);
    expect(await page.getByTestId('status-pending').innerText()).toBe('Nothing waiting for approval');
    // Its Stop says what stopping this tool means: it only reads.
    expect(await card.locator('.call-progress').innerText()).toContain('This tool only reads: stopping it leaves nothing to check.');
    expect(await card.innerText()).not.toMatch(/outcome is recorded as unknown/);
    expect(await page.getByTestId('view-chat').innerText()).not.toMatch(/Waiting for your approval/);
    await shot('running');
    // Still running after the screenshots: what they show is what the person sees mid-call.
    expect(await card.getAttribute('data-status')).toBe('running');
    expect(await composer.innerText()).toBe('Running tools…');

    await page.getByTestId('chat-stop').click();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('stopped');
    expect(await card.getByTestId(/-status$/).innerText()).toBe('Stopped');
    expect(await card.getByTestId(/-outcome$/).innerText()).toBe('Outcome: Stopped by you in the chat. This tool only reads, so nothing needs checking.');
    expect(await card.innerText()).not.toMatch(/Outcome unknown|can.t tell/);
    expect(await card.locator('.outcome-unknown-note').count()).toBe(0);
    await expect.poll(() => state.cancelled.archive_search ?? 0, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => composer.getAttribute('data-state'), { timeout: 15_000 }).toBe('idle');
    expect((await call<{ operations: unknown[] }>('recovery:list', {})).operations).toEqual([]);
    await shot('stopped-reads-only');
    expect(errors.pageErrors).toEqual([]);
  });
});

describe('Warden quitting while a chat call runs', () => {
  let quitDir: string;
  let reopened: ChatCore | undefined;
  let quitHost: TestHost | undefined;
  let quitBrowser: Browser | undefined;
  const quitErrors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
  const archive: SlowBuiltinState = { started: {}, cancelled: {} };
  const asking = () => new ScriptedModel((request, i) => (i === 0 ? { text: 'Publishing it to the archive.', calls: [{ name: offeredName(request, 'archive_publish')!, args: { steps: 200, stepMs: 300 } }] } : { text: 'Done.' }));
  const start = async () =>
    startChatCore({
      ledger: (await openLedgerForApp(quitDir)).ledger,
      chat: { providers: withScripted(asking()), dataDir: path.join(quitDir, 'conversations') },
      connections: { reconnect: { maxAttempts: 0 }, builtinTransport: () => openSlowBuiltin(archive) },
    });

  beforeAll(() => {
    quitDir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-chat-quit-'));
  });
  afterAll(async () => {
    await closeInOrder(
      () => quitBrowser?.close(),
      () => quitHost?.close(),
      () => reopened?.core.close(),
      () => rmSync(quitDir, { recursive: true, force: true }),
    );
  });

  it('the conversation says Warden quit and what is known of the call, never "Stopped by you"', async () => {
    const first = await start();
    let conversationId: string;
    try {
      await until(() => first.core.connections.listTools({ serverId: first.demo.serverId }).length === 2, 'the archive to list its tools');
      first.dialogs.single = 'approve';
      await callOn(first.core, 'permissions:set', { scope: 'tool', ...first.demo, toolName: 'archive_publish', mode: 'allow' });
      conversationId = (await callOn<Conversation>(first.core, 'chat:create', { providerId: 'scripted', model: 'scripted' })).id;
      await callOn(first.core, 'chat:send-message', { conversationId, text: 'Publish the minutes to the archive.' });
      await until(() => (archive.started.archive_publish ?? 0) === 1, 'the call to start');
    } finally {
      await first.core.close();
    }

    reopened = await start();
    let page: Page;
    ({ host: quitHost, browser: quitBrowser, page } = await openAppInBrowser(reopened.core, quitErrors));
    await page.getByTestId(`chat-item-${conversationId}`).click();
    const card = page.locator('[data-testid^="call-"][data-status]').last();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 15_000 }).toBe('outcome_unknown');
    expect(await card.getByTestId(/-outcome$/).innerText()).toBe('Outcome: Outcome unknown: Warden quit while this call was running: the server may have acted.');
    const notices = await page.getByTestId('chat-notice').allInnerTexts();
    expect(notices.join('\n')).toMatch(/^Warden quit during this reply, so the reply ended there\. The call that was still running was stopped; its card says what is known\.$/m);
    expect(await page.getByTestId('view-chat').innerText()).not.toMatch(/Stopped by you/);
    expect(await page.getByTestId('chat-state').getAttribute('data-state')).toBe('idle');
    await look(page, 'chat-states-quit', { arrange: (p) => p.evaluate("document.querySelector('[data-testid=chat-messages]')?.scrollTo(0, 1e9)") });
    expect(quitErrors.pageErrors).toEqual([]);
  });
});
