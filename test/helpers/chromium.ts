import type { Browser, Page } from 'playwright-core';
/**
 * Launch settings for Debian's Chromium in tests (never a downloaded browser). The
 * background-networking flags keep it from reaching for Google hosts this machine cannot reach.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** What a watched page collected: console errors and uncaught page errors. */
export interface PageErrors {
  consoleErrors: string[];
  pageErrors: string[];
}

/**
 * Opens the app at `url` in a new page that records console errors, page errors and, from the
 * document's first moment, every CSP violation (in `window.__cspViolations`; an init script is
 * not subject to the page's CSP), then waits until the status bar reports the core as live.
 *
 * Why: the e2e suites assert "no errors, nothing blocked" over a whole session; they must watch
 * the same things the same way.
 */
export async function openWatchedAppPage(browser: Browser, url: string, viewport: { width: number; height: number }, errors: PageErrors): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => errors.pageErrors.push(e.message));
  await page.addInitScript({
    content:
      "window.__cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => " +
      "window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI + ' at ' + e.sourceFile + ':' + e.lineNumber), true);",
  });
  await page.goto(url);
  await waitUntilLive(page);
  return page;
}

/** Waits until the status bar reports the core as live (its first status arrived). */
export async function waitUntilLive(page: Page): Promise<void> {
  await page.locator('[data-testid="status-panel"][data-connection="live"]').waitFor({ timeout: 30_000 });
}
