/**
 * Questions servers ask, as a person sees them: the built renderer in headless Chromium over the
 * test host and the real core, with server-everything (its form of every field type) and a hostile
 * server that asks for a password (test/fixtures/servers/phishing-form.ts) as real stdio processes.
 * The form is labelled with Warden's names for the server and account; a form asking for a secret
 * never shows, a warning does; and a compromised window cannot turn an answer into an approval.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { dispatch } from '../../electron/core/dispatch';
import type { AnswerConfirmation } from '../../electron/core/elicitation/elicitation';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock } from '../../electron/core/ports';
import type { ServerView } from '../../shared/domain/servers';
import type { ChannelName } from '../../shared/ipc';
import { look } from '../helpers/look';
import type { TestHost } from '../host/test-host';
import { closeInOrder, openAppInBrowser } from '../helpers/app-in-browser';
import { stdioFixture } from '../integration/mcp/helpers';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = resolve(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

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

/** Adds, connects and allows `tools` of a stdio server; returns its (server, account). */
async function add(name: string, command: string, args: string[], accountLabel: string, tools: string[]): Promise<{ serverId: string; accountId: string }> {
  const added = await call<ServerView>('servers:add', { definition: { name, transport: 'stdio', command, args, env: [] }, accountLabel });
  const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
  await call('connections:connect', key);
  for (const toolName of tools) await call('permissions:set', { scope: 'tool', ...key, toolName, mode: 'allow' });
  return key;
}

/** What the native "send this answer?" step was shown; it answers Don't send. */
const confirmations: AnswerConfirmation[] = [];
let everything: { serverId: string; accountId: string };
let phishing: { serverId: string; accountId: string };

describe('questions servers ask, in the app', () => {
  beforeAll(async () => {
    core = createCore({ confirmServerChange: confirmEveryServerChange,
      version: '0.1.0-e2e-questions',
      journal: new MemoryJournal(systemClock),
      gate: { prompter: { prompt: async () => 'approve' } },
      connections: { reconnect: { maxAttempts: 0 } },
      elicitor: { url: async () => 'cancel', confirmAnswer: async (c) => (confirmations.push(c), false) },
    });
    everything = await add('Everything', process.execPath, [EVERYTHING, 'stdio'], 'Work', ['trigger-elicitation-request']);
    const fixture = stdioFixture('ignored', 'phishing-form');
    phishing = await add('Notes helper', fixture.command, fixture.args, 'Personal', ['sign_in', 'ask_form']);
    ({ host, browser, page } = await openAppInBrowser(core, { consoleErrors, pageErrors }));
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
    );
  });

  it("a server's form is shown labelled with the server and account, generated from its schema, and the answer reaches the server", async () => {
    const running = core!.gate.gate.request({ source: 'user', ...everything, toolName: 'trigger-elicitation-request', arguments: {} });
    const question = page.getByTestId('question');
    await question.waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('question-heading').innerText()).toBe('Everything (Work) asks you a question');
    expect(await page.getByTestId('question-message').innerText()).toBe("The server says (its own words, not Warden's): Please provide inputs for the following fields:");
    expect(await page.getByTestId('question-note').innerText()).toContain('It does not approve any tool call');
    await page.getByTestId('run-field-/name').fill('Ada Lovelace');
    await look(page, 'question-form', { focus: 'question', scope: '[data-testid="server-questions"]' });
    await page.getByTestId('question-send').click();
    const op = await running;
    expect(op.state).toBe('succeeded');
    expect(JSON.stringify(op.result)).toContain('- Name: Ada Lovelace');
    await question.waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('Send with a required field empty names the field and sends nothing; Decline reaches the server as a decline', async () => {
    const running = core!.gate.gate.request({ source: 'user', ...everything, toolName: 'trigger-elicitation-request', arguments: {} });
    await page.getByTestId('question').waitFor({ timeout: 30_000 });
    await page.getByTestId('question-send').click();
    await page.getByTestId('run-problem-/name').waitFor();
    expect(await page.getByTestId('question').count()).toBe(1);
    await page.getByTestId('question-decline').click();
    expect(JSON.stringify((await running).result)).toContain('User declined');
  });

  it('a form asking for a password never shows: a warning names the server, the account and the field', async () => {
    const op = await core!.gate.gate.request({ source: 'user', ...phishing, toolName: 'sign_in', arguments: {} });
    expect(JSON.stringify(op.result)).toContain('Warden refused the form');
    const warning = page.getByTestId('refused-form');
    await warning.waitFor({ timeout: 10_000 });
    const words = await warning.innerText();
    expect(words).toContain('Warden refused a form from Notes helper (Personal).');
    expect(words).toContain('The field “password” was refused because its name asks for a secret (“password”).');
    expect(words).toContain("don't type a secret into any form a server shows you");
    expect(await page.getByTestId('question').count()).toBe(0);
    await look(page, 'question-refused', { focus: 'refused-form', scope: '[data-testid="server-questions"]' });
    await page.getByTestId('refused-form-dismiss').click();
    await warning.waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('a form that might ask for a secret shows a warning above its fields, and Send goes through the native step first', async () => {
    const running = core!.gate.gate.request({ source: 'user', ...phishing, toolName: 'ask_form', arguments: { form: 'bare-code' } });
    const question = page.getByTestId('question');
    await question.waitFor({ timeout: 30_000 });
    const warning = await page.getByTestId('question-warning').innerText();
    expect(warning).toContain('This form may be asking for a secret: the field “code” might ask for a one-time code');
    expect(warning).toContain('Warden asks you once more before it leaves');
    await page.getByTestId('run-field-/code').fill('A1B2');
    await look(page, 'question-doubtful', { focus: 'question', scope: '[data-testid="server-questions"]' });
    await page.getByTestId('question-send').click();
    const text = JSON.stringify((await running).result);
    expect(confirmations.map((c) => [c.serverLabel, c.accountLabel, c.fields])).toEqual([['Notes helper', 'Personal', ['code']]]);
    // Don't send in the native step: the server is told no, and never gets the value.
    expect(text).toContain('{\\"action\\":\\"decline\\"}');
    expect(text).not.toContain('A1B2');
    await question.waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('a compromised window cannot answer a pending approval through elicitation, nor approve anything', async () => {
    const held = await core!.gate.gate.submit({ source: 'model', ...phishing, toolName: 'ask_name', arguments: {} });
    expect(held.state).toBe('awaiting_approval');
    const forged = await page.evaluate(
      async (operationId) => {
        const w = (globalThis as unknown as { warden: { elicitation: { answer(r: unknown): Promise<unknown> } } }).warden;
        return w.elicitation.answer({ questionId: operationId, action: 'accept', content: { name: 'yes' } });
      },
      held.operationId,
    );
    expect(forged).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(core!.gate.gate.getLive(held.operationId)!.state).toBe('awaiting_approval');
  });

  it('ran with no page errors and no CSP violations', async () => {
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    expect(consoleErrors.filter((e) => !/favicon/.test(e))).toEqual([]);
  });
});
