import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import {
  CONTENT_SECURITY_POLICY,
  hardenWebContents,
  isSameOrigin,
  openExternalSafely,
  secureAllSessions,
  withContentSecurityPolicy,
} from '../../../electron/main/security';
import { WardenError } from '../../../shared/result';
import { electronMock, FakeEvent, FakeSession, FakeWebContents, resetElectronMock } from '../../helpers/electron-mock';
import type { App, Session, WebContents } from 'electron';

const ORIGIN = 'app://warden';
const quiet = () => undefined;

beforeEach(() => resetElectronMock());

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

describe('content security policy', () => {
  it('is exactly the strict policy: nothing by default, scripts only from our origin', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'",
    );
  });

  it('allows no inline script, no eval and no remote origin in any directive', () => {
    const d = directives(CONTENT_SECURITY_POLICY);
    expect(d.get('default-src')).toEqual(["'none'"]);
    expect(d.get('script-src')).toEqual(["'self'"]);
    for (const [name, values] of d) {
      for (const v of values) {
        expect(v, `${name} ${v}`).not.toMatch(/unsafe-|https?:|wss?:|\*|blob:/);
      }
    }
  });

  it('keeps the renderer meta tag in step with the header', async () => {
    const { readFile } = await import('node:fs/promises');
    const html = await readFile(new URL('../../../renderer/index.html', import.meta.url), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    // A meta-delivered CSP cannot carry frame-ancestors/report-uri/sandbox; every other directive must match.
    const headerOnly = new Set(['frame-ancestors', 'report-uri', 'sandbox']);
    const expected = new Map([...directives(CONTENT_SECURITY_POLICY)].filter(([name]) => !headerOnly.has(name)));
    expect(directives(meta ?? '')).toEqual(expected);
  });

  it('replaces any other spelling of the header with ours', () => {
    const headers = withContentSecurityPolicy({ 'content-security-policy': ['default-src *'], 'X-Other': 'a' });
    expect(headers).toEqual({ 'X-Other': ['a'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] });
  });

  it('the header hook sets the CSP on responses from our origin and leaves others alone', () => {
    const ses = new FakeSession();
    secureAllSessions(electronMock.app as unknown as App, ses as unknown as Session, ORIGIN, quiet);
    const ours = vi.fn();
    ses.headersListener!({ url: 'app://warden/index.html', responseHeaders: { 'Content-Type': ['text/html'] } }, ours);
    expect(ours).toHaveBeenCalledWith({
      responseHeaders: { 'Content-Type': ['text/html'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] },
    });
    const foreign = vi.fn();
    ses.headersListener!({ url: 'https://example.com/', responseHeaders: {} }, foreign);
    expect(foreign).toHaveBeenCalledWith({});
  });
});

describe('isSameOrigin', () => {
  it.each([
    'app://warden/',
    'app://warden/index.html',
    'app://warden/assets/x.js?y=1#z',
  ])('accepts our own origin: %s', (url) => {
    expect(isSameOrigin(url, ORIGIN)).toBe(true);
  });

  it.each([
    ['a look-alike host with our name as a prefix', 'app://warden.evil/'],
    ['a look-alike subdomain on https', 'https://warden.evil.com/'],
    ['a different scheme, same host', 'https://warden/'],
    ['userinfo that puts our name before @', 'app://warden@evil.com/'],
    ['userinfo that puts our host after @', 'app://evil@warden/'],
    ['a password in the URL', 'app://x:y@warden/'],
    ['javascript: URLs', 'javascript:alert(1)'],
    ['data: URLs', 'data:text/html,<script>1</script>'],
    ['file: URLs', 'file:///etc/passwd'],
    ['a different port', 'app://warden:8080/'],
    ['a trailing-dot host', 'app://warden./'],
    ['about:blank', 'about:blank'],
    ['garbage', 'not a url'],
    ['the empty string', ''],
  ])('rejects %s', (_why, url) => {
    expect(isSameOrigin(url, ORIGIN)).toBe(false);
  });

  it('compares dev-server origins by scheme, host and port', () => {
    expect(isSameOrigin('http://localhost:5173/src/main.tsx', 'http://localhost:5173')).toBe(true);
    expect(isSameOrigin('http://localhost:5174/', 'http://localhost:5173')).toBe(false);
    expect(isSameOrigin('https://localhost:5173/', 'http://localhost:5173')).toBe(false);
    expect(isSameOrigin('http://localhost.evil.com:5173/', 'http://localhost:5173')).toBe(false);
    expect(isSameOrigin('https://warden.evil.com/', 'https://warden')).toBe(false);
  });
});

describe('webContents hardening', () => {
  function hardened(): { contents: FakeWebContents; log: ReturnType<typeof vi.fn> } {
    const contents = new FakeWebContents();
    const log = vi.fn();
    hardenWebContents(contents as unknown as WebContents, ORIGIN, log);
    return { contents, log };
  }

  it.each(['https://evil.example/', 'app://warden.evil/', 'file:///etc/passwd', 'javascript:alert(1)', 'http://localhost:5173/'])(
    'prevents navigation to a foreign URL: %s',
    (url) => {
      const { contents, log } = hardened();
      for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect']) {
        expect(contents.navigate(url, event).defaultPrevented, event).toBe(true);
      }
      expect(log).toHaveBeenCalled();
    },
  );

  it('allows navigation within our origin', () => {
    const { contents } = hardened();
    for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect']) {
      expect(contents.navigate('app://warden/index.html#/servers', event).defaultPrevented, event).toBe(false);
    }
  });

  it('denies every window.open, including for our own origin', () => {
    const { contents } = hardened();
    expect(contents.setWindowOpenHandler).toHaveBeenCalledTimes(1);
    for (const url of ['https://example.com/', 'app://warden/index.html', 'about:blank']) {
      expect(contents.windowOpenHandler!({ url })).toEqual({ action: 'deny' });
    }
  });

  it('prevents attaching a <webview>', () => {
    const { contents } = hardened();
    const event = new FakeEvent();
    contents.emit('will-attach-webview', event, {}, {});
    expect(event.defaultPrevented).toBe(true);
  });

  it('installs its handlers once even when asked twice', () => {
    const contents = new FakeWebContents();
    hardenWebContents(contents as unknown as WebContents, ORIGIN, quiet);
    hardenWebContents(contents as unknown as WebContents, ORIGIN, quiet);
    expect(contents.listenerCount('will-navigate')).toBe(1);
    expect(contents.setWindowOpenHandler).toHaveBeenCalledTimes(1);
  });
});

describe('permission handlers', () => {
  const permissions = [
    'clipboard-read',
    'clipboard-sanitized-write',
    'display-capture',
    'fullscreen',
    'geolocation',
    'hid',
    'idle-detection',
    'media',
    'mediaKeySystem',
    'midi',
    'midiSysex',
    'notifications',
    'pointerLock',
    'keyboardLock',
    'openExternal',
    'serial',
    'speaker-selection',
    'storage-access',
    'top-level-storage-access',
    'window-management',
    'unknown',
    'fileSystem',
    'usb',
  ];

  function expectDenies(ses: FakeSession): void {
    for (const permission of permissions) {
      const callback = vi.fn();
      ses.permissionRequestHandler!({}, permission, callback, { requestingUrl: 'app://warden/' });
      expect(callback, permission).toHaveBeenCalledWith(false);
      expect(ses.permissionCheckHandler!({}, permission, 'app://warden', {}), permission).toBe(false);
    }
    expect(ses.devicePermissionHandler!({ deviceType: 'usb', origin: 'app://warden' })).toBe(false);
  }

  it('deny every permission request and check on the default session, even from our origin', () => {
    secureAllSessions(electronMock.app as unknown as App, electronMock.defaultSession as unknown as Session, ORIGIN, quiet);
    expectDenies(electronMock.defaultSession);
  });

  it('deny on sessions created later too', () => {
    secureAllSessions(electronMock.app as unknown as App, electronMock.defaultSession as unknown as Session, ORIGIN, quiet);
    const later = new FakeSession();
    electronMock.app.emit('session-created', later);
    expect(later.setPermissionRequestHandler).toHaveBeenCalledTimes(1);
    expect(later.webRequest.onHeadersReceived).toHaveBeenCalledTimes(1);
    expectDenies(later);
  });
});

describe('openExternalSafely', () => {
  it('opens https URLs, through shell.openExternal, and logs what it opened', async () => {
    const log = vi.fn();
    await openExternalSafely('https://modelcontextprotocol.io/docs', log);
    expect(electronMock.shell.openExternal).toHaveBeenCalledExactlyOnceWith('https://modelcontextprotocol.io/docs');
    expect(log).toHaveBeenCalledWith(expect.stringContaining('https://modelcontextprotocol.io/docs'));
  });

  it.each([
    'http://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/html,hi',
    'smb://server/share',
    'ms-settings:privacy',
    'vscode://file/etc/passwd',
    'app://warden/index.html',
    'https://bank.example@evil.example/',
    'not a url',
  ])('refuses %s with a clear error and never calls shell.openExternal', async (url) => {
    await expect(openExternalSafely(url, quiet)).rejects.toBeInstanceOf(WardenError);
    await expect(openExternalSafely(url, quiet)).rejects.toThrow(/openExternal: refused|not a valid URL/);
    expect(electronMock.shell.openExternal).not.toHaveBeenCalled();
  });
});

describe('systemBrowser (the core BrowserOpener port)', () => {
  it('opens https through the audited function and refuses anything else', async () => {
    const { systemBrowser } = await import('../../../electron/main/security');
    vi.spyOn(console, 'info').mockImplementation(() => undefined);
    await systemBrowser.open('https://auth.example/authorize?x=1');
    expect(electronMock.shell.openExternal).toHaveBeenCalledExactlyOnceWith('https://auth.example/authorize?x=1');
    await expect(systemBrowser.open('file:///etc/passwd')).rejects.toBeInstanceOf(WardenError);
    expect(electronMock.shell.openExternal).toHaveBeenCalledTimes(1);
  });
});
