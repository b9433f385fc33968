/**
 * End to end: the built renderer in headless Chromium, talking over the test host to the REAL
 * core (docs/ARCHITECTURE.md, "How each layer is tested"). Proves the shell renders and navigates, shows live status from the core,
 * round-trips contract calls, rejects invalid payloads, exposes exactly the contract on
 * window.warden, keeps the socket closed to anyone but its own page, and runs clean under the
 * strict CSP.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH, openWatchedAppPage } from '../helpers/chromium';
import { look } from '../helpers/look';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import type { Handlers } from '../../electron/core/dispatch';
import { expectedApiPaths } from '../../shared/ipc';
import { WardenError } from '../../shared/result';
import { ensureRendererBuilt } from '../host/build-renderer';
import { startTestHost, type TestHost } from '../host/test-host';
import { closeInOrder } from '../helpers/app-in-browser';
import { SUBPROTOCOL, TOKEN_PROTOCOL_PREFIX } from '../host/wire';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const resultsDir = `${root}test-results`;
const VIEWS = ['chat', 'servers', 'permissions', 'approvals', 'activity', 'recovery', 'settings'] as const;

let core: WardenCore;
let host: TestHost;
let browser: Browser;
let page: Page;
/** Nonces the core's ping handler actually received. */
const pingsReceived: string[] = [];
/** When true, the core's status handler fails with a domain error (to show error display). */
let failStatus = false;
const consoleErrors: string[] = [];
const pageErrors: string[] = [];
const hostErrors: string[] = [];

/** Opens a socket to the host from Node; resolves with the socket if it opened, or the HTTP status it was refused with. */
function connect(protocols: string[], origin: string): Promise<{ ws: WebSocket } | { refused: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(host.socketUrl, protocols, { origin });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      res.resume();
      ws.terminate();
    });
    ws.once('error', (error) => reject(error));
  });
}

/** Sends one raw text frame and waits for the next message that is a response (has `id`). */
function exchange(ws: WebSocket, raw: string | Buffer): Promise<{ id: unknown; result: { ok: boolean; value?: unknown; error?: { code: string; message: string } } }> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString());
      if ('id' in message) {
        ws.off('message', onMessage);
        resolve(message);
      }
    };
    ws.on('message', onMessage);
    ws.send(raw);
  });
}

/** Reads the text of a status-bar field. */
const field = (testId: string) => page.getByTestId(testId).innerText();

describe('renderer shell in a real browser against the real core', () => {
  beforeAll(async () => {
    await mkdir(resultsDir, { recursive: true });
    const rendererDir = await ensureRendererBuilt(root);
    core = createCore({ confirmServerChange: confirmEveryServerChange, version: '0.1.0-e2e', platform: 'e2e-test-os' });
    const real = core.handlers;
    const handlers: Handlers = {
      ...real,
      'core:status': (request) => {
        if (failStatus) throw new WardenError('UNSUPPORTED', 'core:status is switched off by the e2e test');
        return real['core:status'](request);
      },
      'core:ping': (request) => {
        pingsReceived.push(request.nonce);
        return real['core:ping'](request);
      },
    };
    host = await startTestHost({
      core: { handlers, events: core.events },
      rendererDir,
      logError: (ctx, e) => hostErrors.push(`${ctx}: ${String(e)}`),
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    page = await openWatchedAppPage(browser, host.url, { width: 1180, height: 720 }, { consoleErrors, pageErrors });
  });

  afterAll(async () => {
    await closeInOrder(
      () => browser?.close(),
      () => host?.close(),
      () => core?.close(),
    );
  });

  it('renders the app frame with navigation for every view, starting on Chat', async () => {
    expect(await page.getByTestId('app-frame').isVisible()).toBe(true);
    const labels = await page.getByRole('navigation', { name: 'Views' }).getByRole('button').allInnerTexts();
    expect(labels.map((l) => l.trim())).toEqual(['Chat', 'Servers', 'Permissions', 'Approvals', 'Activity', 'Recovery', 'Settings']);
    expect(await page.getByTestId('view-chat').isVisible()).toBe(true);
    expect(await page.getByTestId('nav-chat').getAttribute('aria-current')).toBe('page');
    // The stylesheet loaded under style-src 'self' (the sidebar has its dark background from styles.css).
    expect(await page.evaluate(`getComputedStyle(document.querySelector('.sidebar')).backgroundColor`)).toBe('rgb(22, 32, 44)');
  });

  it('navigates between every view and shows exactly one view at a time', async () => {
    for (const id of [...VIEWS].reverse()) {
      await page.getByTestId(`nav-${id}`).click();
      await page.getByTestId(`view-${id}`).waitFor({ state: 'visible' });
      expect(await page.locator('[data-testid^="view-"]').count()).toBe(1);
      expect(await page.getByTestId(`nav-${id}`).getAttribute('aria-current')).toBe('page');
    }
    // The Approvals view states that this window cannot approve.
    await page.getByTestId('nav-approvals').click();
    expect(await page.getByTestId('view-approvals').innerText()).toContain('never in this window');
    await page.getByTestId('nav-chat').click();
  });

  it('status bar says what matters in words, with the developer details behind a toggle', async () => {
    const status = core.status();
    expect(await field('status-servers')).toBe('No servers yet');
    expect(await field('status-pending')).toBe('Nothing waiting for approval');
    expect(await field('status-ledger')).toBe('Activity log not saved to disk');
    // Details are closed until asked for, then show the raw values the core reports.
    expect(await page.getByTestId('status-details').count()).toBe(0);
    const toggle = page.getByTestId('status-details-toggle');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await field('status-connection')).toBe('Live');
    expect(await field('status-version')).toBe(status.version);
    expect(await field('status-platform')).toBe('e2e-test-os');
    expect(await page.getByTestId('status-started').locator('time').getAttribute('datetime')).toBe(status.startedAt);
    expect(await field('status-journal')).toBe(`${status.journal.kind} · ${status.journal.records} records`);
    expect(await field('status-servers-count')).toBe(`${status.servers.connected}/${status.servers.configured} connected`);
    expect(await field('status-pending-count')).toBe(String(status.pendingApprovals));
    expect(await page.getByTestId('safe-mode-banner').count()).toBe(0);
    await look(page, 'shell-status-details');
    await toggle.click();
    expect(await page.getByTestId('status-details').count()).toBe(0);
  });

  it('window.warden exposes exactly the contract, with no generic invoke', async () => {
    const paths = await page.evaluate(`(() => {
      const out = [];
      const w = window.warden;
      for (const domain of Object.getOwnPropertyNames(w)) {
        const d = w[domain];
        if (typeof d !== 'object' || d === null) { out.push(domain + ':' + typeof d); continue; }
        for (const name of Object.getOwnPropertyNames(d)) out.push(domain + '.' + name + (typeof d[name] === 'function' ? '' : ':' + typeof d[name]));
      }
      return out.sort();
    })()`);
    expect(paths).toEqual(expectedApiPaths());
    expect(await page.evaluate(`'invoke' in window.warden || 'ipcRenderer' in window || 'require' in window`)).toBe(false);
    // The page cannot swap the bridge for its own object.
    expect(await page.evaluate(`(() => { try { window.warden = {}; } catch {} return Object.isFrozen(window.warden) && typeof window.warden.core.ping; })()`)).toBe('function');
    // The socket token is not in the page URL or the document.
    expect(page.url()).not.toContain(host.token);
    expect(await page.content()).not.toContain(host.token);
  });

  it('a ping from the page reaches the real core with the nonce the page sent', async () => {
    const nonce = randomUUID();
    const result = (await page.evaluate(`window.warden.core.ping({ nonce: ${JSON.stringify(nonce)} })`)) as {
      ok: boolean;
      value: { nonce: string; receivedAt: string };
    };
    expect(result.ok).toBe(true);
    expect(result.value.nonce).toBe(nonce);
    expect(Number.isNaN(Date.parse(result.value.receivedAt))).toBe(false);
    expect(pingsReceived).toContain(nonce);
  });

  it('an invalid payload returns INVALID_REQUEST and never reaches the handler', async () => {
    const before = pingsReceived.length;
    for (const bad of ['{ nonce: 42 }', '{ nonce: "ok", extra: true }', '{}']) {
      const result = (await page.evaluate(`window.warden.core.ping(${bad})`)) as { ok: boolean; error: { code: string; message: string } };
      expect(result.ok).toBe(false);
      expect(result.error.code).toBe('INVALID_REQUEST');
      expect(result.error.message).toContain('core:ping');
    }
    expect(pingsReceived.length).toBe(before);
  });

  it('a pushed core:status-changed event updates the status bar, badge and safe-mode banner', async () => {
    const status = core.status();
    core.events.emit('core:status-changed', {
      ...status,
      journal: { kind: status.journal.kind, records: 41 },
      servers: { configured: 3, connected: 2 },
      pendingApprovals: 7,
      safeMode: true,
    });
    await expect.poll(() => field('status-pending'), { timeout: 15_000 }).toBe('7 calls waiting for your approval');
    expect(await field('status-servers')).toBe('2 of 3 servers connected');
    expect(await field('status-ledger')).toBe('Activity log damaged: every tool asks');
    expect(await page.getByTestId('status-ledger').getAttribute('data-tone')).toBe('danger');
    expect(await page.getByTestId('nav-approvals-badge').innerText()).toMatch(/^7\b/);
    expect(await page.getByTestId('safe-mode-banner').isVisible()).toBe(true);
    await page.getByTestId('status-details-toggle').click();
    expect(await field('status-journal')).toBe(`${status.journal.kind} · 41 records`);
    await look(page, 'shell-status-event');
    await page.getByTestId('status-details-toggle').click();
    // The pending count is a way to the calls: it opens Approvals.
    await page.getByTestId('status-pending').click();
    await page.getByTestId('view-approvals').waitFor();
    await page.getByTestId('nav-chat').click();
    // Back to the core's real status, as main would push after the change is resolved.
    core.events.emit('core:status-changed', core.status());
    await expect.poll(() => page.getByTestId('safe-mode-banner').count(), { timeout: 15_000 }).toBe(0);
  });

  it('a contract error is shown in words (its code under Details), and Retry recovers once the core answers', async () => {
    failStatus = true;
    try {
      await page.reload();
      await page.getByTestId('core-error').waitFor({ state: 'visible', timeout: 30_000 });
      // In words first; the code and the core's message are under Details.
      expect(await page.getByTestId('core-error').innerText()).toContain("This isn't available in this version of Warden or on this computer.");
      expect(await page.getByTestId('core-error-code').textContent()).toBe('UNSUPPORTED');
      expect(await page.getByTestId('core-error-message').textContent()).toContain('switched off by the e2e test');
      expect(await field('status-core-problem')).toContain('not answering');
      expect(await page.getByTestId('status-panel').getAttribute('data-connection')).toBe('error');
    } finally {
      failStatus = false;
    }
    await page.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => page.getByTestId('status-panel').getAttribute('data-connection'), { timeout: 15_000 }).toBe('live');
    expect(await page.getByTestId('core-error').count()).toBe(0);
    expect(await page.getByTestId('status-core-problem').count()).toBe(0);
  });

  it('the socket refuses a wrong token, a missing token and a foreign Origin, and accepts the right pair', async () => {
    const good = `${TOKEN_PROTOCOL_PREFIX}${host.token}`;
    const wrong = `${TOKEN_PROTOCOL_PREFIX}${'0'.repeat(32)}`;
    expect(await connect([SUBPROTOCOL, wrong], host.origin)).toEqual({ refused: 401 });
    expect(await connect([SUBPROTOCOL], host.origin)).toEqual({ refused: 401 });
    expect(await connect([SUBPROTOCOL, `${good}0`], host.origin)).toEqual({ refused: 401 });
    expect(await connect([SUBPROTOCOL, good], 'http://evil.example')).toEqual({ refused: 403 });
    expect(await connect([SUBPROTOCOL, good], host.origin.replace('127.0.0.1', 'localhost'))).toEqual({ refused: 403 });
    // Control: the right token and Origin do connect, so the refusals above are the checks at work.
    const ok = await connect([SUBPROTOCOL, good], host.origin);
    if (!('ws' in ok)) throw new Error(`the right token and origin were refused with ${ok.refused}`);
    try {
      expect(ok.ws.protocol).toBe(SUBPROTOCOL);
      const nonce = randomUUID();
      const reply = await exchange(ok.ws, JSON.stringify({ id: 1, channel: 'core:ping', request: { nonce } }));
      expect(reply).toMatchObject({ id: 1, result: { ok: true, value: { nonce } } });
    } finally {
      ok.ws.terminate();
    }
  });

  it('malformed socket messages get a clear error result and the host keeps serving', async () => {
    const ok = await connect([SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${host.token}`], host.origin);
    if (!('ws' in ok)) throw new Error(`refused with ${ok.refused}`);
    const ws = ok.ws;
    try {
      const cases: Array<[string | Buffer, unknown, string, string]> = [
        ['not json', null, 'INVALID_REQUEST', 'not valid JSON'],
        ['[1,2]', null, 'INVALID_REQUEST', 'JSON object'],
        [JSON.stringify({ channel: 'core:ping', request: {} }), null, 'INVALID_REQUEST', 'id:'],
        [JSON.stringify({ id: 5, request: {} }), 5, 'INVALID_REQUEST', 'channel:'],
        [JSON.stringify({ id: 6, channel: 'core:ping' }), 6, 'INVALID_REQUEST', 'request:'],
        [JSON.stringify({ id: 7, channel: 'core:approve', request: {} }), 7, 'UNKNOWN_CHANNEL', 'core:approve'],
        [JSON.stringify({ id: 8, channel: '__proto__', request: {} }), 8, 'UNKNOWN_CHANNEL', '__proto__'],
        [Buffer.from([1, 2, 3]), null, 'INVALID_REQUEST', 'binary'],
      ];
      for (const [raw, id, code, text] of cases) {
        const reply = await exchange(ws, raw);
        expect(reply.id).toBe(id);
        expect(reply.result.ok).toBe(false);
        expect(reply.result.error?.code).toBe(code);
        expect(reply.result.error?.message).toContain(text);
      }
      const nonce = randomUUID();
      const reply = await exchange(ws, JSON.stringify({ id: 'after', channel: 'core:ping', request: { nonce } }));
      expect(reply).toMatchObject({ id: 'after', result: { ok: true, value: { nonce } } });
    } finally {
      ws.terminate();
    }
    expect(hostErrors).toEqual([]);
  });

  it('runs with no console errors and no CSP violations, under a CSP that is really enforced', async () => {
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(await page.evaluate('window.__cspViolations')).toEqual([]);
    // Control: an inline script is blocked and reported, so the empty list above means something.
    await page.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.head.appendChild(s);
    })()`);
    await expect.poll(() => page.evaluate('window.__cspViolations.length'), { timeout: 10_000 }).toBe(1);
    expect(await page.evaluate('window.__inlineRan === undefined')).toBe(true);
    expect(String(await page.evaluate('window.__cspViolations[0]'))).toContain('script-src');
  });

  // Runs last: it stops the host (afterAll's close is idempotent).
  it('when the host goes away, calls fail with NOT_CONNECTED instead of hanging', async () => {
    await host.close();
    const result = (await page.evaluate(`window.warden.core.ping({ nonce: 'after-close' })`)) as { ok: boolean; error: { code: string } };
    expect(result).toMatchObject({ ok: false, error: { code: 'NOT_CONNECTED' } });
    expect(pingsReceived).not.toContain('after-close');
  });
});
