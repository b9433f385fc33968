/**
 * The security boundary of the Electron shell (Electron security checklist): the content security
 * policy, origin comparison, navigation/window-open/webview handlers, deny-by-default permission
 * handlers on every session, and the one audited path to `shell.openExternal`.
 *
 * Everything the renderer can reach is either our own origin or refused; anything that would let
 * a compromised page escape (new windows, navigation, webviews, permissions) is denied here.
 */
import { shell, type App, type Session, type WebContents } from 'electron';
import type { BrowserOpener } from '../core/ports';
import { WardenError } from '../../shared/result';

/**
 * The CSP every response from our origin carries.
 *
 * No inline script, no eval, no remote origins: a script that a tool result or a server manages
 * to smuggle into the DOM cannot run, and nothing can be loaded from or sent to the network.
 * Kept identical to the meta tag in renderer/index.html (the header is the authority).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** Logs what the shell refused or opened; injected so tests can capture it. */
export type SecurityLog = (message: string) => void;

const defaultLog: SecurityLog = (message) => console.warn(`[warden:security] ${message}`);

/**
 * True if `candidate` is on exactly the origin `appOrigin` (same scheme, host and port).
 *
 * Uses the URL parser, never `startsWith`: `https://warden.evil.com` is not `https://warden`,
 * `app://warden.evil/` is not `app://warden`, and a URL carrying userinfo (`app://warden@evil/`,
 * `app://evil@warden/`) is refused outright since it only ever appears in spoofing attempts.
 * Anything unparsable is not our origin.
 */
export function isSameOrigin(candidate: string, appOrigin: string): boolean {
  let url: URL;
  let origin: URL;
  try {
    url = new URL(candidate);
    origin = new URL(appOrigin);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  if (origin.host === '') return false;
  // `host` includes the port; the parser normalises default ports to '' for special schemes.
  // `origin` is not used: for a custom scheme like app:// Node reports it as "null".
  return url.protocol === origin.protocol && url.host === origin.host;
}

/**
 * Adds our CSP to a response's headers, replacing any other spelling of that header.
 *
 * Pure so the header hook can be tested without a session.
 */
export function withContentSecurityPolicy(
  headers: Record<string, string | string[]> | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'content-security-policy') continue;
    out[name] = Array.isArray(value) ? value : [value];
  }
  out['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY];
  return out;
}

const hardened = new WeakSet<WebContents>();

/**
 * Locks down one webContents: navigation only within our origin, no new windows, no webviews.
 *
 * Installed on the main window and, through `web-contents-created`, on every webContents the app
 * ever creates. Idempotent.
 */
export function hardenWebContents(contents: WebContents, appOrigin: string, log: SecurityLog = defaultLog): void {
  if (hardened.has(contents)) return;
  hardened.add(contents);

  const denyForeign = (what: string) => (event: { preventDefault(): void; url?: string }, legacyUrl?: string) => {
    const url = typeof event.url === 'string' ? event.url : String(legacyUrl ?? '');
    if (!isSameOrigin(url, appOrigin)) {
      event.preventDefault();
      log(`blocked ${what} to ${JSON.stringify(url.slice(0, 200))}`);
    }
  };
  contents.on('will-navigate', denyForeign('navigation'));
  contents.on('will-frame-navigate', denyForeign('frame navigation'));
  contents.on('will-redirect', denyForeign('redirect'));

  contents.setWindowOpenHandler(({ url }) => {
    log(`blocked window.open of ${JSON.stringify(String(url).slice(0, 200))}`);
    return { action: 'deny' };
  });

  contents.on('will-attach-webview', (event) => {
    event.preventDefault();
    log('blocked a <webview>');
  });
}

/**
 * Installs deny-by-default permission handlers and the CSP header hook on one session.
 *
 * Warden's UI needs no camera, microphone, geolocation, notifications-from-the-page, HID, serial
 * or USB access; every request and every check is refused, so a compromised page gains nothing.
 */
export function secureSession(ses: Session, appOrigin: string, log: SecurityLog = defaultLog): void {
  ses.setPermissionRequestHandler((_contents, permission, callback) => {
    log(`denied permission request ${JSON.stringify(permission)}`);
    callback(false);
  });
  ses.setPermissionCheckHandler(() => false);
  ses.setDevicePermissionHandler(() => false);
  ses.webRequest.onHeadersReceived((details, callback) => {
    if (isSameOrigin(details.url, appOrigin)) {
      callback({ responseHeaders: withContentSecurityPolicy(details.responseHeaders) });
    } else {
      callback({});
    }
  });
}

/**
 * Secures the default session now and every session created later (`session-created`).
 *
 * Must run after `app` is ready (the default session does not exist before).
 */
export function secureAllSessions(
  app: Pick<App, 'on'>,
  defaultSession: Session,
  appOrigin: string,
  log: SecurityLog = defaultLog,
): void {
  secureSession(defaultSession, appOrigin, log);
  app.on('session-created', (ses) => secureSession(ses, appOrigin, log));
}

/**
 * The single audited path to `shell.openExternal`: https URLs only, logged.
 *
 * The OS hands other schemes (file:, smb:, custom protocol handlers, javascript:) to programs
 * that may execute things, so anything but https is refused with a clear error. URLs carrying
 * credentials (`https://bank.com@evil.com`) are refused too, since they exist to mislead.
 */
export async function openExternalSafely(url: string, log: (message: string) => void = console.info): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WardenError('DENIED', `openExternal: ${JSON.stringify(String(url).slice(0, 200))} is not a valid URL`);
  }
  if (parsed.protocol !== 'https:') {
    throw new WardenError(
      'DENIED',
      `openExternal: refused to open a ${JSON.stringify(parsed.protocol)} URL; only https:// links are opened in the browser`,
    );
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new WardenError('DENIED', 'openExternal: refused to open an https URL that carries a user name or password');
  }
  // Origin and path only: an OAuth authorization URL's query carries its state and PKCE challenge.
  log(`[warden:security] opening in the system browser: ${parsed.origin}${parsed.pathname}`);
  await shell.openExternal(parsed.href);
}

/** The core's BrowserOpener port (OAuth logins, help links), backed by {@link openExternalSafely}. */
export const systemBrowser: BrowserOpener = { open: (url) => openExternalSafely(url) };
