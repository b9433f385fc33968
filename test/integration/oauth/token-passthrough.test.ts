/**
 * Token passthrough from the attacker's side: a compromised renderer (or a settings file edited
 * while Warden was closed) points an OAuth server at another address. The tokens issued for the
 * old address must never reach the new one, in any request, for any account.
 *
 * Real core, real keychain (scripts/with-keyring.sh), two loopback fixtures: the server the person
 * signed in to, and the hostile server the address is changed to, which records every header.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOAuthFixture, type OAuthFixture } from './fixture-oauth-servers';
import { cleanUpWorld, startCoreWorld, type CoreWorld } from './core-world';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function fixture(): Promise<OAuthFixture> {
  const f = await startOAuthFixture();
  cleanups.push(() => f.close());
  return f;
}

async function world(options: Parameters<typeof startCoreWorld>[0] = {}): Promise<CoreWorld> {
  const w = await startCoreWorld(options);
  cleanups.push(async () => {
    await w.close().catch(() => undefined);
    await cleanUpWorld(w);
  });
  return w;
}

function oauthDraft(url: string) {
  return { name: 'Tracker', transport: 'http' as const, url, headers: [], auth: { kind: 'oauth' as const } };
}

/** Every header value the fixture's MCP endpoint ever received, as one string. */
function headersSeenBy(f: OAuthFixture): string {
  return JSON.stringify([...f.record.rsRequests, ...f.record.asRequests].map((r) => r.headers));
}

function everyToken(f: OAuthFixture): string[] {
  return [...f.record.issuedAccessTokens, ...f.record.issuedRefreshTokens];
}

describe('OAuth material follows the server address (token passthrough)', () => {
  it("editing a server's address through the contract revokes and deletes every account's sign-in, says so in the save dialog, and the new address never sees the old token", async () => {
    const original = await fixture();
    const hostile = await fixture();
    const w = await world();

    const added = await w.call('servers:add', { definition: oauthDraft(original.mcpUrl), accountLabel: 'Work' });
    const serverId = added.definition.id;
    const work = added.accounts[0]!.id;
    const personal = (await w.call('accounts:add', { serverId, label: 'Personal' })).id;
    for (const accountId of [work, personal]) expect((await w.call('auth:login', { serverId, accountId })).signedIn).toBe(true);
    expect((await w.connect(serverId, work)).state).toBe('connected');
    const prefix = `${serverId}/`;
    expect((await w.keychain().keys(prefix)).filter((k) => k.includes('/oauth-')).length).toBeGreaterThanOrEqual(6);
    expect(everyToken(original)).toHaveLength(4);

    // The compromised renderer changes the address; the person confirms the save dialog.
    await w.call('servers:edit', { serverId, definition: oauthDraft(hostile.mcpUrl) });

    // Connecting to the new address presents nothing: the hostile server saw no old token.
    for (const accountId of [work, personal]) {
      expect((await w.connect(serverId, accountId)).state).toBe('auth_required');
    }
    expect(hostile.record.rsRequests.length).toBeGreaterThan(0);
    const seen = headersSeenBy(hostile);
    for (const token of everyToken(original)) expect(seen).not.toContain(token);
    expect(hostile.record.rsRequests.every((r) => r.headers.authorization === undefined)).toBe(true);

    const dialog = w.serverDialogs.at(-1)!;
    expect(dialog.action).toBe('edit');
    expect(dialog.detail).toContain('Saving signs every account out of this server');
    expect(dialog.detail).toContain(`from ${original.mcpUrl} to ${hostile.mcpUrl}`);
    expect(dialog.detail).toMatch(/revokes and deletes its OAuth sign-in/);

    // Deleted from the keychain for every account, and from memory: nobody is signed in.
    expect((await w.keychain().keys(prefix)).filter((k) => k.includes('/oauth-'))).toEqual([]);
    for (const accountId of [work, personal]) {
      const status = await w.call('auth:status', { serverId, accountId });
      expect(status).toMatchObject({ signedIn: false, canRefresh: false, issuer: null });
    }
    // Revoked at the authorization server that issued them (RFC 7009), for both accounts.
    expect(new Set(original.record.revoked)).toEqual(new Set(everyToken(original)));
  });

  it('editing only the name keeps the sign-in (the endpoint did not change)', async () => {
    const original = await fixture();
    const w = await world();
    const added = await w.call('servers:add', { definition: oauthDraft(original.mcpUrl), accountLabel: 'Work' });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await w.call('auth:login', target);
    await w.call('servers:edit', { serverId: target.serverId, definition: { ...oauthDraft(original.mcpUrl), name: 'Tracker (work)' } });
    expect(w.serverDialogs.at(-1)!.detail).not.toContain('signs every account out');
    expect((await w.call('auth:status', target)).signedIn).toBe(true);
    expect(original.record.revoked).toEqual([]);
  });

  it('tokens are keyed by resource: a server address changed behind Warden’s back never receives the tokens issued for the old one', async () => {
    const original = await fixture();
    const hostile = await fixture();
    const first = await world();
    const added = await first.call('servers:add', { definition: oauthDraft(original.mcpUrl), accountLabel: 'Work' });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await first.call('auth:login', target);
    await first.core.close();

    // While Warden is closed, something rewrites the address in the settings file.
    const settingsPath = join(first.dataDir, 'settings.json');
    writeFileSync(settingsPath, readFileSync(settingsPath, 'utf8').split(original.mcpUrl).join(hostile.mcpUrl));

    const second = await startCoreWorld({ dataDir: first.dataDir, service: first.service });
    cleanups.push(() => second.close());
    const state = (await second.connect(target.serverId, target.accountId)).state;
    expect(hostile.record.rsRequests.length).toBeGreaterThan(0);
    const seen = headersSeenBy(hostile);
    for (const token of everyToken(original)) expect(seen).not.toContain(token);
    expect(state).toBe('auth_required');
    expect((await second.call('auth:status', target)).signedIn).toBe(false);
  });
});
