/**
 * `npm run dev` runs the renderer from Vite's dev server, whose tooling injects inline scripts
 * (React Refresh's preamble). The app must still run under exactly the production CSP — the meta
 * tag and main's header — rather than a loosened dev policy. This loads the real dev server, with
 * the header main would add, in headless Chromium, and checks that nothing is blocked and the app
 * frame renders.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Only for the CSP constant of electron/main/security.ts: Electron cannot run here.
vi.mock('electron', () => import('../helpers/electron-mock').then((m) => m.electronModule));

import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { rendererConfig } from '../../scripts/renderer-vite-config';
import { CONTENT_SECURITY_POLICY } from '../../electron/main/security';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../helpers/chromium';

let server: ViteDevServer | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  // A fixed free port, so the HMR socket the page opens is on our own origin (as with
  // `npm run dev`, where connect-src 'self' covers it).
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
  server = await createServer({
    configFile: false,
    root: rendererConfig.root,
    plugins: rendererConfig.plugins,
    logLevel: 'error',
    server: { host: '127.0.0.1', port, strictPort: true, hmr: true },
  });
  await server.listen();
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server?.close();
  }
});

describe('dev server under the production CSP', () => {
  it('the dev page has no inline scripts, nothing is blocked, and the app frame renders', async () => {
    const url = server!.resolvedUrls!.local[0]!;
    const html = await (await fetch(url)).text();
    expect(html).not.toMatch(/<script type="module">/);

    const page = await browser!.newPage();
    const violations: string[] = [];
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.exposeFunction('__reportViolation', (v: string) => violations.push(v));
    await page.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (e) => window.__reportViolation(e.violatedDirective + ' ' + e.blockedURI), true);",
    });
    // Main adds this header to every response from our origin (electron/main/security.ts).
    await page.route('**/*', async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': CONTENT_SECURITY_POLICY } });
    });
    await page.goto(url);
    await page.getByRole('navigation').waitFor({ timeout: 30_000 });
    expect(violations).toEqual([]);
    // React Refresh's preamble ran (it is what the inline script did).
    expect(await page.evaluate('typeof window.$RefreshReg$')).toBe('function');
    expect(errors).toEqual([]);
  });
});
