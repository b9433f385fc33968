/**
 * Server-side request forgery through OAuth discovery, from the attacker's side: a remote MCP
 * server (or the authorization server it names) writes the URLs Warden requests in the
 * background. Hosts are made to resolve where the test says through the core's DNS port; a host
 * "on a private network" or "at the cloud metadata address" is played by a loopback recorder, so
 * a request that got through would be seen.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAuthNetworkScope, type ResolveHost } from '../../../electron/core/mcp/oauth/network-scope';
import { createGuardedFetch } from '../../../electron/core/mcp/oauth/url-policy';
import { WardenError } from '../../../shared/result';
import { startOAuthFixture, type FixtureOptions, type OAuthFixture } from './fixture-oauth-servers';
import { cleanUpWorld, startCoreWorld, TestNetwork, type CoreWorld, type CoreWorldOptions } from './core-world';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  vi.unstubAllGlobals();
});

/** A loopback HTTP server answering with `handle`, recording every request path. */
async function httpServer(handle: (req: IncomingMessage, res: ServerResponse) => void = (_q, r) => r.end('{}')): Promise<{ base: string; seen: string[] }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    handle(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A remote MCP server whose 401 names `resourceMetadata` as its protected-resource metadata. */
async function hostileMcpServer(resourceMetadata: string): Promise<{ base: string; seen: string[] }> {
  return httpServer((req, res) => {
    if (req.url?.startsWith('/mcp')) {
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${resourceMetadata}"`, 'content-type': 'application/json' });
      res.end('{"error":"unauthorized"}');
      return;
    }
    res.writeHead(404);
    res.end();
  });
}

async function fixture(options: FixtureOptions = {}): Promise<OAuthFixture> {
  const f = await startOAuthFixture(options);
  cleanups.push(() => f.close());
  return f;
}

async function world(options: CoreWorldOptions = {}): Promise<CoreWorld> {
  const w = await startCoreWorld(options);
  cleanups.push(async () => {
    await w.close().catch(() => undefined);
    await cleanUpWorld(w);
  });
  return w;
}

async function addOAuthServer(w: CoreWorld, url: string): Promise<{ serverId: string; accountId: string }> {
  const view = await w.call('servers:add', { definition: { name: 'Tracker', transport: 'http', url, headers: [], auth: { kind: 'oauth' } }, accountLabel: 'Work' });
  return { serverId: view.definition.id, accountId: view.accounts[0]!.id };
}

async function loginError(w: CoreWorld, target: { serverId: string; accountId: string }): Promise<{ code: string; message: string }> {
  const r = await w.attempt('auth:login', target);
  expect(r.ok).toBe(false);
  return (r as { ok: false; error: { code: string; message: string } }).error;
}

describe('OAuth discovery cannot be turned against this computer or its network', () => {
  it("a remote server's resource_metadata pointing at this computer is never requested, by a background connect or by a sign-in", async () => {
    const admin = await httpServer();
    const flush = `${admin.base}/admin/flush`;
    const remote = await hostileMcpServer(flush);
    const network = new TestNetwork().host('mcp.hostile.test', ['93.184.215.14'], remote.base).install();
    const w = await world({ resolveHost: network.resolve });
    const target = await addOAuthServer(w, 'https://mcp.hostile.test/mcp');

    const connected = await w.connect(target.serverId, target.accountId);
    expect(remote.seen.length).toBeGreaterThan(0); // the remote server was asked and answered 401
    expect(admin.seen).toEqual([]);
    expect(connected.state).toBe('error');
    expect(connected.reason).toContain(`Refusing to contact ${flush}`);
    expect(connected.reason).toContain('an address on this computer (loopback)');
    expect(connected.reason).toContain('https://mcp.hostile.test/mcp is not');

    const error = await loginError(w, target);
    expect(error.code).toBe('DENIED');
    expect(error.message).toContain(`Refusing to contact ${flush}`);
    expect(admin.seen).toEqual([]);
    expect(w.browser.opened).toEqual([]);
  });

  it('an authorization server whose name resolves to a private address is refused after DNS resolution, before any request', async () => {
    const internal = await httpServer();
    const f = await fixture({ advertisedAuthorizationServer: 'https://sso.internal.test/' });
    const network = new TestNetwork().host('sso.internal.test', ['10.0.0.7'], internal.base).install();
    const w = await world({ resolveHost: network.resolve });
    const target = await addOAuthServer(w, f.mcpUrl);
    const error = await loginError(w, target);
    expect(internal.seen).toEqual([]);
    expect(error.code).toBe('DENIED');
    expect(error.message).toContain('Refusing to contact https://sso.internal.test/.well-known/');
    expect(error.message).toContain('sso.internal.test resolves to 10.0.0.7, an address on a private network');
    expect(internal.seen).toEqual([]);
    expect(w.originQuestions).toEqual([]); // refused outright: nothing a person could allow
    expect(w.browser.opened).toEqual([]);
  });

  it('the cloud metadata address and reserved addresses are refused even for a server on this computer', async () => {
    // Each address is answered by a loopback recorder, as if something listened there.
    const listener = await httpServer();
    const network = new TestNetwork().host('169.254.169.254', ['169.254.169.254'], listener.base).host('0.0.0.0', ['0.0.0.0'], listener.base).install();
    for (const [as, words] of [
      ['https://169.254.169.254/', '169.254.169.254 is a link-local address'],
      ['https://[::ffff:169.254.169.254]/', 'is a link-local address'],
      ['https://0.0.0.0/', '0.0.0.0 is a reserved or special-purpose address'],
    ] as const) {
      const f = await fixture({ advertisedAuthorizationServer: as });
      const w = await world({ resolveHost: network.resolve });
      const target = await addOAuthServer(w, f.mcpUrl);
      const error = await loginError(w, target);
      expect(listener.seen).toEqual([]);
      expect(error.code).toBe('DENIED');
      expect(error.message).toContain(words);
      expect(error.message).toContain('Warden never sends sign-in requests there');
    }
  });

  it('registration and token endpoints are held to the same rules as discovery', async () => {
    const metadataService = await httpServer();
    const f = await fixture({ metadataOverrides: { registration_endpoint: 'https://register.cloud.test/register' } });
    const network = new TestNetwork().host('register.cloud.test', ['169.254.169.254'], metadataService.base).install();
    const w = await world({ resolveHost: network.resolve });
    const target = await addOAuthServer(w, f.mcpUrl);
    const error = await loginError(w, target);
    expect(metadataService.seen).toEqual([]);
    expect(error.code).toBe('DENIED');
    expect(error.message).toContain('Refusing to contact https://register.cloud.test/register');
    expect(error.message).toContain('resolves to 169.254.169.254, a link-local address');
    expect(metadataService.seen).toEqual([]);
    expect(f.record.registrations).toBe(0);
    expect(w.browser.opened).toEqual([]);
  });

  it('an authorization server on another origin is used only after the person says yes in the native dialog; the default is no', async () => {
    const f = await fixture();
    const asOrigin = new URL(f.issuer).origin;
    const refusing = await world({ allowOrigins: false });
    const target = await addOAuthServer(refusing, f.mcpUrl);
    const error = await loginError(refusing, target);
    expect(f.record.asRequests).toEqual([]);
    expect(error.code).toBe('DENIED');
    expect(error.message).toContain(`you did not allow Warden to contact ${asOrigin}`);
    expect(refusing.originQuestions).toEqual([
      { serverName: 'Tracker', serverUrl: f.mcpUrl, origin: asOrigin, url: `${asOrigin}/.well-known/oauth-authorization-server` },
    ]);
    expect(f.record.asRequests).toEqual([]);
    expect(refusing.browser.opened).toEqual([]);

    // A host that wires no dialog at all refuses too.
    const headless = await world({ extra: { confirmAuthorizationServer: undefined } });
    const t2 = await addOAuthServer(headless, f.mcpUrl);
    expect((await loginError(headless, t2)).message).toContain(`contact ${asOrigin}`);
    expect(f.record.asRequests).toEqual([]);

    // Saying yes signs in, and the question is asked once per sign-in.
    const allowing = await world({ allowOrigins: true });
    const t3 = await addOAuthServer(allowing, f.mcpUrl);
    expect((await allowing.call('auth:login', t3)).signedIn).toBe(true);
    expect(allowing.originQuestions).toHaveLength(1);
  });

  it('a background connection never asks and never contacts an authorization server the person did not choose', async () => {
    const f = await fixture({ accessTokenTtlSeconds: 2 });
    const other = await fixture();
    const w = await world();
    const target = await addOAuthServer(w, f.mcpUrl);
    const status = await w.call('auth:login', target);
    await w.call('connections:disconnect', target);
    const questions = w.originQuestions.length;
    // The token expires and the server now names another authorization server.
    const expiresAt = Date.parse(status.expiresAt!);
    while (Date.now() <= expiresAt + 1100) await new Promise((r) => setTimeout(r, 200));
    f.setAdvertisedAuthorizationServer(other.issuer);
    const after = await w.connect(target.serverId, target.accountId);
    expect(other.record.asRequests).toEqual([]);
    expect(after.state).toBe('auth_required');
    expect(after.reason).toContain(`Refusing to contact ${new URL(other.issuer).origin}/.well-known/oauth-authorization-server`);
    expect(after.reason).toContain('Sign in to this account again to review it');
    expect(other.record.asRequests).toEqual([]);
    expect(f.record.refreshes).toBe(0);
    expect(w.originQuestions).toHaveLength(questions);
  });
});

describe('every hop and every connection is checked', () => {
  it('a redirect from a public authorization server to a private address is refused at that hop', async () => {
    const internal = await httpServer();
    const publicAs = await httpServer((req, res) => {
      res.writeHead(302, { location: 'https://intranet.example.test/secret' });
      res.end();
    });
    const network = new TestNetwork().host('as.example.test', ['93.184.215.20'], publicAs.base).host('intranet.example.test', ['192.168.1.10'], internal.base);
    const scope = new OAuthNetworkScope({ serverName: 'Tracker', serverUrl: 'https://mcp.example.test/mcp', resolve: network.resolve, confirm: async () => true });
    cleanups.push(() => scope.close());
    const guarded = createGuardedFetch(scope, network.fetch);
    const error = await guarded('https://as.example.test/start').then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(WardenError);
    expect((error as WardenError).message).toContain('Refusing to contact https://intranet.example.test/secret: intranet.example.test resolves to 192.168.1.10, an address on a private network');
    expect(publicAs.seen).toEqual(['GET /start']);
    expect(internal.seen).toEqual([]);
  });

  it('a name that resolves to a public address when checked and to this computer when connecting (DNS rebinding) is refused at connect time', async () => {
    const target = await httpServer();
    const port = new URL(target.base).port;
    let lookups = 0;
    const rebinding: ResolveHost = async (hostname) => {
      if (hostname !== 'rebind.example.test') throw Object.assign(new Error('unknown host'), { code: 'ENOTFOUND' });
      lookups++;
      return [{ address: lookups === 1 ? '93.184.215.30' : '127.0.0.1', family: 4 }];
    };
    const scope = new OAuthNetworkScope({ serverName: 'Tracker', serverUrl: 'https://mcp.example.test/mcp', resolve: rebinding, confirm: async () => true });
    cleanups.push(() => scope.close());
    const guarded = createGuardedFetch(scope); // the real fetch, through the scope's connection pool
    const error = await guarded(`https://rebind.example.test:${port}/token`, { method: 'POST', body: 'refresh_token=secret' }).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(WardenError);
    expect((error as WardenError).message).toContain('rebind.example.test resolves to 127.0.0.1, an address on this computer (loopback)');
    expect(lookups).toBe(2);
    expect(target.seen).toEqual([]);
  });

  it('a server on a private network may use an authorization server on that network, a public server may not', async () => {
    const sso = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const network = new TestNetwork()
      .host('mcp.corp.test', ['10.1.0.5'])
      .host('mcp.public.test', ['93.184.215.40'])
      .host('sso.corp.test', ['10.1.0.9'], sso.base);
    for (const [serverUrl, allowed] of [
      ['https://mcp.corp.test/mcp', true],
      ['https://mcp.public.test/mcp', false],
    ] as const) {
      const scope = new OAuthNetworkScope({ serverName: 'Tracker', serverUrl, resolve: network.resolve, confirm: async () => true });
      cleanups.push(() => scope.close());
      const result = await createGuardedFetch(scope, network.fetch)('https://sso.corp.test/.well-known/openid-configuration').then(
        (r) => r.status,
        (e: unknown) => (e as Error).message,
      );
      if (allowed) expect(result).toBe(200);
      else expect(result).toContain('only a server that is itself on a private network may send Warden there, and https://mcp.public.test/mcp is not');
    }
    expect(sso.seen).toHaveLength(1);
  });
});
