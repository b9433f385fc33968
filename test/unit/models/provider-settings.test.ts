/**
 * The pure parts of model provider settings: which base URLs may carry a key, how keychain entry
 * names bind a key to a host, how `retry-after` is read, and how the providers file is loaded.
 */
import { describe, expect, it } from 'vitest';
import { ApiKeyInput, ModelId, ProviderBaseUrl, keyOrigin, providerUrlProblem } from '../../../shared/domain/model-providers';
import { secretKeyPrefix } from '../../../shared/domain/servers';
import { retryAfterMs, scrubKey } from '../../../electron/core/models/adapter-common';
import { parseProviderKeyName, providerKeyName } from '../../../electron/core/models/provider-keys';
import { ProviderSettings } from '../../../electron/core/models/provider-settings';
import { memorySettingsStore } from '../../../electron/core/settings/memory-settings-store';

describe('provider base URLs', () => {
  it.each([
    'https://api.anthropic.com',
    'https://api.openai.com/v1',
    'https://openrouter.ai/api/v1',
    'http://127.0.0.1:11434/v1',
    'http://localhost:1234/v1',
    'http://[::1]:8000/v1',
    'http://127.0.0.2:8000',
  ])('%s may carry a key', (url) => expect(providerUrlProblem(url)).toBeNull());

  it.each([
    ['http://10.0.0.5:11434/v1', /plain http is only allowed on this machine/],
    ['http://models.example.com/v1', /use https for models\.example\.com/],
    ['http://localhost.example.com/v1', /plain http/],
    ['file:///etc/passwd', /scheme file: is not allowed/],
    ['https://me:secret@api.example.com', /username or password/],
    ['https://api.example.com/v1?key=sk-1', /must not contain a query/],
    ['https://api.example.com/v1#x', /fragment/],
    ['api.openai.com/v1', /absolute URL/],
  ])('%s is refused', (url, why) => expect(providerUrlProblem(url)).toMatch(why));

  it('is stored trimmed and without trailing slashes; the key is bound to its origin', () => {
    expect(ProviderBaseUrl.parse(' https://api.openai.com/v1/ ')).toBe('https://api.openai.com/v1');
    expect(keyOrigin('https://api.openai.com/v1')).toBe('https://api.openai.com');
    expect(keyOrigin('http://127.0.0.1:11434/v1')).toBe('http://127.0.0.1:11434');
  });

  it('a pasted key is trimmed; a key with a space or newline inside is refused without repeating it', () => {
    expect(ApiKeyInput.parse('  sk-abc\n')).toBe('sk-abc');
    const bad = ApiKeyInput.safeParse('sk-abc\r\nX-Injected: 1');
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).not.toContain('sk-abc');
  });
});

describe('model ids', () => {
  it('a provider cannot list a model id that hides or reorders text in the chat header and dialogs', () => {
    expect(ModelId.safeParse('claude-sonnet-4-5').success).toBe(true);
    expect(ModelId.safeParse('llama3.1:8b').success).toBe(true);
    for (const hostile of ['gpt\u202e4o-mini', 'gpt-4o\u200b', 'safe\u2066model\u2069', 'a\u061cb']) {
      const parsed = ModelId.safeParse(hostile);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/invisible or direction-changing/);
    }
  });
});

describe('keychain entry names of provider keys', () => {
  it('round-trip, and no server prefix can ever match one', () => {
    const name = providerKeyName('anthropic-1a2b3c4d', 'https://api.anthropic.com');
    expect(name).toBe('model-provider:anthropic-1a2b3c4d@https%3A%2F%2Fapi.anthropic.com');
    expect(parseProviderKeyName(name)).toEqual({ providerId: 'anthropic-1a2b3c4d', origin: 'https://api.anthropic.com' });
    // Server secrets are removed by prefix `<serverId>/`; an entity id has no ':' so none matches.
    for (const serverId of ['model-provider', 'model', 'm']) expect(name.startsWith(secretKeyPrefix(serverId))).toBe(false);
    expect(parseProviderKeyName('server-1/account-1/bearer')).toBeNull();
  });
});

describe('retry-after', () => {
  it('reads seconds, milliseconds and HTTP dates; ignores nonsense', () => {
    const h = (init: Record<string, string>) => new Headers(init);
    expect(retryAfterMs(h({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(h({ 'retry-after': '0.5' }))).toBe(500);
    expect(retryAfterMs(h({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30_000);
    expect(retryAfterMs(h({ 'retry-after': 'soon' }))).toBeNull();
    expect(retryAfterMs(h({}))).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
  });

  it('scrubs a key and its URL-encoded form from provider text', () => {
    expect(scrubKey('sent sk-a/b= and sk-a%2Fb%3D', 'sk-a/b=')).toBe('sent [REDACTED] and [REDACTED]');
  });
});

describe('the providers file', () => {
  const valid = { id: 'local-1', kind: 'openai', label: 'Local', baseUrl: 'http://127.0.0.1:11434/v1', defaultModel: null };

  it('an empty file is no providers; a valid one loads', () => {
    expect(ProviderSettings.open(memorySettingsStore()).list()).toEqual([]);
    const s = ProviderSettings.open(memorySettingsStore({ version: 1, providers: [valid] }));
    expect(s.problem).toBeNull();
    expect(s.list()).toEqual([valid]);
  });

  it('an invalid, duplicated or newer file is reported with the field, used for nothing, and never overwritten', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ version: 1, providers: [{ ...valid, baseUrl: 'http://10.1.1.1/v1' }] }, /providers\.0\.baseUrl: plain http/],
      [{ version: 1, providers: [valid, valid] }, /providers\.1\.id: duplicate provider id "local-1"/],
      [{ version: 1, providers: [{ ...valid, apiKey: 'sk-1' }] }, /providers\.0: Unrecognized key/],
      [{ version: 2, providers: [] }, /written by a newer Warden \(version 2\)/],
    ];
    for (const [doc, why] of cases) {
      const store = memorySettingsStore(doc);
      const s = ProviderSettings.open(store);
      expect(s.problem).toMatch(why);
      expect(s.list()).toEqual([]);
      expect(() => s.update((d) => void d.push(valid as never))).toThrow(/Changes are refused until it is fixed/);
      expect(store.read()).toEqual(doc);
    }
  });

  it('a change that would make the file invalid is refused naming the field, and nothing is written', () => {
    const store = memorySettingsStore({ version: 1, providers: [valid] });
    const s = ProviderSettings.open(store);
    expect(() => s.update((d) => void (d[0]!.baseUrl = 'http://remote.example.com'))).toThrow(/providers\.0\.baseUrl: plain http/);
    expect(store.read()).toEqual({ version: 1, providers: [valid] });
    expect(s.list()).toEqual([valid]);
  });
});
