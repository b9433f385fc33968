/**
 * Where the renderer is loaded from.
 *
 * Production serves the built renderer on a privileged custom scheme, `app://warden/`, from
 * `out/renderer` only (path traversal refused); the page never runs from `file://`, so it gets
 * none of file://'s extra privileges and has a real origin for the CSP and the IPC sender check.
 * Development uses electron-vite's dev server (ELECTRON_RENDERER_URL), only in unpackaged runs and
 * only on a loopback address.
 */
import { readFile, realpath } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { protocol } from 'electron';
import { CONTENT_SECURITY_POLICY } from './security';

/** The custom scheme the renderer is served on. */
export const APP_SCHEME = 'app';
/** The one host on that scheme. */
export const APP_HOST = 'warden';
/** Our origin in production. */
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/**
 * Registers `app:` as a standard, secure scheme. Must run before the app is ready.
 *
 * Standard gives it real origins (relative URLs, same-origin checks); secure makes it a secure
 * context like https. No `bypassCSP`, no `corsEnabled` for others, no service workers.
 */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
  ]);
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/**
 * Maps an `app://warden/...` URL to a file inside `rootDir`, or null if it must not be served.
 *
 * Refuses other hosts, userinfo, NUL bytes, backslashes and any path that resolves outside
 * `rootDir` (`..`, encoded `%2e%2e`, encoded `%2f`). `/` serves `index.html`.
 */
export function resolveRendererPath(rootDir: string, requestUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;
  if (url.username !== '' || url.password !== '') return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  if (pathname === '' || pathname.endsWith('/')) pathname += 'index.html';
  const root = resolve(rootDir);
  const file = resolve(root, `.${pathname.startsWith('/') ? '' : '/'}${pathname}`);
  if (!file.startsWith(root + sep)) return null;
  return file;
}

/**
 * The `protocol.handle` handler for `app:`: serves files from `rootDir` with our CSP header.
 *
 * Only GET/HEAD. A symlink pointing out of `rootDir` is refused as well (real paths compared).
 */
export function createAppProtocolHandler(rootDir: string): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response('Method not allowed', { status: 405 });
    }
    const file = resolveRendererPath(rootDir, request.url);
    if (file === null) return new Response('Forbidden', { status: 403 });
    let body: Buffer;
    try {
      const [realRoot, realFile] = await Promise.all([realpath(rootDir), realpath(file)]);
      if (!realFile.startsWith(realRoot + sep)) return new Response('Forbidden', { status: 403 });
      body = await readFile(realFile);
    } catch {
      return new Response('Not found', { status: 404 });
    }
    const headers = {
      'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
    };
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers });
  };
}

/** Serves the built renderer on `app://warden/` (after the app is ready). */
export function serveRenderer(rootDir: string): void {
  protocol.handle(APP_SCHEME, createAppProtocolHandler(rootDir));
}

/** What the window loads and which origin it is allowed to stay on. */
export interface RendererEntry {
  url: string;
  origin: string;
  /** True when the built renderer must be served on app:// (production and `electron-vite preview`). */
  servesAppScheme: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Chooses the renderer URL: the dev server only when unpackaged and ELECTRON_RENDERER_URL is a
 * loopback http(s) URL; otherwise `app://warden/index.html`. A packaged app ignores the variable,
 * so nobody can point an installed Warden at remote content through the environment.
 */
export function rendererEntry(isPackaged: boolean, env: Record<string, string | undefined>): RendererEntry {
  const devUrl = env['ELECTRON_RENDERER_URL'];
  if (!isPackaged && devUrl) {
    let url: URL | null = null;
    try {
      url = new URL(devUrl);
    } catch {
      url = null;
    }
    if (url && (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)) {
      return { url: url.href, origin: `${url.protocol}//${url.host}`, servesAppScheme: false };
    }
    console.warn(`[warden] ignoring ELECTRON_RENDERER_URL=${JSON.stringify(devUrl)}: not a loopback http(s) URL`);
  }
  return { url: `${APP_ORIGIN}/index.html`, origin: APP_ORIGIN, servesAppScheme: true };
}
