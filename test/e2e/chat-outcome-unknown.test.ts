/**
 * A chat call stopped after it left: the built renderer in headless Chromium over the test host,
 * the real core, a real stdio destination (test/fixtures/servers/publish-report.ts, which records
 * each publication in its own effect log and, for workspace "slow", never answers) and a loopback
 * Anthropic server driven through the official SDK. The person presses Stop while the call runs;
 * the destination did act, so the card must not say the call failed or that nothing happened: it
 * says Warden can't tell, that it won't send it again, and leads to Recovery, where the call waits.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import type { Conversation } from '../../shared/contract/chat';
import type { ChannelName } from '../../shared/ipc';
import { startAnthropicFixture, type ModelFixture } from '../fixtures/models';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { look } from '../helpers/look';
import type { TestHost } from '../host/test-host';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { DialogStandIn, MapKeychain } from '../integration/chat/helpers';
import { ROOT, TSX_LOADER } from '../integration/mcp/helpers';

const KEY = 'sk-ant-e2e-outcome-unknown';
let dir: string;
let effects: string;
let model: ModelFixture | undefined;
let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
let conversationId = '';
const dialogs = new DialogStandIn();
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}
const published = (): Array<Record<string, unknown>> => (existsSync(effects) ? readFileSync(effects, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

describe('a chat call stopped after it was sent', () => {
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-e2e-chat-unknown-'));
    effects = path.join(dir, 'effects.jsonl');
    model = await startAnthropicFixture({ apiKey: KEY, models: [{ id: 'claude-fixture' }] });
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-chat-unknown',
      platform: 'e2e-test-os',
      servers: { secrets: new MapKeychain() },
      gate: { prompter: dialogs.prompter },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    const added = await call<{ definition: { id: string } }>('servers:add', {
      definition: { name: 'Reports', transport: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, path.join(ROOT, 'test/fixtures/servers/publish-report.ts')], env: [{ name: 'EFFECT_LOG', value: effects }] },
    });
    const serverId = added.definition.id;
    const accountId = (await call<{ accounts: Array<{ id: string }> }>('accounts:list', { serverId })).accounts[0]!.id;
    expect((await call<{ status: { state: string } }>('connections:connect', { serverId, accountId })).status.state).toBe('connected');
    // Always Allow, so the call runs as soon as the model asks (making it looser is confirmed natively).
    dialogs.single = 'approve';
    await call('permissions:set', { scope: 'tool', serverId, accountId, toolName: 'publish_report', mode: 'allow' });
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

  it('the card says Warden cannot tell whether it happened and will not resend it, and Open Recovery leads to the call', async () => {
    model!.enqueue({ kind: 'reply', text: ['Publishing it now.'], toolCalls: [{ name: 'Reports__publish_report', argumentsJson: JSON.stringify({ workspace: 'slow', body: 'Quarterly report' }) }] });
    await page.getByTestId(`chat-item-${conversationId}`).click();
    await page.getByTestId('chat-input').fill('Publish the quarterly report to the slow workspace.');
    await page.getByTestId('chat-input').press('Enter');

    const card = page.locator('[data-testid^="call-"][data-status]').last();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('running');
    // The destination has the request (it records before it never answers).
    await expect.poll(() => published().length, { timeout: 15_000 }).toBe(1);
    await page.getByTestId('chat-stop').click();

    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000 }).toBe('outcome_unknown');
    const note = card.locator('.outcome-unknown-note');
    expect(await note.innerText()).toMatch(/can.t tell whether the server did it.*won.t send it again on\s+its own/s);
    expect(await card.innerText()).not.toMatch(/nothing happened|Stopped before it was sent/);
    // It was sent once and never again.
    expect(published()).toEqual([{ tool: 'publish_report', workspace: 'slow', body: 'Quarterly report' }]);
    await look(page, 'chat-outcome-unknown', { arrange: (p) => p.evaluate("document.querySelector('[data-testid=chat-messages]')?.scrollTo(0, 1e9)") });

    const operationId = (await call<Conversation>('chat:get', { conversationId })).messages.flatMap((m) => m.toolCalls).at(-1)!.operationId!;
    await note.getByRole('button', { name: 'Open Recovery' }).click();
    await page.getByTestId(`recovery-${operationId}`).waitFor({ timeout: 15_000 });
    expect(await page.getByTestId(`recovery-${operationId}`).innerText()).toMatch(/publish_report/);
    await look(page, 'chat-outcome-unknown-recovery', { focus: `recovery-${operationId}` });
    expect(published()).toHaveLength(1);
    expect(errors.pageErrors).toEqual([]);
  });
});
