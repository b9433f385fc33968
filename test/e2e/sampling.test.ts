/**
 * The sampling setting as a person sees it: the built renderer in headless Chromium over the test
 * host, the real core, and @modelcontextprotocol/server-everything as a real stdio process. In a
 * server's details a person chooses whether the server may use their model; a looser choice is
 * applied only after Warden's native confirmation (a scripted stand-in for main's dialog here),
 * and the panel shows the setting as it really is when the confirmation is refused.
 */
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock } from '../../electron/core/ports';
import type { SamplingLoosening } from '../../electron/core/sampling/sampling-service';
import type { ServerView } from '../../shared/domain/servers';
import type { ChannelName } from '../../shared/ipc';
import { closeInOrder, openAppInBrowser, type AppInBrowser } from '../helpers/app-in-browser';
import { look } from '../helpers/look';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = resolve(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

let core: WardenCore | undefined;
let app: AppInBrowser | undefined;
let page: Page;
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };
/** The stand-in for main's confirmation: what it was asked, and what the person answers next. */
const loosenings: SamplingLoosening[] = [];
let confirmNext = false;

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

describe('whether a server may use the person’s model, as a person sees it', () => {
  beforeAll(async () => {
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-sampling',
      journal: new MemoryJournal(systemClock),
      gate: { prompter: { prompt: async () => 'deny' } },
      connections: { reconnect: { maxAttempts: 0 } },
      sampling: {
        asker: {
          ask: async () => 'deny',
          reviewReply: async () => false,
          confirmLoosening: async (change) => {
            loosenings.push(change);
            return confirmNext;
          },
        },
      },
    });
    app = await openAppInBrowser(core, errors);
    page = app.page;
  }, 120_000);

  afterAll(() =>
    closeInOrder(
      () => app?.browser.close(),
      () => app?.host.close(),
      () => core?.close(),
    ),
  );

  it('off by default; a looser choice waits for the native confirmation and is not applied without it', { timeout: 180_000 }, async () => {
    const added = await call<ServerView>('servers:add', {
      definition: { name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] },
      accountLabel: 'Work',
    });
    const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    const prefix = `account-${key.serverId}-${key.accountId}`;

    await page.getByTestId('nav-servers').click();
    await page.getByTestId(`server-open-${key.serverId}`).click();
    const section = page.getByTestId(`${prefix}-sampling`);
    await section.waitFor();
    await expect.poll(() => page.getByTestId(`${prefix}-sampling-off`).isChecked()).toBe(true);
    const text = await section.innerText();
    expect(text).toContain('May this server use your model?');
    expect(text).toContain('6 requests a minute, 4096 tokens per reply, 40000 tokens an hour');
    expect(text).not.toContain(key.serverId);
    expect(text).not.toContain(key.accountId);
    await look(page, 'sampling-off', { focus: section });

    // The person refuses the confirmation: nothing changes, and the panel says so.
    confirmNext = false;
    await page.getByTestId(`${prefix}-sampling-always`).click();
    await expect.poll(() => section.getByRole('status').innerText()).toContain('Not changed');
    expect(await page.getByTestId(`${prefix}-sampling-off`).isChecked()).toBe(true);
    expect(loosenings.at(-1)).toMatchObject({ serverName: 'Everything', accountName: 'Work', to: { mode: 'always' } });
    expect((await call<{ setting: { mode: string } }>('sampling:get', key)).setting.mode).toBe('off');

    // Confirmed: Ask me each time is saved and shown.
    confirmNext = true;
    // A click, not check(): the radio follows the core's answer, which comes after the dialog.
    await page.getByTestId(`${prefix}-sampling-ask`).click();
    await expect.poll(() => section.getByRole('status').innerText()).toBe('Saved.');
    await expect.poll(() => page.getByTestId(`${prefix}-sampling-ask`).isChecked()).toBe(true);
    expect((await call<{ setting: { mode: string } }>('sampling:get', key)).setting.mode).toBe('ask');
    await look(page, 'sampling-ask', { focus: section });
    expect(errors.pageErrors).toEqual([]);
  });
});
