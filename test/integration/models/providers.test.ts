/**
 * Model provider settings and keys end to end through the core's dispatch (as the renderer
 * reaches it), against the REAL keychain (run with scripts/with-keyring.sh), real settings files,
 * the durable ledger with its redactor, and loopback servers speaking the providers' protocols.
 */
import { recordsOf } from '../../unit/ledger/helpers';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCore, type CoreDeps, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { openLedgerForApp, REDACTED, type Redactor } from '../../../electron/core/ledger';
import type { LedgerService } from '../../../electron/core/ledger/service';
import { ModelError, type ModelProvider, type ModelStreamEvent } from '../../../electron/core/models/provider';
import { providerKeyName } from '../../../electron/core/models/provider-keys';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { ChannelName } from '../../../shared/ipc';
import type { Result } from '../../../shared/result';
import { startAnthropicFixture, startOpenAIFixture, type ModelFixture } from '../../fixtures/models';
import { filesContaining } from '../secrets/scan';

const service = `Warden-models-test-${process.pid}-${randomBytes(3).toString('hex')}`;
const ANTHROPIC_KEY = `sk-ant-${randomBytes(24).toString('hex')}`;
const OPENAI_KEY = `sk-proj-${randomBytes(24).toString('hex')}`;

let dir: string;
let ledger: LedgerService;
let redactor: Redactor;
let store: KeytarSecretStore;
let core: WardenCore;
let anthropic: ModelFixture;
let openai: ModelFixture;
let elsewhere: ModelFixture;
/** Everything the renderer could see: every response and every event. */
const seenByRenderer: unknown[] = [];
/** Everything written to the console (the app's log) while the tests ran. */
const logged: string[] = [];

/** A stand-in for the built-in Demo model (electron/core/models/demo-model.ts is the real one). */
const builtinDemo: ModelProvider = {
  kind: 'demo',
  listModels: async () => [{ id: 'demo-script', label: 'Demo script' }],
  async *stream() {
    yield { type: 'text-delta', text: 'scripted' };
    yield { type: 'finish', stopReason: 'end_turn', usage: null };
  },
};

function makeCore(extra: Partial<CoreDeps> = {}): WardenCore {
  const c = createCore({
    version: 'test',
    ledger,
    servers: { settingsStore: openConfSettingsStore(dir), secrets: store, onSecretValue: (v) => redactor.register(v) },
    models: {
      settingsStore: openConfSettingsStore(dir, 'models'),
      builtins: [{ choice: { providerId: 'demo', kind: 'demo', label: 'Demo (offline, scripted)', defaultModel: 'demo-script' }, provider: builtinDemo }],
      adapter: { maxRetries: 1, retryBaseDelayMs: 5, connectTimeoutMs: 5000, idleTimeoutMs: 5000 },
    },
    ...extra,
  });
  c.events.subscribe((event, payload) => seenByRenderer.push({ event, payload }));
  return c;
}

async function call<T = Record<string, unknown>>(channel: ChannelName, request: unknown, target = core): Promise<Result<T>> {
  const r = (await dispatch(target.handlers, channel, request, () => {})) as Result<T>;
  seenByRenderer.push(r);
  return r;
}
async function ok<T = Record<string, unknown>>(channel: ChannelName, request: unknown, target = core): Promise<T> {
  const r = await call<T>(channel, request, target);
  if (!r.ok) throw new Error(`${channel} failed: ${r.error.code} ${r.error.message}`);
  return r.value;
}
async function failure(channel: ChannelName, request: unknown): Promise<{ code: string; message: string }> {
  const r = await call(channel, request);
  if (r.ok) throw new Error(`${channel} unexpectedly succeeded`);
  return r.error;
}

interface View {
  providerId: string;
  kind: string;
  label: string;
  baseUrl: string | null;
  defaultModel: string | null;
  builtin: boolean;
  hasKey: boolean;
  keyRequired: boolean;
}

async function streamText(provider: ModelProvider, model: string): Promise<string> {
  let text = '';
  for await (const e of provider.stream({ model, system: '', messages: [{ role: 'user', text: 'hi' }], tools: [], maxTokens: 16, signal: new AbortController().signal }) as AsyncIterable<ModelStreamEvent>) {
    if (e.type === 'text-delta') text += e.text;
  }
  return text;
}

beforeAll(async () => {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) throw new Error('No D-Bus session: run with scripts/with-keyring.sh (real OS keychain)');
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' ')));
  }
  dir = mkdtempSync(join(tmpdir(), 'warden-models-'));
  ({ ledger, redactor } = await openLedgerForApp(dir));
  // No hook on the store itself: the models module must register every key with the redactor on its own.
  store = new KeytarSecretStore({ service });
  anthropic = await startAnthropicFixture({ apiKey: ANTHROPIC_KEY, models: [{ id: 'claude-fixture', label: 'Claude Fixture' }, { id: 'claude-other' }] });
  openai = await startOpenAIFixture({ apiKey: OPENAI_KEY, models: [{ id: 'gpt-fixture' }] });
  // Another host (another port is another origin) that logs whatever credential reaches it.
  elsewhere = await startOpenAIFixture({ apiKey: 'only-its-own-key', echoCredentialOnAuthFailure: true, models: [{ id: 'gpt-fixture' }] });
  core = makeCore();
});

afterAll(async () => {
  await core?.close();
  await Promise.all([anthropic?.close(), openai?.close(), elsewhere?.close()]);
  for (const k of await store.keys('')) await store.delete(k);
  rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

describe('model provider settings through the contract', () => {
  it('every bad input is refused with a plain error naming the field, and never echoes a key', async () => {
    const badKey = `bad key ${randomBytes(8).toString('hex')}`;
    const cases: Array<[unknown, RegExp]> = [
      [{ kind: 'openai', label: 'Remote', baseUrl: 'http://models.example.com/v1' }, /baseUrl: plain http is only allowed on this machine .* use https for models\.example\.com/],
      [{ kind: 'openai', label: 'Ftp', baseUrl: 'ftp://models.example.com/' }, /baseUrl: scheme ftp: is not allowed/],
      [{ kind: 'openai', label: 'Creds', baseUrl: 'https://user:pw@models.example.com/v1' }, /baseUrl: must not contain a username or password/],
      [{ kind: 'openai', label: 'Query', baseUrl: 'https://models.example.com/v1?key=abc' }, /baseUrl: must not contain a query/],
      [{ kind: 'openai', label: 'Not a URL', baseUrl: 'models.example.com' }, /baseUrl: expected an absolute URL/],
      [{ kind: 'gemini', label: 'G' }, /kind: /],
      [{ kind: 'openai', label: '   ' }, /label: must not be empty/],
      [{ kind: 'openai', label: 'K', apiKey: badKey }, /apiKey: must be printable ASCII without spaces/],
      [{ kind: 'openai', label: 'M', defaultModel: 'has space' }, /defaultModel: must be a model id without spaces/],
      [{ kind: 'openai', label: 'X', extra: 1 }, /Unrecognized key/],
    ];
    for (const [request, message] of cases) {
      const error = await failure('models:add-provider', request);
      expect(error.code, JSON.stringify(request)).toBe('INVALID_REQUEST');
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(badKey);
    }
    expect(await failure('models:update-provider', { providerId: 'nope-00000000', label: 'X' })).toEqual({ code: 'NOT_FOUND', message: 'providerId: no model provider "nope-00000000"' });
    expect(await failure('models:set-key', { providerId: 'demo', apiKey: 'sk-x' })).toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/providerId: "Demo \(offline, scripted\)" is built into Warden/) });
    expect(await failure('models:remove-provider', { providerId: 'demo' })).toMatchObject({ code: 'CONFLICT' });
    const { providers } = await ok<{ providers: View[] }>('models:list-providers', {});
    expect(providers.map((p) => p.providerId)).toEqual(['demo']);
  });

  it('a key is stored only in the keychain, bound to its host, and reaches the provider; never settings, ledger, logs, responses or events', async () => {
    const added = await ok<{ provider: View }>('models:add-provider', { kind: 'anthropic', label: 'Anthropic (fixture)', baseUrl: anthropic.baseUrl, apiKey: ` ${ANTHROPIC_KEY}\n` });
    const id = added.provider.providerId;
    expect(added.provider).toEqual({ providerId: id, kind: 'anthropic', label: 'Anthropic (fixture)', baseUrl: anthropic.baseUrl, defaultModel: null, builtin: false, hasKey: true, keyRequired: true });
    // Stored under the provider and the origin it was entered for, trimmed of the pasted whitespace.
    expect(await store.get(providerKeyName(id, new URL(anthropic.baseUrl).origin))).toBe(ANTHROPIC_KEY);

    const models = await ok<{ models: Array<{ id: string; label: string }>; problem: null }>('models:list-models', { providerId: id });
    expect(models).toEqual({ models: [{ id: 'claude-fixture', label: 'Claude Fixture' }, { id: 'claude-other', label: 'claude-other' }], problem: null });
    await ok('models:update-provider', { providerId: id, defaultModel: 'claude-fixture' });
    const tested = await ok<{ ok: boolean; message: string; checked: string; modelCount: number }>('models:test', { providerId: id });
    expect(tested).toMatchObject({ ok: true, checked: 'list-models', modelCount: 2, message: expect.stringContaining('including "claude-fixture"') });

    anthropic.enqueue({ kind: 'reply', text: ['hello ', 'from the fixture'] });
    expect(await streamText(await core.models.get(id), 'claude-fixture')).toBe('hello from the fixture');
    expect(anthropic.completions().at(-1)!.headers.authorization).toBe(`Bearer ${ANTHROPIC_KEY}`);
    expect(await core.models.list()).toEqual([
      { providerId: 'demo', kind: 'demo', label: 'Demo (offline, scripted)', defaultModel: 'demo-script' },
      { providerId: id, kind: 'anthropic', label: 'Anthropic (fixture)', defaultModel: 'claude-fixture' },
    ]);

    // Registered with the redactor: anything that echoes the key is scrubbed before the ledger writes it.
    expect(redactor.scrubString(`model said ${ANTHROPIC_KEY}`)).toBe(`model said ${REDACTED}`);
    await ledger.ledger.append([{ type: 'test.echo', payload: { text: `a tool result that echoes ${ANTHROPIC_KEY}` } }], { durable: true });
    const changes = (await recordsOf(ledger.ledger)).filter((r) => r.type === 'model.provider-changed');
    expect(changes.map((r) => r.payload.change)).toEqual(['added', 'updated']);

    const everything = JSON.stringify(seenByRenderer);
    expect(everything).not.toContain(ANTHROPIC_KEY);
    expect(filesContaining(dir, ANTHROPIC_KEY)).toEqual([]);
    expect(readFileSync(join(dir, 'models.json'), 'utf8')).toContain('Anthropic (fixture)');
    expect(logged.join('\n')).not.toContain(ANTHROPIC_KEY);
    expect(seenByRenderer).toContainEqual({ event: 'models:changed', payload: { providerId: id, reason: 'added' } });
  });

  it('moving a provider to another host removes its key, so the key is never sent there; the same host keeps it', async () => {
    const { provider } = await ok<{ provider: View }>('models:add-provider', { kind: 'openai', label: 'OpenAI-compatible', baseUrl: openai.baseUrl, apiKey: OPENAI_KEY, defaultModel: 'gpt-fixture' });
    const id = provider.providerId;
    expect(await ok('models:test', { providerId: id })).toMatchObject({ ok: true });

    // Same origin, another path: the same server, the key stays.
    const samePlace = await ok<{ provider: View; keyRemoved: boolean }>('models:update-provider', { providerId: id, baseUrl: `${openai.baseUrl}/` });
    expect(samePlace).toMatchObject({ keyRemoved: false, provider: { hasKey: true } });

    const moved = await ok<{ provider: View; keyRemoved: boolean }>('models:update-provider', { providerId: id, baseUrl: elsewhere.baseUrl });
    expect(moved).toMatchObject({ keyRemoved: true, provider: { hasKey: false, baseUrl: elsewhere.baseUrl } });
    expect((await store.keys('')).filter((k) => k.includes(id))).toEqual([]);

    const tested = await ok<{ ok: boolean; problem: { code: string; message: string } }>('models:test', { providerId: id });
    expect(tested).toMatchObject({ ok: false, problem: { code: 'UNAUTHORIZED' } });
    for (const r of elsewhere.requests) expect(JSON.stringify(r.headers)).not.toContain(OPENAI_KEY);
    expect(elsewhere.requests.length).toBeGreaterThan(0);
    expect(elsewhere.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(JSON.stringify(seenByRenderer)).not.toContain(OPENAI_KEY);
    const change = (await recordsOf(ledger.ledger)).filter((r) => r.type === 'model.provider-changed' && r.payload.providerId === id).at(-1)!;
    expect(change.payload).toMatchObject({ change: 'updated', movedFrom: new URL(openai.baseUrl).origin, keyRemoved: true });
  });

  it('a providers file edited by hand to point at another host gets no key: the key is bound to the host it was entered for', async () => {
    const { provider } = await ok<{ provider: View }>('models:add-provider', { kind: 'openai', label: 'Hand edited', baseUrl: openai.baseUrl, apiKey: OPENAI_KEY });
    await core.close();
    const file = join(dir, 'models.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { providers: Array<{ id: string; baseUrl: string }> };
    doc.providers.find((p) => p.id === provider.providerId)!.baseUrl = elsewhere.baseUrl;
    writeFileSync(file, JSON.stringify(doc));
    ({ ledger, redactor } = await openLedgerForApp(dir));
    core = makeCore();
    const before = elsewhere.requests.length;
    const listed = await ok<{ providers: View[] }>('models:list-providers', {});
    expect(listed.providers.find((p) => p.providerId === provider.providerId)).toMatchObject({ baseUrl: elsewhere.baseUrl, hasKey: false });
    elsewhere.enqueue({ kind: 'reply', text: ['should not be reached with a key'] });
    await expect(streamText(await core.models.get(provider.providerId), 'gpt-fixture')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    const reached = elsewhere.requests.slice(before);
    expect(reached).toHaveLength(1);
    expect(reached[0]!.headers.authorization).toBeUndefined();
    // The stored key itself is still there for its own host, untouched.
    expect(await store.get(providerKeyName(provider.providerId, new URL(openai.baseUrl).origin))).toBe(OPENAI_KEY);
    await ok('models:remove-provider', { providerId: provider.providerId });
    expect((await store.keys('')).filter((k) => k.includes(provider.providerId))).toEqual([]);
  });

  it('a compromised renderer calling every models channel cannot read a key or get it sent to another host', async () => {
    const victimKey = `sk-victim-${randomBytes(20).toString('hex')}`;
    const { provider } = await ok<{ provider: View }>('models:add-provider', { kind: 'openai', label: 'Victim', baseUrl: openai.baseUrl, apiKey: victimKey });
    const id = provider.providerId;
    const attempts: Array<[ChannelName, unknown]> = [
      ['models:list-providers', {}],
      ['models:list-models', { providerId: id }],
      ['models:test', { providerId: id, model: 'gpt-fixture' }],
      ['models:add-provider', { kind: 'openai', label: 'Clone', baseUrl: elsewhere.baseUrl, providerId: id }],
      ['models:update-provider', { providerId: id, baseUrl: 'http://198.51.100.7/v1' }],
      ['models:update-provider', { providerId: id, baseUrl: 'https://attacker.example/v1', apiKey: 'x' }],
      ['models:set-key', { providerId: id, apiKey: victimKey, baseUrl: elsewhere.baseUrl }],
      // The one move the contract allows: point it at a host the attacker listens on.
      ['models:update-provider', { providerId: id, baseUrl: elsewhere.baseUrl }],
      ['models:test', { providerId: id }],
      ['models:list-models', { providerId: id }],
    ];
    const answers: unknown[] = [];
    for (const [channel, request] of attempts) answers.push(await call(channel, request));
    expect(JSON.stringify(answers)).not.toContain(victimKey);
    for (const r of elsewhere.requests) expect(JSON.stringify(r)).not.toContain(victimKey);
    expect((await store.keys('')).filter((k) => k.includes(id))).toEqual([]);
    expect(answers[4]).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/baseUrl: plain http/) } });
    expect(answers[7]).toMatchObject({ ok: true, value: { keyRemoved: true } });
    await ok('models:remove-provider', { providerId: id });
  });

  it('a server without a model listing is tested with a one-token request; a model it does not list is reported', async () => {
    const local = await startOpenAIFixture({ models: 'missing' });
    try {
      const { provider } = await ok<{ provider: View }>('models:add-provider', { kind: 'openai', label: 'Ollama on this machine', baseUrl: local.baseUrl });
      expect(provider).toMatchObject({ hasKey: false, keyRequired: false });
      expect(await ok('models:list-models', { providerId: provider.providerId })).toEqual({ models: null, problem: null });
      expect(await ok('models:test', { providerId: provider.providerId })).toMatchObject({ ok: false, checked: 'nothing', message: expect.stringMatching(/cannot list its models/) });
      local.enqueue({ kind: 'reply', text: ['OK'], stop: 'max_tokens' });
      expect(await ok('models:test', { providerId: provider.providerId, model: 'llama3.1:8b' })).toMatchObject({ ok: true, checked: 'one-token-request' });
      expect((local.completions()[0]!.body as { model: string }).model).toBe('llama3.1:8b');
      await ok('models:remove-provider', { providerId: provider.providerId });
    } finally {
      await local.close();
    }
    const { providers } = await ok<{ providers: View[] }>('models:list-providers', {});
    const anthropicId = providers.find((p) => p.kind === 'anthropic')!.providerId;
    expect(await ok('models:test', { providerId: anthropicId, model: 'claude-missing' })).toMatchObject({
      ok: false,
      problem: { code: 'MODEL_NOT_FOUND' },
      message: expect.stringMatching(/does not offer "claude-missing"/),
    });
  });

  it('a wrong key fails the test with the provider’s 401, and a server echoing the key gets it nowhere', async () => {
    const wrongKey = `sk-wrong-${randomBytes(16).toString('hex')}`;
    const { provider } = await ok<{ provider: View }>('models:add-provider', { kind: 'openai', label: 'Echoing server', baseUrl: elsewhere.baseUrl, apiKey: wrongKey });
    const tested = await ok<{ ok: boolean; message: string; problem: { code: string } }>('models:test', { providerId: provider.providerId });
    expect(tested).toMatchObject({ ok: false, problem: { code: 'UNAUTHORIZED' } });
    expect(tested.message).toContain(REDACTED);
    expect(JSON.stringify(seenByRenderer)).not.toContain(wrongKey);
    expect(logged.join('\n')).not.toContain(wrongKey);
    // Clearing the key removes it from the keychain.
    expect(await ok('models:clear-key', { providerId: provider.providerId })).toMatchObject({ keyRemoved: true, provider: { hasKey: false } });
    expect((await store.keys('')).filter((k) => k.includes(provider.providerId))).toEqual([]);
    await ok('models:remove-provider', { providerId: provider.providerId });
    expect(filesContaining(dir, wrongKey)).toEqual([]);
  });

  it('the chat loop finds providers through ModelProviders: built-ins first, unknown ids refused by name', async () => {
    // The built-in, reached (like every provider) through the redaction boundary.
    const demo = await core.models.get('demo');
    expect(demo.kind).toBe('demo');
    expect(await streamText(demo, 'demo-script')).toBe('scripted');
    await expect(core.models.get('nope-00000000')).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'providerId: no model provider "nope-00000000"' });
    const choices = await core.models.list();
    expect(choices[0]).toEqual({ providerId: 'demo', kind: 'demo', label: 'Demo (offline, scripted)', defaultModel: 'demo-script' });
    // A key set in settings takes effect at the next round: the next get() uses it.
    const anthropicId = choices.find((c) => c.kind === 'anthropic')!.providerId;
    await ok('models:set-key', { providerId: anthropicId, apiKey: 'sk-replaced-key-0000' });
    await expect(streamText(await core.models.get(anthropicId), 'claude-fixture')).rejects.toBeInstanceOf(ModelError);
    expect(anthropic.completions().at(-1)!.headers.authorization).toBe('Bearer sk-replaced-key-0000');
    await ok('models:set-key', { providerId: anthropicId, apiKey: ANTHROPIC_KEY });
    anthropic.enqueue({ kind: 'reply', text: ['back'] });
    expect(await streamText(await core.models.get(anthropicId), 'claude-fixture')).toBe('back');
  });

  it('a keychain that is unavailable refuses the key and writes nothing', async () => {
    const broken = new KeytarSecretStore({ service, load: async () => Promise.reject(new Error('no Secret Service')) });
    const brokenDir = mkdtempSync(join(tmpdir(), 'warden-models-nokeychain-'));
    const c = createCore({ version: 'test', servers: { settingsStore: openConfSettingsStore(brokenDir), secrets: broken }, models: { settingsStore: openConfSettingsStore(brokenDir, 'models') } });
    try {
      const r = await dispatch(c.handlers, 'models:add-provider', { kind: 'anthropic', label: 'A', apiKey: 'sk-not-stored-0000' });
      expect(r).toMatchObject({ ok: false, error: { code: 'KEYCHAIN_UNAVAILABLE', message: expect.stringMatching(/never stores secrets anywhere else/) } });
      // Only the built-in offline demo is listed: nothing configured was written.
      const listed = await dispatch(c.handlers, 'models:list-providers', {});
      expect(listed.ok && (listed.value as { providers: Array<{ builtin: boolean }> }).providers.filter((p) => !p.builtin)).toEqual([]);
      expect(filesContaining(brokenDir, 'sk-not-stored-0000')).toEqual([]);
    } finally {
      await c.close();
      rmSync(brokenDir, { recursive: true, force: true });
    }
  });

  it('an invalid providers file is reported with the field, left untouched, and changes are refused', async () => {
    const brokenDir = mkdtempSync(join(tmpdir(), 'warden-models-broken-'));
    const content = JSON.stringify({ version: 1, providers: [{ id: 'x-1', kind: 'openai', label: 'X', baseUrl: 'http://remote.example.com/v1', defaultModel: null }] });
    writeFileSync(join(brokenDir, 'models.json'), content);
    const c = createCore({ version: 'test', servers: { settingsStore: openConfSettingsStore(brokenDir), secrets: store }, models: { settingsStore: openConfSettingsStore(brokenDir, 'models') } });
    try {
      const list = await dispatch(c.handlers, 'models:list-providers', {});
      expect(list.ok && (list.value as { settingsProblem: string }).settingsProblem).toMatch(/models\.json is not a valid model providers file \(providers\.0\.baseUrl: plain http is only allowed/);
      const add = await dispatch(c.handlers, 'models:add-provider', { kind: 'openai', label: 'Y' });
      expect(add).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
      expect(readFileSync(join(brokenDir, 'models.json'), 'utf8')).toBe(content);
    } finally {
      await c.close();
      rmSync(brokenDir, { recursive: true, force: true });
    }
  });

  it('after everything above, no key is anywhere on disk, in any response or event, or in the log', () => {
    for (const key of [ANTHROPIC_KEY, OPENAI_KEY]) {
      expect(filesContaining(dir, key)).toEqual([]);
      expect(JSON.stringify(seenByRenderer)).not.toContain(key);
      expect(logged.join('\n')).not.toContain(key);
    }
    // The ledger did get the echo record, with the key scrubbed.
    expect(filesContaining(join(dir, 'ledger'), `a tool result that echoes ${REDACTED}`)).toHaveLength(1);
  });
});
