import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  HttpServerDefinition,
  ServerDefinition,
  StdioServerDefinition,
  displayCommandLine,
  parseSecretKey,
  secretKey,
  secretKeyPrefix,
  serverUrlProblem,
} from '../../../shared/domain/servers';
import { endpointHash, newEntityId } from '../../../electron/core/settings/identity';

const stdio = {
  id: 'files-1a2b3c4d',
  name: 'Files',
  transport: 'stdio' as const,
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp/x'],
  env: [{ name: 'API_KEY', secret: true }, { name: 'MODE', value: 'ro' }],
};
const http = {
  id: 'remote-00aa11bb',
  name: 'Remote',
  transport: 'http' as const,
  url: 'https://mcp.example.com/mcp?x=1',
  headers: [{ name: 'Authorization', secret: true }],
  auth: { kind: 'oauth' as const, scopes: ['read'] },
};

function issues(value: unknown): string {
  const r = ServerDefinition.safeParse(value);
  return r.success ? '' : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

describe('server definition schema', () => {
  it('accepts stdio and http definitions', () => {
    expect(ServerDefinition.parse(stdio)).toMatchObject({ transport: 'stdio', args: stdio.args });
    expect(ServerDefinition.parse(http)).toMatchObject({ transport: 'http' });
  });

  it('a secret-marked env var cannot carry its value into settings', () => {
    expect(issues({ ...stdio, env: [{ name: 'API_KEY', secret: true, value: 'sk-live' }] })).toMatch(/env\.0\.value: must be absent when secret/);
  });

  it('plain http is refused except on loopback, and credentials in URLs are refused', () => {
    expect(issues({ ...http, url: 'http://mcp.example.com/mcp' })).toMatch(/url: plain http is only allowed on loopback/);
    expect(issues({ ...http, url: 'http://127.0.0.1:8080/mcp' })).toBe('');
    expect(issues({ ...http, url: 'http://[::1]:8080/mcp' })).toBe('');
    expect(serverUrlProblem('https://u:p@example.com/')).toMatch(/username or password/);
    expect(serverUrlProblem('file:///etc/passwd')).toMatch(/scheme file:/);
  });

  it('bad input names the field', () => {
    expect(issues({ ...stdio, command: '' })).toMatch(/^command: must not be empty/);
    expect(issues({ ...stdio, env: [{ name: '1BAD', value: 'x' }] })).toMatch(/env\.0\.name/);
    expect(issues({ ...stdio, env: [{ name: 'A', value: 'x' }, { name: 'A', value: 'y' }] })).toMatch(/env\.1\.name: duplicate/);
    expect(issues({ ...http, headers: [{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }] })).toMatch(/headers\.1\.name: duplicate/);
    expect(issues({ ...stdio, id: 'Not An Id' })).toMatch(/^id:/);
    expect(issues({ ...stdio, surprise: 1 })).toMatch(/surprise/);
  });
});

describe('endpoint hash', () => {
  it('changes when what runs changes, not when names, env or query change', () => {
    const def = StdioServerDefinition.parse(stdio);
    const h = endpointHash(def);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(endpointHash({ ...def, name: 'Renamed', env: [] })).toBe(h);
    expect(endpointHash({ ...def, args: [...def.args, '--write'] })).not.toBe(h);
    expect(endpointHash({ ...def, command: 'node' })).not.toBe(h);
    expect(endpointHash({ ...def, cwd: '/tmp' })).not.toBe(h);
    const hd = HttpServerDefinition.parse(http);
    expect(endpointHash({ ...hd, url: 'https://MCP.example.com/mcp?y=2' })).toBe(endpointHash(hd));
    expect(endpointHash({ ...hd, url: 'https://mcp.example.com/other' })).not.toBe(endpointHash(hd));
    expect(endpointHash({ ...hd, url: 'https://mcp.example.com:444/mcp' })).not.toBe(endpointHash(hd));
  });

  it('argument boundaries are part of the identity (["a b"] differs from ["a","b"])', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), fc.array(fc.string()), (a, b) => {
        const da = ServerDefinition.parse({ ...stdio, args: a });
        const db = ServerDefinition.parse({ ...stdio, args: b });
        const same = JSON.stringify(a) === JSON.stringify(b);
        expect(endpointHash(da) === endpointHash(db)).toBe(same);
      }),
    );
  });
});

describe('ids and secret keys', () => {
  it('ids are slug + random suffix and valid entity ids', () => {
    const id = newEntityId('My GitHub Server!');
    expect(id).toMatch(/^my-github-server-[0-9a-f]{8}$/);
    expect(newEntityId('')).toMatch(/^server-[0-9a-f]{8}$/);
    expect(newEntityId('My GitHub Server!')).not.toBe(id);
  });

  it('a secret name cannot forge another account prefix', () => {
    const forged = secretKey('srv-1', 'acct-1', '../acct-2/env:X');
    expect(forged.startsWith(secretKeyPrefix('srv-1', 'acct-1'))).toBe(true);
    expect(forged.startsWith(secretKeyPrefix('srv-1', 'acct-2'))).toBe(false);
    expect(secretKey('s', 'a', 'oauth:tokens', 'https://issuer.example/')).toBe('s/a/oauth%3Atokens@https%3A%2F%2Fissuer.example%2F');
  });

  it('secret keys round-trip through parseSecretKey for any name and issuer', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.option(fc.string({ minLength: 1 }), { nil: undefined }), (name, issuer) => {
        const parsed = parseSecretKey(secretKey('srv-1', 'acct-1', name, issuer));
        expect(parsed).toEqual(issuer === undefined ? { serverId: 'srv-1', accountId: 'acct-1', name } : { serverId: 'srv-1', accountId: 'acct-1', name, issuer });
      }),
    );
  });

  it('the displayed command line is exact and untruncated', () => {
    const long = 'x'.repeat(5000);
    const line = displayCommandLine('npx', ['-y', 'pkg', 'a b', "it's", long, '', 'a\u001bb']);
    expect(line).toBe(`npx -y pkg 'a b' 'it'\\''s' ${long} '' 'a\\x1bb'`);
  });
});
