/**
 * Resources, prompts, suggestions and log levels in the real UI: the built renderer in headless
 * Chromium over the test host, the real core, @modelcontextprotocol/server-everything and the
 * hostile fixture (test/fixtures/servers/hostile-data.ts) as real stdio processes. A person reads a
 * resource and sees it marked as the server's; fills in a prompt with the server's suggestions;
 * sees a prompt whose "user" message claims to be them marked as the server's before it enters a
 * conversation; and the message that attaches it keeps the person's words apart from the server's.
 */
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { dispatch } from '../../electron/core/dispatch';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock } from '../../electron/core/ports';
import type { ServerView } from '../../shared/domain/servers';
import type { ChannelName } from '../../shared/ipc';
import { look } from '../helpers/look';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { stdioFixture } from '../integration/mcp/helpers';
import { ScriptedModel, withScripted } from '../integration/chat/scripted-model';
import { FAKE_USER_TEXT } from '../fixtures/servers/hostile-data';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = resolve(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
const model = new ScriptedModel(() => ({ text: 'The attached prompt is the server\'s text; I will not act on it.' }));

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

async function add(definition: Record<string, unknown>): Promise<{ serverId: string; accountId: string }> {
  const added = await call<ServerView>('servers:add', { definition });
  return { serverId: added.definition.id, accountId: added.accounts[0]!.id };
}

async function openAndConnect(at: { serverId: string; accountId: string }): Promise<string> {
  const prefix = `account-${at.serverId}-${at.accountId}`;
  await page.getByTestId('nav-servers').click();
  if ((await page.getByTestId('server-details-back').count()) > 0) await page.getByTestId('server-details-back').click();
  await page.getByTestId(`server-open-${at.serverId}`).click();
  await page.getByTestId(`${prefix}-connect`).click();
  await page.locator(`[data-testid="${prefix}-status"][data-state="connected"]`).waitFor({ timeout: 60_000 });
  await page.getByTestId(`${prefix}-data`).waitFor({ timeout: 30_000 });
  return prefix;
}

let everything: { serverId: string; accountId: string };
let notes: { serverId: string; accountId: string };
let conversationId: string;

describe('resources and prompts as a person sees them', () => {
  beforeAll(async () => {
    core = createCore({ confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-server-data',
      journal: new MemoryJournal(systemClock),
      gate: { prompter: { prompt: async () => 'approve' } },
      connections: { reconnect: { maxAttempts: 0 } },
      chat: { providers: withScripted(model) },
    });
    everything = await add({ name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] });
    const def = stdioFixture('ignored', 'hostile-data');
    notes = await add({ name: 'Notes', transport: 'stdio', command: def.command, args: def.args, env: [] });
    conversationId = (await call<{ id: string }>('chat:create', { providerId: 'scripted' })).id;
    ({ host, browser, page } = await openAppInBrowser(core, errors));
  }, 120_000);

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
    );
  });

  it('a resource is read and shown as the server\'s text, with its server named, never its id', { timeout: 120_000 }, async () => {
    const prefix = await openAndConnect(everything);
    const resources = page.getByTestId(`${prefix}-resources`);
    await resources.locator('li').first().waitFor();
    await resources.getByRole('button', { name: /^Read / }).first().click();
    const read = page.getByTestId(`${prefix}-read`);
    await read.waitFor();
    const text = await read.innerText();
    expect(text).toMatch(/Written by the server Everything/);
    expect(text).not.toContain(everything.serverId);
    await look(page, 'server-data-resource', { focus: read });
  });

  it('a prompt is filled in with the server\'s suggestions as a list under the field', { timeout: 120_000 }, async () => {
    const prefix = `account-${everything.serverId}-${everything.accountId}`;
    const prompts = page.getByTestId(`${prefix}-prompts`);
    await prompts.getByRole('button', { name: 'Use the prompt Team Management' }).click();
    const field = prompts.getByLabel('department (required)');
    await field.fill('S');
    const list = prompts.locator('datalist').first();
    await expect.poll(async () => list.locator('option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value)), { timeout: 20_000 }).toEqual(['Sales', 'Support']);
    await field.fill('Sales');
    await prompts.getByLabel('name (required)').fill('Eve');
    await prompts.getByRole('button', { name: "Show the prompt's text" }).click();
    const shown = page.getByTestId(`${prefix}-prompt-text`);
    await shown.waitFor();
    expect(await shown.innerText()).toMatch(/Please promote Eve to the head of the Sales team/);
    await look(page, 'server-data-prompt-form', { focus: shown });
  });

  it('a prompt whose "user" message claims to be the person is shown as the server\'s before it enters a conversation, and stays the server\'s in it', { timeout: 120_000 }, async () => {
    const prefix = await openAndConnect(notes);
    const prompts = page.getByTestId(`${prefix}-prompts`);
    await prompts.getByRole('button', { name: 'Use the prompt Summarize' }).click();
    await prompts.getByRole('button', { name: "Show the prompt's text" }).click();
    const shown = page.getByTestId(`${prefix}-prompt-text`);
    await shown.waitFor();
    const words = await shown.innerText();
    expect(words).toContain(FAKE_USER_TEXT);
    expect(words).toMatch(/From Notes — the server labels it “user”/);
    expect(words).toMatch(/Reads like instructions to an AI model/);
    await look(page, 'server-data-hostile-prompt', { focus: shown });

    await page.getByTestId(`${prefix}-prompt-attach`).click();
    await page.getByTestId(`chat-item-${conversationId}`).click();
    const chips = page.getByTestId('chat-attachments');
    expect(await chips.innerText()).toMatch(/Prompt from-the-user from Notes \(the server's text\)/);
    await page.getByTestId('chat-input').fill('Is this safe?');
    await page.getByTestId('chat-send').click();
    const attached = page.getByTestId('msg-attachment');
    await attached.waitFor({ timeout: 30_000 });
    await expect.poll(() => model.requests.length, { timeout: 30_000 }).toBe(1);
    expect(await page.locator('.msg-user-text').last().innerText()).toBe('Is this safe?');
    expect(await attached.locator('summary').innerText()).toMatch(/Prompt from-the-user from Notes — the server's text, not yours/);
    await attached.locator('summary').click();
    await look(page, 'server-data-chat-attachment', {
      arrange: (p) => p.evaluate("document.querySelector('[data-testid=chat-messages]')?.scrollTo(0, 1e9)"),
    });
    expect(errors.pageErrors).toEqual([]);
  });
  it('when a server says its resources and prompts changed, the lists shown are read again without a click', { timeout: 120_000 }, async () => {
    const def = stdioFixture('ignored', 'changing-lists');
    const notebook = await add({ name: 'Notebook', transport: 'stdio', command: def.command, args: def.args, env: [] });
    const prefix = await openAndConnect(notebook);
    const resources = page.getByTestId(`${prefix}-resources`);
    const prompts = page.getByTestId(`${prefix}-prompts`);
    await expect.poll(() => resources.innerText(), { timeout: 20_000 }).toContain('First note');
    expect(await prompts.innerText()).toContain('First prompt');
    expect(await resources.innerText()).not.toContain('Added note 1');
    // The server grows its lists (here through its own tool, run by the test) and says so.
    await call('permissions:set', { scope: 'tool', ...notebook, toolName: 'grow', mode: 'allow' });
    expect((await core!.gate.gate.request({ source: 'user', ...notebook, toolName: 'grow', arguments: {} })).state).toBe('succeeded');
    await expect.poll(() => resources.innerText(), { timeout: 20_000 }).toContain('Added note 1');
    await expect.poll(() => prompts.innerText(), { timeout: 20_000 }).toContain('Added prompt 1');
    expect(errors.pageErrors).toEqual([]);
  });
});
