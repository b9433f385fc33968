/**
 * OAuth 2.1 end to end against a loopback authorization server + MCP resource server
 * built from the SDK's server-side auth helpers, with the REAL OS keychain (gnome-keyring in a
 * private D-Bus session): run with `scripts/with-keyring.sh npx vitest run test/integration/oauth`.
 *
 * The "browser" is a BrowserOpener that does what a browser does with the authorization URL:
 * requests it, follows the authorization server's redirect to Warden's loopback receiver.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAuthService } from '../../../electron/core/mcp/oauth/oauth-service';
import { ConnectionManager } from '../../../electron/core/mcp/connection-manager';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import { ServerService } from '../../../electron/core/settings/server-service';
import { endpointHash as serverEndpointHash } from '../../../electron/core/settings/identity';
import type { BrowserOpener } from '../../../electron/core/ports';
import { parseSecretKey } from '../../../shared/domain/servers';
import { AuthStatus, authChannels } from '../../../shared/contract/auth';
import { createAuthHandlers } from '../../../electron/core/mcp/oauth/auth-handlers';
import { WardenError } from '../../../shared/result';
import { startOAuthFixture, type FixtureOptions, type OAuthFixture } from './fixture-oauth-servers';

const SERVICE = `Warden-oauth-test-${randomBytes(4).toString('hex')}`;

/** A browser stand-in: loads the authorization URL and follows redirects, optionally tampering with the final one. */
class FollowingBrowser implements BrowserOpener {
  readonly opened: string[] = [];
  readonly visits: Promise<void>[] = [];
  constructor(private readonly tamper?: (callback: URL) => URL) {}

  async open(url: string): Promise<void> {
    this.opened.push(url);
    // Like shell.openExternal: returns once handed to the browser, which then works on its own.
    this.visits.push(this.visit(url));
  }

  private async visit(url: string): Promise<void> {
    const answer = await fetch(url, { redirect: 'manual' });
    await answer.body?.cancel();
    const location = answer.headers.get('location');
    if (!location) return;
    let callback = new URL(location, url);
    if (this.tamper) callback = this.tamper(callback);
    const landed = await fetch(callback, { redirect: 'manual' });
    await landed.body?.cancel();
  }
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

interface World {
  fixture: OAuthFixture;
  dataDir: string;
  servers: ServerService;
  serverId: string;
  accountId: string;
  browser: FollowingBrowser;
  oauth: OAuthService;
  fetched: string[];
  manager: ConnectionManager;
}

let secrets: KeytarSecretStore;
const worlds: World[] = [];

beforeAll(() => {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
    throw new Error('No D-Bus session: run these tests with scripts/with-keyring.sh (they use the real OS keychain)');
  }
  secrets = new KeytarSecretStore({ service: SERVICE });
});

afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.manager.close();
    await Promise.allSettled(w.browser.visits);
    await w.fixture.close();
    rmSync(w.dataDir, { recursive: true, force: true });
  }
});

afterAll(async () => {
  for (const k of await secrets.keys('')) await secrets.delete(k);
});

async function world(options: FixtureOptions & { loginTimeoutMs?: number } = {}, browser = new FollowingBrowser(), clientId?: string, scopes?: string[]): Promise<World> {
  const fixture = await startOAuthFixture(options);
  const dataDir = mkdtempSync(join(tmpdir(), 'warden-oauth-data-'));
  const servers = new ServerService({ settings: SettingsRepository.open(openConfSettingsStore(dataDir)), secrets });
  const view = await servers.addServer({
    definition: { name: 'OAuth fixture', transport: 'http', url: fixture.mcpUrl, headers: [], auth: { kind: 'oauth', ...(clientId ? { clientId } : {}), ...(scopes ? { scopes } : {}) } },
    accountLabel: 'Work',
  });
  const serverId = view.definition.id;
  const accountId = view.accounts[0]!.id;
  const fetched: string[] = [];
  const oauth = new OAuthService({
    secrets,
    browser,
    servers,
    // The fixture's authorization server is on another port (another origin): the person allows it.
    confirmAuthorizationServer: async () => true,
    loginTimeoutMs: options.loginTimeoutMs ?? 30_000,
    fetch: (input, init) => {
      fetched.push(String(input));
      return fetch(input, init);
    },
  });
  const manager = new ConnectionManager({
    directory: {
      server: (id) => servers.getServer(id),
      accountLabel: (sid, aid) => servers.accountsOf(sid).find((a) => a.id === aid)?.label,
      endpointHash: serverEndpointHash,
    },
    secrets,
    authProviderFor: (def, acct) => oauth.providerFor(def, acct),
    reconnect: { maxAttempts: 0 },
    connectTimeoutMs: 20_000,
  });
  const w: World = { fixture, dataDir, servers, serverId, accountId, browser, oauth, fetched, manager };
  worlds.push(w);
  return w;
}

async function rejection(p: Promise<unknown>): Promise<WardenError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(WardenError);
    return e as WardenError;
  }
  throw new Error('expected the promise to reject');
}

async function callWhoami(w: World): Promise<string> {
  const result = await w.manager.call({ serverId: w.serverId, accountId: w.accountId, toolName: 'whoami' }, {}, {
    signal: new AbortController().signal,
    operationId: `op-${randomBytes(4).toString('hex')}`,
  });
  return JSON.stringify(result);
}

/** Reads the stored token JSON from a fresh keytar store (no cache): the OS keychain's own answer. */
async function keychainTokens(w: World): Promise<{ access_token: string; refresh_token?: string } | null> {
  const fresh = new KeytarSecretStore({ service: SERVICE });
  // Keyed by server, account, resource (`oauth-tokens~<hash>`) and issuer.
  const key = (await fresh.keys(`${w.serverId}/${w.accountId}/oauth-tokens`)).find((k) => parseSecretKey(k)?.issuer === w.fixture.issuer);
  const raw = key ? await fresh.get(key) : null;
  return raw === null ? null : (JSON.parse(raw) as { access_token: string; refresh_token?: string });
}

describe('OAuth login against a loopback authorization server (real keychain)', () => {
  it('login stores the token only in the OS keychain and an MCP call succeeds with it', async () => {
    const w = await world();
    const target = { serverId: w.serverId, accountId: w.accountId };
    expect((await w.oauth.status(target)).signedIn).toBe(false);

    // Before signing in, a connection is "auth required" and neither registers nor opens a browser.
    const before = await w.manager.connect(w.serverId, w.accountId);
    expect(before).toMatchObject({ state: 'auth_required', reason: `This server needs you to sign in (OAuth, at ${new URL(w.fixture.issuer).origin}); start sign-in for this account.` });
    expect(w.browser.opened).toEqual([]);
    expect(w.fixture.record.registrations).toBe(0);
    // Nothing was asked of the authorization server before the person chose to sign in there.
    expect(w.fixture.record.asRequests).toEqual([]);

    const status = AuthStatus.parse(await w.oauth.login(target));
    expect(status).toMatchObject({ signedIn: true, issuer: w.fixture.issuer, canRefresh: true, loginInProgress: false });
    expect(w.browser.opened).toHaveLength(1);

    // What the authorization server saw: dynamic registration, PKCE, the resource indicator, a
    // loopback redirect on 127.0.0.1 with a random port, a long random state.
    const [authz] = w.fixture.record.authorizations;
    expect(w.fixture.record.registrations).toBe(1);
    expect(authz!.resource).toBe(w.fixture.mcpUrl);
    expect(authz!.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(authz!.state!.length).toBeGreaterThanOrEqual(40);
    const opened = new URL(w.browser.opened[0]!);
    expect(opened.searchParams.get('code_challenge_method')).toBe('S256');
    expect(opened.searchParams.get('resource')).toBe(w.fixture.mcpUrl);

    // The token is in the real keychain, keyed by server, account and issuer.
    const stored = await keychainTokens(w);
    expect(stored?.access_token).toBe(w.fixture.record.issuedAccessTokens.at(-1));

    // And the MCP call through the connection layer succeeds with it.
    const after = await w.manager.connect(w.serverId, w.accountId);
    expect(after.state).toBe('connected');
    expect(await callWhoami(w)).toContain('client:');
    expect(w.fixture.record.toolCalls).toBe(1);
    expect(w.fixture.record.acceptedTokens).toContain(stored!.access_token);

    // The status the renderer gets carries no token.
    const json = JSON.stringify(await w.oauth.status(target));
    for (const t of [...w.fixture.record.issuedAccessTokens, ...w.fixture.record.issuedRefreshTokens]) expect(json).not.toContain(t);

    // No token in any file of the data directory (settings file included).
    const files = filesUnder(w.dataDir);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = readFileSync(f, 'latin1');
      for (const t of [...w.fixture.record.issuedAccessTokens, ...w.fixture.record.issuedRefreshTokens]) expect(text).not.toContain(t);
    }
  });

  it('an expired access token is refreshed with the refresh token and the call succeeds without a browser', async () => {
    const w = await world({ accessTokenTtlSeconds: 2 });
    const target = { serverId: w.serverId, accountId: w.accountId };
    const status = await w.oauth.login(target);
    const first = (await keychainTokens(w))!;
    expect(w.browser.opened).toHaveLength(1);
    // Wait for the expiry the server announced (a clock condition, not a race with work).
    const expiresAt = Date.parse(status.expiresAt!);
    while (Date.now() <= expiresAt + 1100) await new Promise((r) => setTimeout(r, 200));

    expect((await w.manager.connect(w.serverId, w.accountId)).state).toBe('connected');
    expect(await callWhoami(w)).toContain('client:');
    expect(w.fixture.record.refreshes).toBeGreaterThanOrEqual(1);
    expect(w.browser.opened).toHaveLength(1); // no second sign-in
    const refreshed = (await keychainTokens(w))!;
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect(refreshed.access_token).toBe(w.fixture.record.issuedAccessTokens.at(-1));
    expect(w.fixture.record.acceptedTokens).toContain(refreshed.access_token);
    expect(w.fixture.record.acceptedTokens).not.toContain(first.access_token);
  });

  it('logout deletes tokens, client registration and verifier from the keychain and the next connect needs sign-in', async () => {
    const w = await world();
    const target = { serverId: w.serverId, accountId: w.accountId };
    await w.oauth.login(target);
    expect((await w.manager.connect(w.serverId, w.accountId)).state).toBe('connected');
    const prefix = `${w.serverId}/${w.accountId}/oauth-`;
    const fresh = new KeytarSecretStore({ service: SERVICE });
    expect((await fresh.keys(prefix)).length).toBeGreaterThanOrEqual(3); // tokens, client, issuer pointer

    // Through the contract handlers, as the renderer would call it; the response must fit the contract.
    const handlers = createAuthHandlers(w.oauth);
    const out = authChannels['auth:logout'].response.parse(await handlers['auth:logout'](authChannels['auth:logout'].request.parse(target)));
    expect(out).toMatchObject({ signedIn: false, canRefresh: false, revoked: true });
    // The authorization server revoked the refresh and access tokens, so a copy is worthless too.
    expect(w.fixture.record.revoked).toEqual([w.fixture.record.issuedRefreshTokens.at(-1), w.fixture.record.issuedAccessTokens.at(-1)]);
    expect(out.removedEntries).toBeGreaterThanOrEqual(3);
    expect(await fresh.keys(prefix)).toEqual([]);
    expect(await keychainTokens(w)).toBeNull();
    expect(authChannels['auth:status'].response.parse(await handlers['auth:status'](target)).signedIn).toBe(false);

    await w.manager.disconnect(w.serverId, w.accountId);
    const again = await w.manager.connect(w.serverId, w.accountId);
    expect(again.state).toBe('auth_required');
    expect(w.browser.opened).toHaveLength(1); // logout never starts a sign-in by itself
  });

  it('a pre-registered client id from the server definition is used without dynamic registration', async () => {
    const w = await world({ preRegisteredClientIds: ['warden-preregistered'] }, new FollowingBrowser(), 'warden-preregistered');
    const status = await w.oauth.login({ serverId: w.serverId, accountId: w.accountId });
    expect(status.signedIn).toBe(true);
    expect(w.fixture.record.registrations).toBe(0);
    expect(w.fixture.record.authorizations.map((a) => a.clientId)).toEqual(['warden-preregistered']);
    expect((await w.manager.connect(w.serverId, w.accountId)).state).toBe('connected');
    expect(await callWhoami(w)).toContain('client:warden-preregistered');
  });
});

describe('OAuth scopes', () => {
  it('scopes configured on the server definition are requested at sign-in and granted to the token', async () => {
    const w = await world({}, new FollowingBrowser(), undefined, ['mcp:read', 'mcp:write']);
    await w.oauth.login({ serverId: w.serverId, accountId: w.accountId });
    expect(w.fixture.record.authorizations[0]!.scopes).toEqual(['mcp:read', 'mcp:write']);
    expect(new URL(w.browser.opened[0]!).searchParams.get('scope')).toBe('mcp:read mcp:write');
  });
});

describe('OAuth material is keyed by issuer', () => {
  it('when the resource server names a new authorization server, the old refresh token is never sent to it', async () => {
    const w = await world({ accessTokenTtlSeconds: 2 });
    const other = await startOAuthFixture();
    try {
      const status = await w.oauth.login({ serverId: w.serverId, accountId: w.accountId });
      const expiresAt = Date.parse(status.expiresAt!);
      while (Date.now() <= expiresAt + 1100) await new Promise((r) => setTimeout(r, 200));

      w.fixture.setAdvertisedAuthorizationServer(other.issuer);
      const after = await w.manager.connect(w.serverId, w.accountId);
      // The account needs a new sign-in with the new authorization server; nothing was presented to it.
      expect(after.state).toBe('auth_required');
      expect(other.record.registrations).toBe(0);
      expect(other.record.refreshes).toBe(0);
      expect(other.record.codeExchanges).toBe(0);
      expect(w.fixture.record.refreshes).toBe(0);
      expect(w.browser.opened).toHaveLength(1);
      // The old issuer's tokens stay under the old issuer's key until logout.
      expect(await keychainTokens(w)).not.toBeNull();
      expect((await w.oauth.logout({ serverId: w.serverId, accountId: w.accountId })).removedEntries).toBeGreaterThanOrEqual(3);
      expect(await keychainTokens(w)).toBeNull();
    } finally {
      await other.close();
    }
  });
});

describe('OAuth refusals', () => {
  for (const [label, methods] of [
    ['lists only "plain"', ['plain']],
    ['omits code_challenge_methods_supported', null],
  ] as const) {
    it(`an authorization server that ${label} is refused ("does not support PKCE S256") before any browser opens`, async () => {
      const w = await world({ codeChallengeMethods: methods === null ? null : [...methods] });
      const error = await rejection(w.oauth.login({ serverId: w.serverId, accountId: w.accountId }));
      expect(error.code).toBe('UNSUPPORTED');
      expect(error.message).toContain('does not support PKCE S256');
      expect(w.browser.opened).toEqual([]);
      expect(w.fixture.record.registrations).toBe(0);
      expect(w.fixture.record.authorizations).toEqual([]);
      expect(await keychainTokens(w)).toBeNull();
    });
  }

  it('authorization server metadata naming another issuer is refused (RFC 8414 issuer check)', async () => {
    const w = await world({ issuerOverride: 'https://login.example.test/' });
    const error = await rejection(w.oauth.login({ serverId: w.serverId, accountId: w.accountId }));
    expect(error.code).toBe('AUTH_FAILED');
    expect(error.message).toMatch(/issuer/);
    expect(w.browser.opened).toEqual([]);
    expect(w.fixture.record.registrations).toBe(0);
  });

  it('a redirect carrying a wrong state is ignored and no token is requested', async () => {
    const tampering = new FollowingBrowser((cb) => {
      cb.searchParams.set('state', 'forged-by-another-page');
      return cb;
    });
    const w = await world({ loginTimeoutMs: 3000 }, tampering);
    const error = await rejection(w.oauth.login({ serverId: w.serverId, accountId: w.accountId }));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toMatch(/wrong or missing state was ignored/);
    expect(w.browser.opened).toHaveLength(1);
    expect(w.fixture.record.authorizations).toHaveLength(1);
    expect(w.fixture.record.codeExchanges).toBe(0);
    expect(await keychainTokens(w)).toBeNull();
    expect((await w.oauth.status({ serverId: w.serverId, accountId: w.accountId })).signedIn).toBe(false);
  });

  it('an authorization server on plain http off-loopback is never fetched', async () => {
    const w = await world({ advertisedAuthorizationServer: 'http://auth.example.test/' });
    const error = await rejection(w.oauth.login({ serverId: w.serverId, accountId: w.accountId }));
    expect(error.code).toBe('DENIED');
    expect(error.message).toContain('http://auth.example.test/');
    expect(w.fetched.length).toBeGreaterThan(0); // the resource server itself was asked
    expect(w.fetched.filter((u) => new URL(u).hostname !== '127.0.0.1')).toEqual([]);
    expect(w.browser.opened).toEqual([]);
  });

  it('an authorization page on plain http off-loopback is never opened', async () => {
    const w = await world({ authorizationEndpointOverride: 'http://login.example.test/authorize' });
    const error = await rejection(w.oauth.login({ serverId: w.serverId, accountId: w.accountId }));
    expect(error.code).toBe('DENIED');
    expect(w.browser.opened).toEqual([]);
    expect(w.fixture.record.registrations).toBe(0);
    expect(w.fetched.filter((u) => new URL(u).hostname !== '127.0.0.1')).toEqual([]);
  });
});
