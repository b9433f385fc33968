import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import {
  APP_ORIGIN,
  createAppProtocolHandler,
  registerAppScheme,
  rendererEntry,
  resolveRendererPath,
  serveRenderer,
} from '../../../electron/main/protocol';
import { CONTENT_SECURITY_POLICY } from '../../../electron/main/security';
import { electronMock, resetElectronMock } from '../../helpers/electron-mock';

let base: string;
let root: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'warden-protocol-'));
  root = join(base, 'renderer');
  await mkdir(join(root, 'assets'), { recursive: true });
  await writeFile(join(root, 'index.html'), '<!doctype html><title>Warden</title>');
  await writeFile(join(root, 'assets', 'app.js'), 'console.log(1)');
  await writeFile(join(base, 'secret.txt'), 'outside the renderer folder');
  await symlink(join(base, 'secret.txt'), join(root, 'assets', 'link.txt'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

beforeEach(() => resetElectronMock());

describe('app:// scheme', () => {
  it('is registered as a standard, secure scheme without CSP bypass', () => {
    registerAppScheme();
    expect(electronMock.protocol.registerSchemesAsPrivileged).toHaveBeenCalledExactlyOnceWith([
      { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
    ]);
  });

  it('serves index.html for / with our CSP and nosniff', async () => {
    const handler = createAppProtocolHandler(root);
    const response = await handler(new Request('app://warden/'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).toContain('<title>Warden</title>');
  });

  it('serves assets with their content type', async () => {
    const response = await createAppProtocolHandler(root)(new Request('app://warden/assets/app.js'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it.each([
    'app://warden/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
    'app://warden/..%2fsecret.txt',
    'app://warden/..%5csecret.txt',
    'app://warden/index.html%00.js',
    'app://warden/%E0%A4%A', // malformed escape
    'app://evil/index.html',
    'app://warden.evil/index.html',
  ])('refuses %s', async (url) => {
    expect(resolveRendererPath(root, url)).toBeNull();
    const response = await createAppProtocolHandler(root)(new Request(url));
    expect(response.status).toBe(403);
  });

  it('refuses URLs carrying credentials', () => {
    expect(resolveRendererPath(root, 'app://x@warden/index.html')).toBeNull();
  });

  it('never resolves a path outside the renderer folder', () => {
    for (const url of ['app://warden/../secret.txt', 'app://warden/a/../../secret.txt', 'app://warden/%2e%2e/secret.txt']) {
      const file = resolveRendererPath(root, url);
      // The URL parser already collapses plain `..`; whatever is left must stay inside root.
      expect(file === null || file.startsWith(root)).toBe(true);
    }
  });

  it('refuses a symlink that points outside the renderer folder', async () => {
    const response = await createAppProtocolHandler(root)(new Request('app://warden/assets/link.txt'));
    expect(response.status).toBe(403);
  });

  it('answers 404 for a missing file and 405 for writes', async () => {
    const handler = createAppProtocolHandler(root);
    expect((await handler(new Request('app://warden/missing.js'))).status).toBe(404);
    expect((await handler(new Request('app://warden/index.html', { method: 'POST', body: 'x' }))).status).toBe(405);
  });

  it('is installed with protocol.handle for the app scheme', async () => {
    serveRenderer(root);
    expect(electronMock.protocol.handle).toHaveBeenCalledWith('app', expect.any(Function));
    const response = await electronMock.state.protocolHandlers.get('app')!(new Request('app://warden/index.html'));
    expect(response.status).toBe(200);
  });
});

describe('renderer entry', () => {
  it('production loads app://warden/index.html, even if ELECTRON_RENDERER_URL is set', () => {
    expect(rendererEntry(true, { ELECTRON_RENDERER_URL: 'http://localhost:5173' })).toEqual({
      url: 'app://warden/index.html',
      origin: APP_ORIGIN,
      servesAppScheme: true,
    });
  });

  it('unpackaged without a dev server (electron-vite preview) also uses app://', () => {
    expect(rendererEntry(false, {}).url).toBe('app://warden/index.html');
  });

  it('development uses the loopback dev server and takes its origin', () => {
    expect(rendererEntry(false, { ELECTRON_RENDERER_URL: 'http://localhost:5173' })).toEqual({
      url: 'http://localhost:5173/',
      origin: 'http://localhost:5173',
      servesAppScheme: false,
    });
  });

  it.each(['https://evil.example/', 'file:///tmp/index.html', 'http://localhost.evil.com:5173/', 'javascript:1'])(
    'ignores a non-loopback or non-http dev URL: %s',
    (url) => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      expect(rendererEntry(false, { ELECTRON_RENDERER_URL: url }).url).toBe('app://warden/index.html');
      warn.mockRestore();
    },
  );
});
