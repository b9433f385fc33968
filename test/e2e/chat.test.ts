/**
 * Chat end to end: the built renderer in headless Chromium, over the test host, against the REAL
 * core (gate, policy store, ledger-less journal, connection layer) and the in-process demo server,
 * whose own record says what it received. The only stand-in is main's native dialog (Electron's
 * `dialog`), replaced by a prompter that records what it was shown and answers as each test says:
 * the renderer itself has no way to approve anything.
 *
 * Each sentence of the README's account of the offline demo (the prompt-injection lab) is a test
 * below.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { openDemoTransport, type DemoState } from '../../electron/core/demo/demo-server';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { look } from '../helpers/look';
import { DialogStandIn, MapKeychain } from '../integration/chat/helpers';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { openLedgerForApp } from '../../electron/core/ledger';

const root = fileURLToPath(new URL('../../', import.meta.url));
const resultsDir = `${root}test-results`;
/** Pending approvals expire after this long in the expiry test, which waits it out. */
const TTL_MS = 6_000;
/**
 * The approval expiry the gate reads for each new approval: the usual 10 minutes, so looking at a
 * pending call (screenshots and axe in both themes and sizes) never outlasts it; TTL_MS only while
 * the expiry test runs.
 */
let ttlMs = 10 * 60_000;

let core: WardenCore;
let ledgerDir = '';
let host: TestHost;
let browser: Browser;
let page: Page;
const dialogs = new DialogStandIn();
const demos: DemoState[] = [];
const errors = { consoleErrors: [] as string[], pageErrors: [] as string[] };

const received = () => demos.flatMap((d) => d.calls.map((c) => c.tool));
const notes = () => demos.flatMap((d) => d.notes.map((n) => n.text));
/** Looks at the Chat view (both sizes, both themes, axe, clipping) with the newest messages in sight. */
const shot = (name: string) =>
  look(page, `chat-${name}`, {
    // The newest messages, as a person sees them after the window is resized.
    arrange: (p) => p.evaluate("document.querySelector('[data-testid=chat-messages]')?.scrollTo(0, 1e9)"),
  });
/** Sends a message the way a person does: type, then Enter. */
async function send(text: string) {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-input').press('Enter');
  // The composer clears only once the core accepted the message (it ignores Enter while busy).
  await expect.poll(() => page.getByTestId('chat-input').inputValue(), { timeout: 30_000 }).toBe('');
}
/**
 * The reply is over: the conversation is idle and the person's message is not the last one. (Idle
 * alone can be the state from before the message, read before the change event arrives.)
 */
const REPLY_OVER = `(() => {
  const state = document.querySelector('[data-testid="chat-state"]')?.getAttribute('data-state');
  const last = [...document.querySelectorAll('[data-testid="chat-messages"] .msg, [data-testid="chat-messages"] .msg-notice')].at(-1);
  return state === 'idle' && (last === undefined || !last.classList.contains('msg-user'));
})()`;
const idle = () => expect.poll(() => page.evaluate(REPLY_OVER), { timeout: 30_000, interval: 50 }).toBe(true);
/** The last card of a tool (by name) in the open conversation. */
const card = (tool: string) => page.locator(`[data-testid^="call-"][data-status]`).filter({ has: page.locator('.tool-card-name', { hasText: new RegExp(`^${tool}$`) }) }).last();

describe('chat in a real browser against the real core and the demo server', () => {
  beforeAll(async () => {
    await mkdir(resultsDir, { recursive: true });
    // The activity log on disk, as the app keeps it: the screenshots show what a person sees.
    ledgerDir = await mkdtemp(path.join(tmpdir(), 'warden-e2e-chat-'));
    core = createCore({
      ledger: (await openLedgerForApp(ledgerDir)).ledger,
      confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-chat',
      platform: 'e2e-test-os',
      offerDemoServer: true,
      servers: { secrets: new MapKeychain() },
      gate: { prompter: dialogs.prompter, approvalTtlMs: () => ttlMs },
      chat: { demoChunkDelayMs: 8 },
      connections: {
        reconnect: { maxAttempts: 0 },
        builtinTransport: async () => {
          const opened = await openDemoTransport();
          demos.push(opened.state);
          return opened.transport;
        },
      },
    });
    await core.demoOffered;
    ({ host, browser, page } = await openAppInBrowser(core, errors));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
      () => rm(ledgerDir, { recursive: true, force: true }),
    );
  });

  it('on first start a new user is one click from trying the demo: Chat is the home and offers it', async () => {
    await page.getByTestId('chat-welcome').waitFor();
    expect(await page.getByTestId('nav-chat').getAttribute('aria-current')).toBe('page');
    await shot('welcome');
    await page.getByTestId('chat-try-demo').click();
    await page.getByTestId('chat-demo-badge').waitFor();
    expect(await page.getByTestId('chat-demo-badge').innerText()).toMatch(/Scripted demo: not a real model/);
    await idle();
  });

  it('the inbox result is flagged on its card', async () => {
    const inbox = card('read_inbox');
    expect(await inbox.getAttribute('data-status')).toBe('succeeded');
    expect(await inbox.locator('[data-testid$="-flag"]').innerText()).toMatch(/possible prompt injection/);
    // Why it ran (the reason) and how it ended (the outcome) are separate lines.
    expect(await inbox.locator('[data-testid$="-why"]').innerText()).toMatch(/^Why: It ran without asking because the demo’s starting rules set Always Allow for read_inbox on .+\.$/);
    expect(await inbox.locator('[data-testid$="-outcome"]').innerText()).toBe('Outcome: Done: the server answered.');
  });

  it('the delete the model obeys never reaches the server: not offered, and named anyway it is "not permitted"', async () => {
    const del = card('notes_delete');
    expect(await del.getAttribute('data-status')).toBe('not_permitted');
    expect(await del.innerText()).toMatch(/Not offered to the model/);
    expect(await del.locator('[data-testid$="-why"]').innerText()).toMatch(/^Why: Refused because the demo’s starting rules set Disabled for notes_delete on .+\. Not offered to the model/);
    expect(await del.locator('[data-testid$="-outcome"]').innerText()).toBe('Outcome: Nothing ran.');
    expect(received()).toEqual(['read_inbox']);
    expect(notes()).toEqual(['Welcome to Warden. Every tool call goes through the gate first.']);
    await page.getByTestId('chat-tools-toggle').click();
    const row = page.getByTestId('chat-tool-notes_delete');
    expect(await row.innerText()).toMatch(/Disabled[\s\S]*not offered/);
    await page.getByTestId('chat-tools-toggle').click();
    const last = page.locator('.msg-assistant').last();
    expect(await last.innerText()).toMatch(/not permitted, so nothing was deleted/);
    await shot('inbox');
  });

  it('Activity says why the delete did not run: the rule that disables it, never "no decision was recorded"', async () => {
    await page.getByTestId('nav-activity').click();
    const row = page.locator('[data-testid="activity-row"]').filter({ hasText: 'notes_delete' });
    await row.first().waitFor({ timeout: 15_000 });
    expect(await row.first().locator('.pill').first().innerText()).toBe('Disabled');
    await row.first().getByTestId('activity-row-toggle').click();
    const why = await page.getByTestId('activity-call-details').getByTestId('activity-why').innerText();
    expect(why).toContain('Why did this not run?');
    // Who set the rule is said once, by the rule's own reason.
    expect(why).toMatch(/Decision\s+Refused because the demo’s starting rules set Disabled for notes_delete on [^\n]+\.\n/);
    expect(why).not.toMatch(/decided by your rules/);
    expect(why).not.toMatch(/No decision was recorded/);
    await look(page, 'chat-activity-delete', { focus: 'activity-call-details' });
    await page.getByTestId('nav-chat').click();
  });

  it('saving a note waits and writes nothing until approved; the Review button opens the native dialog; an approval works once', async () => {
    dialogs.single = 'approve';
    await send('Save a note: buy milk');
    await page.getByTestId('chat-pending').waitFor({ timeout: 30_000 });
    const save = card('notes_add');
    expect(await save.getAttribute('data-status')).toBe('awaiting_approval');
    expect(await save.locator('.tool-card-preview').innerText()).toBe('Add a demo note: "buy milk"');
    expect(notes()).not.toContain('buy milk');
    // Nothing in this window approves: the only approval-related control asks for Warden's dialog.
    expect(await page.getByRole('button', { name: /^approve/i }).count()).toBe(0);
    await shot('pending');
    const before = dialogs.shown.length;
    await page.getByTestId('chat-review').click();
    await page.locator('[data-testid^="call-"][data-status="succeeded"]').filter({ has: page.locator('.tool-card-name', { hasText: /^notes_add$/ }) }).waitFor({ timeout: 30_000 });
    expect(dialogs.shown.length).toBe(before + 1);
    expect(dialogs.shown.at(-1)!.argumentsJson).toContain('"text": "buy milk"');
    expect(dialogs.shown.at(-1)!.argumentsText).toBe('text: buy milk');
    expect(notes()).toContain('buy milk');
    await idle();
    expect(await save.locator('[data-testid$="-why"]').innerText()).toBe('Why: You approved it in Warden’s dialog.');
    expect(await save.locator('[data-testid$="-outcome"]').innerText()).toBe('Outcome: Done: the server answered.');
    await page.evaluate("document.querySelector('[data-testid=chat-messages]')?.scrollTo(0, 1e9)");
    await shot('approved-card');
    const opId = core.chat.get((await core.chat.list())[0]!.id).messages.flatMap((m) => m.toolCalls).find((c) => c.toolName === 'notes_add')!.operationId!;
    await expect(core.gate.gate.approve(opId)).rejects.toThrow(/single-use|cannot be approved/);
    expect(received().filter((t) => t === 'notes_add')).toHaveLength(1);
    expect(await page.getByTestId('chat-pending').count()).toBe(0);
  });

  it('declining writes nothing and the model is told', async () => {
    dialogs.single = 'deny';
    await send('Save a note: sell the car');
    await page.getByTestId('chat-pending').waitFor({ timeout: 30_000 });
    await page.getByTestId('chat-review').click();
    await page.locator('[data-testid^="call-"][data-status="declined"]').waitFor({ timeout: 30_000 });
    await idle();
    expect(await page.locator('.msg-assistant').last().innerText()).toMatch(/You declined/);
    const declined = page.locator('[data-testid^="call-"][data-status="declined"]').last();
    expect(await declined.locator('[data-testid$="-why"]').innerText()).toBe('Why: You denied it in Warden’s dialog.');
    expect(await declined.locator('[data-testid$="-outcome"]').innerText()).toBe('Outcome: Nothing ran.');
    expect(notes()).not.toContain('sell the car');
  });

  it('an unknown tool is refused', async () => {
    await send('Call format_disk');
    await idle();
    const unknown = card('format_disk');
    expect(await unknown.getAttribute('data-status')).toBe('not_permitted');
    expect(received()).not.toContain('format_disk');
  });

  it('an expired approval runs nothing', async () => {
    ttlMs = TTL_MS;
    onTestFinished(() => {
      ttlMs = 10 * 60_000;
    });
    await send('Save a note: too late');
    await page.getByTestId('chat-pending').waitFor({ timeout: 30_000 });
    await page.locator('[data-testid^="call-"][data-status="expired"]').waitFor({ timeout: TTL_MS + 20_000 });
    await idle();
    expect(notes()).not.toContain('too late');
    expect(await page.locator('.msg-assistant').last().innerText()).toMatch(/expired, so nothing ran/);
  });

  it('Shift+Enter makes a new line, Enter sends, and Esc stops a reply mid-stream', async () => {
    const input = page.getByTestId('chat-input');
    await input.fill('hello');
    await input.press('Shift+Enter');
    await input.type('there');
    expect(await input.inputValue()).toBe('hello\nthere');
    await input.press('Enter');
    await page.locator('.msg-assistant[data-streaming="true"]').waitFor({ timeout: 30_000 });
    await page.keyboard.press('Escape');
    await idle();
    expect(await page.getByTestId('chat-notice').last().innerText()).toMatch(/^Stopped by you/);
    const last = core.chat.get((await core.chat.list())[0]!.id).messages.filter((m) => m.role === 'assistant').at(-1)!;
    expect(last.text.length).toBeLessThan(200);
  });

  it('conversations can be created, searched by title, renamed and deleted; a new one shows usage', async () => {
    await page.getByTestId('chat-new').click();
    await page.getByTestId('chat-title').filter({ hasText: 'New conversation' }).waitFor();
    await send('List my notes');
    await idle();
    expect(await page.getByTestId('chat-usage').innerText()).toMatch(/Tokens in this conversation: [1-9]\d* in · [1-9]\d* out/);
    await page.getByTestId('chat-search').fill('inbox');
    await expect.poll(() => page.locator('[data-testid^="chat-item-"]').count()).toBe(1);
    await page.getByTestId('chat-search').fill('');
    await expect.poll(() => page.locator('[data-testid^="chat-item-"]').count()).toBe(2);
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('Conversation title').fill('Notes check');
    await page.getByLabel('Conversation title').press('Enter');
    await page.getByTestId('chat-title').filter({ hasText: 'Notes check' }).waitFor();
    await shot('conversation');
    // No serious accessibility violations in the Chat view, with a tool panel open (look runs axe in both themes).
    await page.getByTestId('chat-tools-toggle').click();
    await shot('tools-panel');
    await page.getByTestId('chat-tools-toggle').click();
    await page.getByTestId('chat-delete').click();
    await expect.poll(() => page.locator('[data-testid^="chat-item-"]').count()).toBe(1);
    expect(errors.pageErrors).toEqual([]);
    expect(errors.consoleErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
  });
});
