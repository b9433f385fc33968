/**
 * The sign-in callback and the end of a sign-in, from the attacker's side: a local web page that
 * hits Warden's loopback receiver, an authorization server that is not the one Warden sent the
 * person to (RFC 9207 mix-up), and deleting a server or an account, whose tokens must be revoked
 * at the authorization server and forgotten. Real core, real keychain, loopback fixtures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAuthService } from '../../../electron/core/mcp/oauth/oauth-service';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { ServerService } from '../../../electron/core/settings/server-service';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import { startOAuthFixture, type FixtureOptions, type OAuthFixture } from './fixture-oauth-servers';
import { cleanUpWorld, FollowingBrowser, startCoreWorld, type CoreWorld, type CoreWorldOptions } from './core-world';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  vi.restoreAllMocks();
});

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

async function addOAuthServer(w: CoreWorld, url: string, label = 'Work'): Promise<{ serverId: string; accountId: string }> {
  const view = await w.call('servers:add', { definition: { name: 'Tracker', transport: 'http', url, headers: [], auth: { kind: 'oauth' } }, accountLabel: label });
  return { serverId: view.definition.id, accountId: view.accounts[0]!.id };
}

describe('the loopback sign-in receiver', () => {
  it('a local page that hits the receiver with a wrong or missing state cannot cancel the sign-in or inject its code', async () => {
    const forged: number[] = [];
    // Before the browser comes back, another page on this machine fires at the receiver.
    const browser = new FollowingBrowser(async (authorizationUrl) => {
      const receiver = authorizationUrl.searchParams.get('redirect_uri')!;
      for (const query of ['code=attacker-code&state=forged', 'error=access_denied&state=forged', 'code=attacker-code', 'error=access_denied']) {
        const answer = await fetch(`${receiver}?${query}`);
        forged.push(answer.status);
        await answer.body?.cancel();
      }
    });
    const f = await fixture();
    const w = await world({ browser });
    const target = await addOAuthServer(w, f.mcpUrl);
    const status = await w.call('auth:login', target);
    expect(forged).toEqual([400, 400, 400, 400]);
    expect(status.signedIn).toBe(true);
    // Exactly one code was exchanged: the authorization server's own.
    expect(f.record.codeExchanges).toBe(1);
    expect(f.record.authorizations).toHaveLength(1);
  });

  it('a response naming another issuer than the authorization server Warden sent the person to (mix-up) is refused before any token request', async () => {
    const f = await fixture({ advertiseIssParameter: true, issInRedirect: 'https://attacker.example/' });
    const w = await world();
    const target = await addOAuthServer(w, f.mcpUrl);
    const r = await w.attempt('auth:login', target);
    expect(f.record.codeExchanges).toBe(0);
    expect(r.ok).toBe(false);
    const error = (r as { ok: false; error: { code: string; message: string } }).error;
    expect(error.code).toBe('AUTH_FAILED');
    expect(error.message).toContain('"https://attacker.example/"');
    expect(error.message).toContain(`Warden sent you to ${f.issuer}`);
    expect(error.message).toContain('RFC 9207');
    expect(f.record.codeExchanges).toBe(0);
    expect((await w.call('auth:status', target)).signedIn).toBe(false);
  });

  it('when the authorization server promises iss (RFC 9207), a response without it is refused and one with the right issuer is accepted', async () => {
    const silent = await fixture({ advertiseIssParameter: true });
    const w = await world();
    const t1 = await addOAuthServer(w, silent.mcpUrl);
    const r = await w.attempt('auth:login', t1);
    expect(silent.record.codeExchanges).toBe(0);
    expect(r).toMatchObject({ ok: false, error: { code: 'AUTH_FAILED', message: expect.stringContaining('came back without it') } });
    expect(silent.record.codeExchanges).toBe(0);

    const honest = await fixture({ advertiseIssParameter: true, issInRedirect: 'issuer' });
    const t2 = await addOAuthServer(w, honest.mcpUrl);
    expect((await w.call('auth:login', t2)).signedIn).toBe(true);
    expect(honest.record.codeExchanges).toBe(1);
  });

  it('the authorization URL (its state and PKCE challenge) is never written to the console during a sign-in', async () => {
    const lines: string[] = [];
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    }
    const f = await fixture();
    const w = await world();
    const target = await addOAuthServer(w, f.mcpUrl);
    await w.call('auth:login', target);
    const opened = new URL(w.browser.opened[0]!);
    const state = opened.searchParams.get('state')!;
    const challenge = opened.searchParams.get('code_challenge')!;
    expect(state.length).toBeGreaterThan(20);
    const logged = lines.join('\n');
    expect(logged).not.toContain(state);
    expect(logged).not.toContain(challenge);
    expect(logged).not.toContain(opened.search);
  });
});

describe('deleting a server or an account ends its sign-in at the authorization server', () => {
  it('deleting a server through the contract revokes every account’s tokens (RFC 7009) and deletes them from the keychain', async () => {
    const f = await fixture();
    const w = await world();
    const target = await addOAuthServer(w, f.mcpUrl);
    const second = (await w.call('accounts:add', { serverId: target.serverId, label: 'Personal' })).id;
    await w.call('auth:login', target);
    await w.call('auth:login', { serverId: target.serverId, accountId: second });
    expect((await w.connect(target.serverId, target.accountId)).state).toBe('connected');
    expect(f.record.revoked).toEqual([]);

    const removed = await w.call('servers:remove', { serverId: target.serverId });
    expect(removed.deletedSecrets).toBeGreaterThanOrEqual(6);
    expect(new Set(f.record.revoked)).toEqual(new Set([...f.record.issuedAccessTokens, ...f.record.issuedRefreshTokens]));
    expect(await w.keychain().keys(`${target.serverId}/`)).toEqual([]);
    // A revoked token is worthless: the resource server refuses it now.
    const answer = await fetch(f.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.record.issuedAccessTokens[0]}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await answer.body?.cancel();
    expect(answer.status).toBe(401);
  });

  it('removing one account revokes that account’s tokens and leaves the other signed in', async () => {
    const f = await fixture();
    const w = await world();
    const target = await addOAuthServer(w, f.mcpUrl);
    const personal = (await w.call('accounts:add', { serverId: target.serverId, label: 'Personal' })).id;
    await w.call('auth:login', target);
    const [workAccess, workRefresh] = [f.record.issuedAccessTokens[0]!, f.record.issuedRefreshTokens[0]!];
    await w.call('auth:login', { serverId: target.serverId, accountId: personal });
    await w.call('accounts:remove', { accountId: target.accountId });
    expect(new Set(f.record.revoked)).toEqual(new Set([workAccess, workRefresh]));
    expect((await w.call('auth:status', { serverId: target.serverId, accountId: personal })).signedIn).toBe(true);
  });

  it('a sign-in that is discarded is dropped from memory at once: a provider obtained before can no longer present the token', async () => {
    const f = await fixture();
    const dataDir = mkdtempSync(join(tmpdir(), 'warden-oauth-discard-'));
    const service = `Warden-oauth-discard-${randomBytes(4).toString('hex')}`;
    cleanups.push(() => cleanUpWorld({ dataDir, service }));
    const secrets = new KeytarSecretStore({ service });
    const servers = new ServerService({ settings: SettingsRepository.open(openConfSettingsStore(dataDir)), secrets });
    const browser = new FollowingBrowser();
    const oauth = new OAuthService({ secrets, browser, servers, confirmAuthorizationServer: async () => true });
    // As the core wires them.
    servers.onOAuthDiscarded((server, accounts) => oauth.discardServer(server, accounts));
    const view = await servers.addServer({ definition: { name: 'Tracker', transport: 'http', url: f.mcpUrl, headers: [], auth: { kind: 'oauth' } }, accountLabel: 'Work' });
    const target = { serverId: view.definition.id, accountId: view.accounts[0]!.id };
    await oauth.login(target);
    const provider = oauth.providerFor(servers.getServer(target.serverId)!, target.accountId)!;
    expect((await provider.tokens())?.access_token).toBe(f.record.issuedAccessTokens[0]);

    await servers.removeServer(target.serverId);
    expect(await provider.tokens()).toBeUndefined();
    await expect(provider.saveTokens({ access_token: 'late-refresh-result', token_type: 'Bearer', issuer: f.issuer })).rejects.toThrow(/sign-in was removed/);
    expect(await secrets.keys(`${target.serverId}/`)).toEqual([]);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
