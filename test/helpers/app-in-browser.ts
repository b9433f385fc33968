/**
 * The built renderer, served by the test host against a real core, open in Debian's Chromium:
 * what every e2e suite starts from, and the order it is taken down in.
 *
 * Why one helper: each suite needs the same four steps (renderer build, host, browser, watched
 * page) and the same teardown (browser, then host, then core, each even if the one before
 * failed); written out per suite they drifted apart.
 */
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { WardenCore } from '../../electron/core/app-core';
import { ensureRendererBuilt } from '../host/build-renderer';
import { startTestHost, type TestHost } from '../host/test-host';
import { CHROMIUM_ARGS, CHROMIUM_PATH, openWatchedAppPage, type PageErrors } from './chromium';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface AppInBrowser {
  host: TestHost;
  browser: Browser;
  /** The app, live (its first status arrived), watched for console errors, page errors and CSP violations. */
  page: Page;
}

/**
 * Serves `core` to a new Chromium page of `viewport` (1280×800 unless said otherwise) and waits
 * until the app shows the core as live. Whatever was opened is closed again if a later step
 * fails; the core is the caller's.
 */
export async function openAppInBrowser(
  core: Pick<WardenCore, 'handlers' | 'events'>,
  errors: PageErrors,
  viewport: { width: number; height: number } = { width: 1280, height: 800 },
): Promise<AppInBrowser> {
  const rendererDir = await ensureRendererBuilt(ROOT);
  const host = await startTestHost({ core: { handlers: core.handlers, events: core.events }, rendererDir, logError: () => {} });
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    const page = await openWatchedAppPage(browser, host.url, viewport, errors);
    return { host, browser, page };
  } catch (error) {
    await closeInOrder(
      () => browser?.close(),
      () => host.close(),
    );
    throw error;
  }
}

/**
 * Runs every step in order, each even if an earlier one threw, then throws the first failure.
 * For teardown: browser, then host, then core, then files — a browser that fails to close must
 * not leave a server process running.
 */
export async function closeInOrder(...steps: ReadonlyArray<() => unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}
