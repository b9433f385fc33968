/**
 * Pure parts of OAuth's defences: how an address is classified (what SSRF checks rest on) and the
 * credential vault's registration of every token with the redactor.
 */
import { describe, expect, it } from 'vitest';
import { OAuthCredentialVault } from '../../../electron/core/mcp/oauth/credential-vault';
import { classifyAddress } from '../../../electron/core/mcp/oauth/network-scope';
import type { SecretStore } from '../../../electron/core/ports';
import { Redactor } from '../../../electron/core/redact/redactor';

describe('address classes', () => {
  it.each([
    ['93.184.215.14', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['10.0.0.7', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['100.64.0.1', 'private'],
    ['fd00::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.5', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['ff02::1', 'reserved'],
    ['not-an-address', 'reserved'],
    ['[::1]', 'loopback'],
    ['172.32.0.1', 'public'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

/** A SecretStore that announces nothing (so only the vault's own registrations reach the redactor). */
class QuietStore implements SecretStore {
  readonly values = new Map<string, string>();
  async get(key: string) {
    return this.values.get(key) ?? null;
  }
  async set(key: string, value: string) {
    this.values.set(key, value);
  }
  async delete(key: string) {
    return this.values.delete(key);
  }
}

describe('OAuth credential vault and the redactor', () => {
  it('registers each token and the client secret on save and again on read, not just the stored JSON', async () => {
    const store = new QuietStore();
    const saving = new Redactor();
    const vault = new OAuthCredentialVault(store, 'srv-1', 'acct-1', 'https://mcp.example.com/mcp', (v) => saving.register(v));
    await vault.saveClientInformation('https://as.example.com/', { client_id: 'cid', client_secret: 'client-secret-value-1' });
    await vault.saveTokens('https://as.example.com/', { access_token: 'access-token-value-1', refresh_token: 'refresh-token-value-1', id_token: 'id-token-value-1', token_type: 'Bearer' });
    const echoed = 'access-token-value-1 refresh-token-value-1 id-token-value-1 client-secret-value-1';
    expect(saving.scrubString(echoed)).toBe('[REDACTED] [REDACTED] [REDACTED] [REDACTED]');

    // A later run: a fresh redactor learns them when the session is read.
    const reading = new Redactor();
    const later = new OAuthCredentialVault(store, 'srv-1', 'acct-1', 'https://mcp.example.com/mcp', (v) => reading.register(v));
    expect(reading.scrubString(echoed)).toBe(echoed);
    const issuer = await later.currentIssuer();
    expect(await later.tokens(issuer!)).toMatchObject({ access_token: 'access-token-value-1' });
    expect(reading.scrubString(echoed)).toBe('[REDACTED] [REDACTED] [REDACTED] [REDACTED]');
  });

  it('tokens stored for one server address are not found for another', async () => {
    const store = new QuietStore();
    const a = new OAuthCredentialVault(store, 'srv-1', 'acct-1', 'https://mcp.example.com/mcp');
    await a.saveTokens('https://as.example.com/', { access_token: 'token-for-a', token_type: 'Bearer' });
    const b = new OAuthCredentialVault(store, 'srv-1', 'acct-1', 'https://mcp.example.com/other');
    expect(await b.currentIssuer()).toBeNull();
    expect(await b.tokens('https://as.example.com/')).toBeUndefined();
    // Same origin and path, another query: the same resource.
    const again = new OAuthCredentialVault(store, 'srv-1', 'acct-1', 'https://mcp.example.com/mcp?tenant=x');
    expect((await again.tokens('https://as.example.com/'))?.access_token).toBe('token-for-a');
  });
});
