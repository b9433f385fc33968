import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../electron/core/import/config-formats';
import { defaultConfigPath } from '../../../electron/core/import/config-locations';
import { localPathProblem } from '../../../electron/core/local-path';
import { ImportService } from '../../../electron/core/import/import-service';
import { parseJsonc } from '../../../electron/core/import/jsonc';
import { secretReasons } from '../../../electron/core/import/secret-detection';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { memorySettingsStore } from '../../../electron/core/settings/memory-settings-store';
import { ServerService } from '../../../electron/core/settings/server-service';
import { SettingsRepository } from '../../../electron/core/settings/settings-repository';
import { refusingFileDialogs, type FileDialogs } from '../../../electron/core/ports';

const fixtures = resolve(__dirname, '../../fixtures/configs');
const fixture = (name: string) => resolve(fixtures, name);

function importer(fileDialogs: FileDialogs = refusingFileDialogs) {
  // Previews never touch the keychain; the store is only there to build a real service.
  const servers = new ServerService({ settings: SettingsRepository.open(memorySettingsStore()), secrets: new KeytarSecretStore() });
  return new ImportService({ servers, location: { platform: 'linux', env: {}, home: '/home/me' }, fileDialogs });
}

describe('config formats', () => {
  it('Claude Desktop: stdio and url entries; plain http to a remote host is not importable', () => {
    const parsed = parseConfig(readFileSync(fixture('claude_desktop_config.json'), 'utf8'), 'claude-desktop');
    expect(parsed.entries.map((e) => [e.sourceName, e.transport])).toEqual([
      ['filesystem', 'stdio'],
      ['github', 'stdio'],
      ['remote-notes', 'http'],
      ['insecure', 'http'],
    ]);
    expect(parsed.entries[1]!.env).toContainEqual({ name: 'GITHUB_TOOLSETS', value: 'repos,issues' });
  });

  it('VS Code mcp.json is read as JSONC (comments, trailing commas), with sse and unsupported types reported', () => {
    const parsed = parseConfig(readFileSync(fixture('vscode-mcp.json'), 'utf8'), 'vscode');
    expect(parsed.passwordInputs).toEqual(new Set(['perplexity-key']));
    const byName = Object.fromEntries(parsed.entries.map((e) => [e.sourceName, e]));
    expect(byName.legacy).toMatchObject({ transport: 'http', url: 'http://127.0.0.1:8931/sse' });
    expect(byName.legacy!.notes.join(' ')).toMatch(/legacy SSE/);
    expect(byName.weird!.problem).toBe('unsupported server type "websocket"');
    expect(parseJsonc('{"a": "// not a comment", /* c */ "b": [1,2,],}')).toEqual({ a: '// not a comment', b: [1, 2] });
    expect(parseJsonc('{"a": 1, // trailing\n}')).toEqual({ a: 1 });
  });

  it('a file with neither mcpServers nor servers is refused with a reason', () => {
    expect(() => parseConfig('{"foo": 1}', null)).toThrow(/neither "mcpServers".*nor "servers"/);
    expect(() => parseConfig('not json', null)).toThrow(/not valid JSON/);
  });
});

describe('secret detection', () => {
  it('flags secret-looking names and values, not ordinary settings', () => {
    expect(secretReasons('GITHUB_PERSONAL_ACCESS_TOKEN', 'x')).toEqual(['name ends with TOKEN']);
    expect(secretReasons('OPENAI_API_KEY', 'sk-proj-FAKEfakeFAKEfake0123456789')).toHaveLength(2);
    expect(secretReasons('DB_PASSWORD', 'pw')).not.toEqual([]);
    expect(secretReasons('CLIENT_SECRET', 'abc')).not.toEqual([]);
    expect(secretReasons('Authorization', 'Bearer abc.def.ghi-123')).not.toEqual([]);
    expect(secretReasons('X', 'ghp_FAKEfakeFAKEfake0123456789abcdefABCD')).toEqual(['value looks like a GitHub token']);
    expect(secretReasons('X', 'xoxb-1234567890-abcdef')).not.toEqual([]);
    expect(secretReasons('X', 'AKIAABCDEFGHIJKLMNOP')).not.toEqual([]);
    expect(secretReasons('X', 'a8F3kLq9Zx2Vb7Nm4Rt6Yp1Wc5Hd0Js8')).toEqual(['value is a long random-looking string']);
    for (const [n, v] of [
      ['LOG_LEVEL', 'debug'],
      ['GITHUB_TOOLSETS', 'repos,issues'],
      ['ROOT', '/Users/me/Library/Application Support/SomethingLong/Folder'],
      ['PGHOST', 'localhost'],
      ['URL', 'https://example.com/a/very/long/path/that/is/not/secret'],
      ['API_KEY', '${input:key}'],
    ]) {
      expect(secretReasons(n!, v!), `${n}=${v}`).toEqual([]);
    }
  });

  it('any long random token is flagged whatever its name', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), (bytes) => {
        const token = Buffer.from(bytes).toString('base64url');
        fc.pre(token.length >= 32 && /[a-z]/.test(token) && /[A-Z0-9]/.test(token));
        expect(secretReasons('SETTING', token)).not.toEqual([]);
      }),
    );
  });
});

describe('default locations', () => {
  it('per OS, from injected env and home', () => {
    expect(defaultConfigPath('claude-desktop', { platform: 'darwin', env: {}, home: '/Users/me' })).toBe(
      '/Users/me/Library/Application Support/Claude/claude_desktop_config.json',
    );
    expect(defaultConfigPath('claude-desktop', { platform: 'win32', env: { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' }, home: 'C:\\Users\\me' })).toBe(
      'C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
    expect(defaultConfigPath('claude-desktop', { platform: 'linux', env: {}, home: '/home/me' })).toBe('/home/me/.config/Claude/claude_desktop_config.json');
    expect(defaultConfigPath('claude-desktop', { platform: 'linux', env: { XDG_CONFIG_HOME: '/x' }, home: '/home/me' })).toBe('/x/Claude/claude_desktop_config.json');
    expect(defaultConfigPath('vscode-user', { platform: 'darwin', env: {}, home: '/Users/me' })).toBe('/Users/me/Library/Application Support/Code/User/mcp.json');
    expect(defaultConfigPath('vscode-user', { platform: 'win32', env: { APPDATA: 'C:\\R' }, home: 'C:\\Users\\me' })).toBe('C:\\R\\Code\\User\\mcp.json');
    expect(defaultConfigPath('vscode-user', { platform: 'linux', env: {}, home: '/home/me' })).toBe('/home/me/.config/Code/User/mcp.json');
    expect(defaultConfigPath('vscode-workspace', { platform: 'linux', env: {}, home: '/h', workspaceFolder: '/w/proj' })).toBe('/w/proj/.vscode/mcp.json');
    expect(() => defaultConfigPath('vscode-workspace', { platform: 'linux', env: {}, home: '/h' })).toThrow(/workspaceFolder: required/);
    expect(defaultConfigPath('cursor', { platform: 'win32', env: {}, home: 'C:\\Users\\me' })).toBe('C:\\Users\\me\\.cursor\\mcp.json');
    expect(defaultConfigPath('cursor', { platform: 'darwin', env: {}, home: '/Users/me' })).toBe('/Users/me/.cursor/mcp.json');
  });
});

describe('import preview', () => {
  it('shows the exact untruncated command, lists secrets by name and reason, and never includes a secret value', async () => {
    const preview = await importer().preview({ source: 'claude-desktop', path: fixture('claude_desktop_config.json') });
    const text = JSON.stringify(preview);
    expect(text).not.toContain('ghp_FAKEfakeFAKEfake0123456789abcdefABCD');
    expect(text).not.toContain('FAKE.token.value-1234567890');
    const [fs, gh, remote, insecure] = preview.entries;
    expect(fs!.commandLine).toBe("npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop '/Users/me/My Documents'");
    expect(gh!.detectedSecrets).toEqual([
      { valueId: 'e1.env.0', field: 'env', name: 'GITHUB_PERSONAL_ACCESS_TOKEN', reasons: ['name ends with TOKEN', 'value looks like a GitHub token'], length: 40 },
    ]);
    expect(gh!.draft).toMatchObject({ env: [{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', secret: true }, { name: 'GITHUB_TOOLSETS', value: 'repos,issues' }] });
    expect(remote!.detectedSecrets.map((s) => [s.field, s.name])).toEqual([['header', 'Authorization']]);
    expect(insecure!.problem).toMatch(/^url: plain http is only allowed on loopback/);
    expect(insecure!.draft).toBeNull();
  });

  it('VS Code ${input:...} references become secrets to set later, and secret-looking arguments are called out', async () => {
    const vs = await importer().preview({ source: 'vscode-user', path: fixture('vscode-mcp.json') });
    const perplexity = vs.entries.find((e) => e.sourceName === 'Perplexity')!;
    expect(perplexity.draft).toMatchObject({ env: [{ name: 'PERPLEXITY_API_KEY', secret: true }] });
    expect(perplexity.detectedSecrets).toEqual([]);
    expect(perplexity.notes.join(' ')).toMatch(/VS Code input "perplexity-key" \(a password\)/);
    const cursor = await importer().preview({ source: 'cursor', path: fixture('cursor-mcp.json') });
    const pg = cursor.entries.find((e) => e.sourceName === 'postgres')!;
    expect(pg.notes.join(' ')).toMatch(/Argument 3 looks like a secret \(value is a URL with a password in it\)/);
    expect(pg.detectedSecrets.map((s) => s.name)).toEqual(['PGPASSWORD']);
    expect(cursor.format).toBe('cursor');
  });

  it('an arbitrary file cannot be read through the importer: non-.json names are refused and parse errors quote nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-probe-'));
    try {
      writeFileSync(join(dir, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA');
      writeFileSync(join(dir, 'keys.json'), '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA');
      await expect(importer().preview({ source: 'file', path: join(dir, 'id_rsa') })).rejects.toThrow(/path: expected a \.json config file/);
      await expect(importer().preview({ source: 'claude-desktop', path: join(dir, 'id_rsa') })).rejects.toThrow(/path: expected a \.json config file/);
      const error = await importer().preview({ source: 'file', path: join(dir, 'keys.json') }).catch((e: Error) => e);
      expect(String(error)).toMatch(/is not valid JSON/);
      expect(String(error)).not.toMatch(/BEGIN|OPENSSH|AAAA/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing file is reported with its path', async () => {
    // The person accepts the chooser's default location, where nothing is.
    const acceptDefault: FileDialogs = { openFile: async (request) => request.defaultPath ?? null, saveFile: async () => null };
    await expect(importer(acceptDefault).chooseAndPreview({ source: 'cursor' })).rejects.toThrow('path: no config file at /home/me/.cursor/mcp.json');
  });
});

describe('paths import may read', () => {
  it.each([
    ['\\\\server\\share\\mcp.json', 'win32'],
    ['//server/share/mcp.json', 'win32'],
    ['\\\\?\\C:\\mcp.json', 'win32'],
    ['\\\\.\\PhysicalDrive0', 'win32'],
    ['\\??\\C:\\mcp.json', 'win32'],
    ['//server/share/mcp.json', 'linux'],
    ['\\\\server\\share\\mcp.json', 'darwin'],
  ] as const)('%s is refused as a network or device path on %s', (path, platform) => {
    expect(localPathProblem(path, platform)).toMatch(/^is a network or device path/);
  });

  it('Windows device names, drive-relative and relative paths are refused; ordinary local paths are not', () => {
    expect(localPathProblem('C:\\Users\\me\\con.json', 'win32')).toBe('names the Windows device "con.json", not a file');
    expect(localPathProblem('C:\\Users\\me\\NUL', 'win32')).toMatch(/names the Windows device "NUL"/);
    expect(localPathProblem('C:\\Users\\nul. \\mcp.json', 'win32')).toMatch(/names the Windows device/);
    expect(localPathProblem('C:mcp.json', 'win32')).toMatch(/must be a full path starting with a drive/);
    expect(localPathProblem('mcp.json', 'linux')).toBe('must be a full path starting with /');
    expect(localPathProblem('/home/me/a\0b.json', 'linux')).toBe('contains a NUL character');
    expect(localPathProblem('C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json', 'win32')).toBeNull();
    expect(localPathProblem('/home/me/.cursor/mcp.json', 'linux')).toBeNull();
    expect(localPathProblem('/Users/me/console.json', 'darwin')).toBeNull();
  });
});
