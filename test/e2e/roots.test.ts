/**
 * Roots as a person sees them: the built renderer in headless Chromium over the test host, the
 * real core, and @modelcontextprotocol/server-everything as a real stdio process. In a server's
 * details a person adds a folder through the folder chooser (the test host's scripted stand-in for
 * main's native dialog), the server itself reports it among its roots, and Remove takes it away
 * again. The empty state says what roots are: a request to the server, not a wall — unless the
 * person turns on "Keep this server inside its folders", which the matrix then shows per server and
 * per tool that takes a path; the page itself cannot turn it off without the native dialog.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { dispatch } from '../../electron/core/dispatch';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock } from '../../electron/core/ports';
import type { ServerView } from '../../shared/domain/servers';
import type { ChannelName } from '../../shared/ipc';
import { look } from '../helpers/look';
import { scriptedFileDialogs } from '../host/standin-file-dialogs';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = resolve(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = resolve(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
/** What the stand-in for main's native dialog answers (permission changes and approvals). */
let dialogAnswer: 'approve' | 'deny' = 'approve';

let core: WardenCore | undefined;
let host: TestHost | undefined;
let browser: Browser | undefined;
let page: Page;
let dir: string;
const dialogs = scriptedFileDialogs();
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

/** What server-everything itself says its roots are (its get-roots-list tool, through the gate). */
async function serverSees(key: { serverId: string; accountId: string }): Promise<string> {
  const op = await core!.gate.gate.request({ source: 'user', ...key, toolName: 'get-roots-list', arguments: {} });
  expect(op.state).toBe('succeeded');
  return JSON.stringify(op.result);
}

describe('the folders a server may work in, as a person sees them', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-e2e-roots-'));
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-roots',
      journal: new MemoryJournal(systemClock),
      fileDialogs: dialogs,
      gate: { prompter: { prompt: async () => dialogAnswer } },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    ({ host, browser, page } = await openAppInBrowser(core, errors));
  }, 120_000);

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => rmSync(dir, { recursive: true, force: true }),
    );
  });

  it('a folder added with Add folder… reaches the server, Remove takes it away, and the empty state says roots are a request, not a wall', { timeout: 180_000 }, async () => {
    const added = await call<ServerView>('servers:add', {
      definition: { name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] },
      accountLabel: 'Work',
    });
    const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    const prefix = `account-${key.serverId}-${key.accountId}`;

    await page.getByTestId('nav-servers').click();
    await page.getByTestId(`server-open-${key.serverId}`).click();
    await page.getByTestId(`${prefix}-connect`).click();
    await page.locator(`[data-testid="${prefix}-status"][data-state="connected"]`).waitFor({ timeout: 60_000 });
    // Asked only by this test (to read what the server itself holds), never by the person.
    await expect.poll(async () => (await dispatch(core!.handlers, 'permissions:set', { scope: 'tool', ...key, toolName: 'get-roots-list', mode: 'allow' })).ok, { timeout: 20_000 }).toBe(true);

    const section = page.getByTestId(`${prefix}-roots`);
    await page.getByTestId(`${prefix}-roots-empty`).waitFor();
    const empty = await section.innerText();
    expect(empty).toContain('Folders this server may work in');
    expect(empty).toContain('a request to the server, not a wall');
    expect(empty).not.toContain(key.serverId);
    expect(empty).not.toContain(key.accountId);
    await look(page, 'roots-empty', { focus: section });

    // A cancelled chooser changes nothing and says so.
    await section.getByRole('button', { name: 'Add folder…' }).click();
    await expect.poll(() => section.getByRole('status').innerText()).toContain('nothing changed');
    expect(await call('roots:list', key)).toEqual({ roots: [], enforced: false });

    const folder = mkdtempSync(join(dir, 'garden-plans-'));
    const name = folder.split('/').at(-1)!;
    dialogs.choose(folder);
    await section.getByRole('button', { name: 'Add folder…' }).click();
    const list = page.getByTestId(`${prefix}-roots-list`);
    await list.waitFor();
    expect(await list.innerText()).toContain(name);
    expect(await list.innerText()).toContain(folder);
    expect(dialogs.requests.at(-1)).toEqual({ title: 'Choose a folder Everything may work in' });
    expect(await call('roots:list', key)).toEqual({ roots: [{ path: folder, name }], enforced: false });
    // The server asks again when told its roots changed (asynchronously, on its side).
    const uri = pathToFileURL(folder).href;
    await expect.poll(() => serverSees(key), { timeout: 20_000 }).toContain(`URI: ${uri}`);
    await look(page, 'roots-one-folder', { focus: section });

    await section.getByRole('button', { name: `Remove the folder ${name}` }).click();
    await page.getByTestId(`${prefix}-roots-empty`).waitFor();
    expect(await call('roots:list', key)).toEqual({ roots: [], enforced: false });
    await expect.poll(() => serverSees(key), { timeout: 20_000 }).toContain('no roots are currently configured');
    expect(errors.pageErrors).toEqual([]);
  });

  it('“Keep this server inside its folders”: the matrix shows it on the server and on tools that take a path, and the page cannot turn it off without the native dialog', { timeout: 180_000 }, async () => {
    const project = join(realpathSync(dir), 'holiday-photos');
    mkdirSync(project);
    const added = await call<ServerView>('servers:add', {
      definition: { name: 'Files', transport: 'stdio', command: process.execPath, args: [FILESYSTEM, project], env: [] },
      accountLabel: 'Home',
    });
    const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    const prefix = `account-${key.serverId}-${key.accountId}`;
    await page.getByTestId('nav-servers').click();
    // Back from the server the test above opened, to the list.
    if (await page.getByTestId('server-details-back').isVisible()) await page.getByTestId('server-details-back').click();
    await page.getByTestId(`server-open-${key.serverId}`).click();
    await page.getByTestId(`${prefix}-connect`).click();
    await page.locator(`[data-testid="${prefix}-status"][data-state="connected"]`).waitFor({ timeout: 60_000 });
    dialogs.choose(project);
    const section = page.getByTestId(`${prefix}-roots`);
    await section.getByRole('button', { name: 'Add folder…' }).click();
    await page.getByTestId(`${prefix}-roots-list`).waitFor();

    const box = page.getByTestId(`${prefix}-roots-enforce`);
    expect(await box.isChecked()).toBe(false);
    // A click, not check(): the box follows the core's answer, which can come after the click returns.
    await box.click();
    await expect.poll(() => section.getByRole('status').innerText()).toContain('now ask first');
    await expect.poll(() => box.isChecked()).toBe(true);
    expect(await section.innerText()).toContain('Warden keeps it inside them');
    expect(await call('roots:list', key)).toMatchObject({ enforced: true });
    await look(page, 'roots-enforced', { focus: section });

    await page.getByTestId('nav-permissions').click();
    // The other server's many tools come first; a person would search for this one.
    await page.getByTestId('perm-search').fill('read_text_file');
    const server = page.getByTestId(`perm-server-${key.serverId}`);
    await server.waitFor();
    expect(await page.getByTestId(`perm-server-roots-${key.serverId}`).innerText()).toBe('Kept inside its folders');
    // What that means is in the server's details and the tool's, one click on a name away.
    await page.getByTestId(`perm-server-details-${key.serverId}`).click();
    expect(await page.getByTestId(`perm-server-roots-explain-${key.serverId}`).innerText()).toContain('a call with a path outside them asks first');
    // The server's long description is shown whole once the row is opened (as a person would).
    await page.getByTestId(`perm-details-${key.serverId}-${key.accountId}-read_text_file`).click();
    const rowRoots = page.getByTestId(`perm-roots-${key.serverId}-${key.accountId}-read_text_file`);
    expect(await rowRoots.innerText()).toContain('Calls with a path (path) outside Home’s folder ask first');
    await look(page, 'permissions-roots-enforced', { focus: server });

    // A compromised page calls the bridge directly: the person says no in the native dialog.
    dialogAnswer = 'deny';
    try {
      const answer = (await page.evaluate(`window.warden.roots.enforce({ serverId: ${JSON.stringify(key.serverId)}, enforced: false })`)) as { ok: boolean; error?: { code: string } };
      expect(answer).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    } finally {
      dialogAnswer = 'approve';
    }
    expect(await call('roots:list', key)).toMatchObject({ enforced: true });
    expect(errors.pageErrors).toEqual([]);
  });
});
