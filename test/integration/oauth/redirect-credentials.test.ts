/**
 * Credentials across origins, from the attacker's side: a hostile authorization server that
 * redirects a credential-carrying request to another site, redirects that leave https, and a
 * server's own secret headers travelling to its authorization server. Loopback servers record
 * exactly what they received.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OAuthNetworkScope } from '../../../electron/core/mcp/oauth/network-scope';
import { createGuardedFetch } from '../../../electron/core/mcp/oauth/url-policy';
import { WardenError } from '../../../shared/result';
import { startOAuthFixture, type FixtureOptions, type OAuthFixture } from './fixture-oauth-servers';
import { cleanUpWorld, startCoreWorld, TestNetwork, type CoreWorld } from './core-world';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

/** A loopback server that records every request; `answer` decides the response (default 200 "ok"). */
async function recorder(answer?: (req: IncomingMessage, base: string) => { status: number; headers?: Record<string, string> } | undefined): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const a = answer?.(req, base);
      res.writeHead(a?.status ?? 200, { 'content-type': 'application/json', ...(a?.headers ?? {}) });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }));
  return { base, seen };
}

async function fixture(options: FixtureOptions = {}): Promise<OAuthFixture> {
  const f = await startOAuthFixture(options);
  cleanups.push(() => f.close());
  return f;
}

async function world(): Promise<CoreWorld> {
  const w = await startCoreWorld();
  cleanups.push(async () => {
    await w.close().catch(() => undefined);
    await cleanUpWorld(w);
  });
  return w;
}

async function rejection(p: Promise<unknown>): Promise<WardenError> {
  const e = await p.then(() => null, (error: unknown) => error);
  expect(e).toBeInstanceOf(WardenError);
  return e as WardenError;
}

describe('credentials never follow a redirect to another site', () => {
  it('a hostile authorization server that redirects token revocation to another site gets neither the token nor the client secret sent there', async () => {
    // The revocation request carries the refresh token and the client secret in its body; the
    // hostile authorization server answers 307 so a naive client re-sends that body to the MCP
    // server's origin (someone else).
    const hostile = await fixture({ issueClientSecret: true });
    const w = await world();
    const added = await w.call('servers:add', {
      definition: { name: 'Tracker', transport: 'http', url: hostile.mcpUrl, headers: [], auth: { kind: 'oauth' } },
      accountLabel: 'Work',
    });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await w.call('auth:login', target);
    expect(hostile.record.issuedClientSecrets).toHaveLength(1);
    // From now on the revocation endpoint bounces to the resource server's origin.
    const rsOrigin = new URL(hostile.mcpUrl).origin;
    hostile.setRevocationRedirect(`${rsOrigin}/collect`);

    const out = await w.call('auth:logout', target);
    expect(out.signedIn).toBe(false);
    expect(out.revoked).toBe(false);
    // The resource server legitimately sees the access token on /mcp; nothing else may arrive.
    expect(hostile.record.rsRequests.filter((r) => r.url.startsWith('/collect'))).toEqual([]);
    const seen = JSON.stringify(hostile.record.rsRequests);
    for (const secret of [...hostile.record.issuedRefreshTokens, ...hostile.record.issuedClientSecrets]) expect(seen).not.toContain(secret);
    // Deleted locally whatever the authorization server did.
    expect((await w.keychain().keys(`${target.serverId}/`)).filter((k) => k.includes('/oauth-'))).toEqual([]);
  });

  it("a redirect to another origin drops Authorization, cookies and the server's headers; a same-origin redirect keeps them", async () => {
    const elsewhere = await recorder();
    const server = await recorder((req, base) => {
      if (req.url === '/away') return { status: 302, headers: { location: `${elsewhere.base}/landing` } };
      if (req.url === '/stay') return { status: 302, headers: { location: `${base}/landed` } };
      return undefined;
    });
    const scope = new OAuthNetworkScope({
      serverName: 'Tracker',
      serverUrl: `${server.base}/mcp`,
      serverHeaderNames: ['X-Api-Key'],
      confirm: async () => true,
    });
    cleanups.push(() => scope.close());
    const guarded = createGuardedFetch(scope);
    const headers = { authorization: 'Bearer secret-access-token', cookie: 'session=secret-cookie', 'x-api-key': 'secret-api-key', accept: 'application/json' };

    expect((await guarded(`${server.base}/stay`, { headers })).status).toBe(200);
    const kept = server.seen.find((r) => r.url === '/landed')!;
    expect(kept.headers).toMatchObject({ authorization: 'Bearer secret-access-token', cookie: 'session=secret-cookie', 'x-api-key': 'secret-api-key' });

    expect((await guarded(`${server.base}/away`, { headers })).status).toBe(200);
    const landed = elsewhere.seen.find((r) => r.url === '/landing')!;
    expect(landed).toBeDefined();
    expect(landed.headers.authorization).toBeUndefined();
    expect(landed.headers.cookie).toBeUndefined();
    expect(landed.headers['x-api-key']).toBeUndefined();
    expect(landed.headers.accept).toBe('application/json');
    expect(JSON.stringify(elsewhere.seen)).not.toMatch(/secret-/);
  });

  it('a credential-carrying POST that a server redirects (307) to another origin is not re-sent there', async () => {
    const elsewhere = await recorder();
    const server = await recorder((req) => (req.url === '/token' ? { status: 307, headers: { location: `${elsewhere.base}/steal` } } : undefined));
    const scope = new OAuthNetworkScope({ serverName: 'Tracker', serverUrl: `${server.base}/mcp`, confirm: async () => true });
    cleanups.push(() => scope.close());
    const guarded = createGuardedFetch(scope);
    const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'secret-refresh', client_secret: 'secret-client' });
    const error = await rejection(guarded(`${server.base}/token`, { method: 'POST', body }));
    expect(error.code).toBe('DENIED');
    expect(error.message).toContain(`${elsewhere.base}/steal`);
    expect(error.message).toMatch(/body .* would be sent there/);
    expect(elsewhere.seen).toEqual([]);
  });

  it('a redirect from https to plain http is refused, even to this computer', async () => {
    const plain = await recorder();
    const tls = await recorder((req) => (req.url === '/start' ? { status: 302, headers: { location: `${plain.base}/landing` } } : undefined));
    // as.example.test is a public https host (here: served by the loopback recorder).
    const network = new TestNetwork().host('as.example.test', ['93.184.215.14'], tls.base).host('mcp.example.test', ['93.184.215.15']);
    const scope = new OAuthNetworkScope({ serverName: 'Tracker', serverUrl: 'http://127.0.0.1:1/mcp', resolve: network.resolve, confirm: async () => true });
    cleanups.push(() => scope.close());
    const guarded = createGuardedFetch(scope, network.fetch);
    const error = await rejection(guarded('https://as.example.test/start', { headers: { authorization: 'Bearer secret' } }));
    expect(error.code).toBe('DENIED');
    expect(error.message).toBe(`Refusing to follow a redirect from https://as.example.test/start to ${plain.base}/landing: it leaves https for plain http.`);
    expect(tls.seen.map((r) => r.url)).toEqual(['/start']);
    expect(plain.seen).toEqual([]);
  });

  it("a server's secret header reaches the server and never its authorization server", async () => {
    const f = await fixture({ accessTokenTtlSeconds: 2 });
    const w = await world();
    const added = await w.call('servers:add', {
      definition: { name: 'Tracker', transport: 'http', url: f.mcpUrl, headers: [{ name: 'X-Api-Key', secret: true }], auth: { kind: 'oauth' } },
      accountLabel: 'Work',
      secrets: [{ name: 'header:x-api-key', value: 'api-key-for-the-server-only' }],
    });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    const status = await w.call('auth:login', target);
    await w.call('connections:disconnect', target);
    // Let the access token expire, so connecting refreshes it at the authorization server.
    const expiresAt = Date.parse(status.expiresAt!);
    while (Date.now() <= expiresAt + 1100) await new Promise((r) => setTimeout(r, 200));
    const asBefore = f.record.asRequests.length;
    expect((await w.connect(target.serverId, target.accountId)).state).toBe('connected');
    expect(f.record.refreshes).toBe(1);
    const toAs = f.record.asRequests.slice(asBefore);
    expect(toAs.length).toBeGreaterThan(0);
    expect(JSON.stringify(toAs)).not.toContain('api-key-for-the-server-only');
    expect(f.record.rsRequests.some((r) => r.headers['x-api-key'] === 'api-key-for-the-server-only')).toBe(true);
  });
});
