/**
 * The loopback redirect receiver (single use, state check, timeout, 127.0.0.1 only) and the
 * https-or-loopback fetch guard, against real sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackCallback } from '../../../electron/core/mcp/oauth/loopback-callback';
import { OAuthNetworkScope } from '../../../electron/core/mcp/oauth/network-scope';
import { createGuardedFetch, oauthUrlProblem } from '../../../electron/core/mcp/oauth/url-policy';
import { WardenError } from '../../../shared/result';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => { s.close(() => r()); s.closeAllConnections(); });
});

describe('loopback redirect receiver', () => {
  it('listens on 127.0.0.1 with an OS-chosen port and accepts exactly one redirect with the right state', async () => {
    const receiver = await startLoopbackCallback();
    try {
      const url = new URL(receiver.redirectUrl);
      expect(url.hostname).toBe('127.0.0.1');
      expect(Number(url.port)).toBeGreaterThan(0);
      expect(receiver.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await fetch(new URL('/favicon.ico', url))).status).toBe(404); // other paths change nothing
      const ok = await fetch(`${receiver.redirectUrl}?code=abc&state=${receiver.state}`);
      expect(ok.status).toBe(200);
      expect(await receiver.result).toEqual({ code: 'abc' });
      // Single use: the socket is closed after the first redirect.
      await expect(fetch(`${receiver.redirectUrl}?code=again&state=${receiver.state}`)).rejects.toThrow();
    } finally {
      await receiver.close();
    }
  });

  it('a redirect with a wrong or missing state is answered 400 and ignored: the right one still completes the sign-in', async () => {
    const receiver = await startLoopbackCallback();
    try {
      for (const query of ['code=abc&state=wrong', 'code=abc', 'error=access_denied&state=wrong', 'error=access_denied']) {
        const answer = await fetch(`${receiver.redirectUrl}?${query}`);
        expect(answer.status).toBe(400);
        await answer.body?.cancel();
      }
      const ok = await fetch(`${receiver.redirectUrl}?code=real&state=${receiver.state}&iss=${encodeURIComponent('https://as.example/')}`);
      expect(ok.status).toBe(200);
      expect(await receiver.result).toEqual({ code: 'real', iss: 'https://as.example/' });
    } finally {
      await receiver.close();
    }
  });

  it('a timeout says how many requests with a wrong state were ignored', async () => {
    const receiver = await startLoopbackCallback({ timeoutMs: 500 });
    try {
      await (await fetch(`${receiver.redirectUrl}?code=abc&state=wrong`)).body?.cancel();
      const error = await receiver.result.then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(WardenError);
      expect((error as WardenError).code).toBe('TIMEOUT');
      expect((error as WardenError).message).toContain('1 request with a wrong or missing state was ignored');
    } finally {
      await receiver.close();
    }
  });

  it('an error redirect from the authorization server fails the login with its error code', async () => {
    const receiver = await startLoopbackCallback();
    try {
      await fetch(`${receiver.redirectUrl}?error=access_denied&error_description=user%20said%20no&state=${receiver.state}`);
      await expect(receiver.result).rejects.toMatchObject({ code: 'AUTH_FAILED', message: expect.stringContaining('access_denied') });
    } finally {
      await receiver.close();
    }
  });

  it('gives up after its timeout', async () => {
    const receiver = await startLoopbackCallback({ timeoutMs: 300 });
    try {
      await expect(receiver.result).rejects.toMatchObject({ code: 'TIMEOUT' });
    } finally {
      await receiver.close();
    }
  });
});

describe('https-or-loopback guard', () => {
  it('classifies URLs: https anywhere, http only on loopback, nothing else', () => {
    expect(oauthUrlProblem('https://as.example.com/authorize')).toBeNull();
    expect(oauthUrlProblem('http://127.0.0.1:8080/x')).toBeNull();
    expect(oauthUrlProblem('http://localhost/x')).toBeNull();
    expect(oauthUrlProblem('http://[::1]:9/x')).toBeNull();
    expect(oauthUrlProblem('http://as.example.com/authorize')).toMatch(/not loopback/);
    expect(oauthUrlProblem('http://127.0.0.1.nip.io/x')).toMatch(/not loopback/);
    expect(oauthUrlProblem('javascript:alert(1)')).toMatch(/scheme/);
    expect(oauthUrlProblem('file:///etc/passwd')).toMatch(/scheme/);
    expect(oauthUrlProblem('not a url')).toMatch(/absolute/);
  });

  it('never requests a forbidden URL, including the target of a redirect from an allowed one', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/bounce') {
        res.writeHead(302, { location: 'http://metadata.example.test/.well-known/oauth-authorization-server' });
        res.end();
      } else if (req.url === '/hop') {
        res.writeHead(302, { location: '/final' });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const requested: string[] = [];
    const scope = new OAuthNetworkScope({ serverName: 'Fixture', serverUrl: `${base}/mcp` });
    const guarded = createGuardedFetch(scope, (input, init) => {
      requested.push(String(input));
      return fetch(input, init);
    });

    await expect(guarded('http://as.example.test/token', { method: 'POST' })).rejects.toMatchObject({ code: 'DENIED' });
    await expect(guarded(`${base}/bounce`)).rejects.toMatchObject({ code: 'DENIED' });
    const followed = await guarded(`${base}/hop`);
    expect(await followed.json()).toEqual({ ok: true });
    expect(requested).toEqual([`${base}/bounce`, `${base}/hop`, `${base}/final`]);
  });
});
