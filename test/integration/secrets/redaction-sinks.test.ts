/**
 * Secrets reach no sink in clear, and what lands in the user-data folder is the person's alone,
 * from the attacker's side, in one realistic session through the core as main assembles it: the
 * real keychain, the durable ledger with the app's one redactor, conversations, listings and roots
 * in a user-data folder, two loopback model providers driven through the official SDKs, and a
 * hostile OAuth-protected MCP server.
 *
 * The attackers: a provider (or a proxy in front of it) that echoes its own API key in a reply,
 * split across stream deltas, hoping the key is stored and later sent to another provider; and a
 * server that puts its bearer token in a tool description (which is stored as a listing) and hands
 * it back hex-encoded and split in halves across two result items (which are journaled, shown and
 * sent to the model).
 */
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../../electron/core/redact/redactor';
import type { Conversation } from '../../../shared/contract/chat';
import { startAnthropicFixture, startOpenAIFixture, type ModelFixture, type RecordedRequest } from '../../fixtures/models';
import { callsOf, until } from '../chat/helpers';
import { cleanUpWorld, filesUnder, startCoreWorld, textUnder, type CoreWorld } from '../oauth/core-world';
import { startOAuthFixture, type OAuthFixture } from '../oauth/fixture-oauth-servers';

const KEY_A = 'sk-ant-echoed-by-provider-a-0123456789abcdef';
const KEY_B = 'sk-provider-b-key-fedcba9876543210';
const ADAPTER = { maxRetries: 0, retryBaseDelayMs: 5, connectTimeoutMs: 10_000, idleTimeoutMs: 10_000 };

/** The tool names a request offered (Anthropic `name`, OpenAI `function.name`). */
function offered(request: RecordedRequest): string[] {
  return ((request.body as { tools?: Array<{ name?: string; function?: { name: string } }> }).tools ?? []).map((t) => t.name ?? t.function!.name);
}

/** Everything a provider was sent: paths, headers and bodies. */
function sentTo(fixture: ModelFixture): string {
  return fixture.requests.map((r) => JSON.stringify({ path: r.path, headers: r.headers, body: r.body })).join('\n');
}

let f: OAuthFixture;
let providerA: ModelFixture;
let providerB: ModelFixture;
let world: CoreWorld;
let userData: string;
const toWindow: string[] = [];
let operationShown = '';
let token = '';
let conversationId = '';

beforeAll(async () => {
  f = await startOAuthFixture({ leakTokenEncoded: true });
  // Provider A asks for the report, then answers with its own key, cut across three deltas.
  let round = 0;
  providerA = await startAnthropicFixture({
    apiKey: KEY_A,
    models: [{ id: 'model-a' }],
    respond: (request) => {
      round += 1;
      if (round === 1) return { kind: 'reply', text: ['Looking.'], toolCalls: [{ id: 'call_report', name: offered(request).find((n) => n.endsWith('token_report'))!, argumentsJson: JSON.stringify({ note: `for ${KEY_A}` }) }] };
      return { kind: 'reply', text: ['Your key is ', KEY_A.slice(0, 13), KEY_A.slice(13, 30), `${KEY_A.slice(30)} — keep it safe.`] };
    },
  });
  providerB = await startOpenAIFixture({ apiKey: KEY_B, models: [{ id: 'model-b' }], respond: () => ({ kind: 'reply', text: ['Noted.'] }) });
  userData = mkdtempSync(join(tmpdir(), 'warden-user-data-'));
  world = await startCoreWorld({
    ledger: true,
    dataDir: userData,
    extra: {
      gate: { prompter: { prompt: async () => 'approve', promptBatch: async () => 'approve-all' } },
      chat: { dataDir: join(userData, 'conversations') },
      listingsDir: join(userData, 'listings'),
      rootsDir: join(userData, 'roots'),
      sampling: { dir: join(userData, 'sampling') },
      models: { adapter: ADAPTER },
    },
  });
  world.core.events.subscribe((_event, payload) => toWindow.push(JSON.stringify(payload)));

  const added = await world.call('servers:add', {
    definition: { name: 'Reports', transport: 'http', url: f.mcpUrl, headers: [], auth: { kind: 'oauth' } },
    accountLabel: 'Work',
  });
  const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
  await world.call('auth:login', target);
  expect((await world.connect(target.serverId, target.accountId)).state).toBe('connected');
  token = f.record.issuedAccessTokens.at(-1)!;

  const a = await world.call('models:add-provider', { kind: 'anthropic', label: 'Provider A', baseUrl: providerA.baseUrl, apiKey: KEY_A });
  const b = await world.call('models:add-provider', { kind: 'openai', label: 'Provider B', baseUrl: providerB.baseUrl, apiKey: KEY_B });
  const c = (await world.call('chat:create', { providerId: a.provider.providerId, model: 'model-a' })) as Conversation;
  await world.call('chat:send-message', { conversationId: c.id, text: 'Run the session report.' });
  await until(() => world.core.chat.get(c.id).state === 'waiting_approval', 'the report call to ask');
  const asking = world.core.chat.get(c.id).messages.find((m) => m.toolCalls.length > 0)!;
  await world.call('chat:review', { conversationId: c.id, messageId: asking.id });
  await until(() => world.core.chat.get(c.id).state === 'idle', 'provider A to finish');
  conversationId = c.id;
  const operationId = callsOf(world.core.chat.get(c.id))[0]!.operationId!;
  operationShown = JSON.stringify(await world.call('operations:get', { operationId }));

  // The person moves the conversation to provider B and carries on: B is sent the history.
  await world.call('chat:set-model', { conversationId: c.id, providerId: b.provider.providerId, model: 'model-b' });
  await world.call('chat:send-message', { conversationId: c.id, text: 'Thanks.' });
  await until(() => world.core.chat.get(c.id).state === 'idle' && providerB.completions().length === 1, 'provider B to answer');
  await world.core.close();
}, 60_000);

afterAll(async () => {
  await world?.close().catch(() => undefined);
  await providerA?.close();
  await providerB?.close();
  await f?.close();
  if (world) await cleanUpWorld(world);
});

describe('secrets at every sink', () => {
  it('a provider key echoed in a reply is stored, shown and sent on redacted, and never reaches another provider', () => {
    const conversations = textUnder(join(userData, 'conversations'));
    expect(conversations).toContain(`Your key is ${REDACTED}`);
    const seen = { conversationFile: conversations, window: toWindow.join('\n'), providerB: sentTo(providerB), ledger: textUnder(join(userData, 'ledger')) };
    for (const [where, text] of Object.entries(seen)) {
      expect(text.includes(KEY_A), `provider A's key reached ${where}`).toBe(false);
      // Not even a piece of it that a delta carried.
      expect(text.includes(KEY_A.slice(13, 30)), `a piece of provider A's key reached ${where}`).toBe(false);
    }
    // B was sent the conversation, with the key's place marked.
    expect(sentTo(providerB)).toContain(`Your key is ${REDACTED}`);
  });

  it('a provider key a model writes into tool-call arguments is replaced before the gate, the person or the server sees it', () => {
    const card = callsOf(world.core.chat.get(conversationId))[0]!;
    expect(card.status).toBe('succeeded');
    expect(JSON.parse(card.argumentsJson)).toEqual({ note: `for ${REDACTED}` });
    expect(f.record.toolArguments.map((a) => JSON.stringify(a))).toEqual([JSON.stringify({ note: `for ${REDACTED}` })]);
  });

  it('an OAuth token in a tool description, hex-encoded or split across result items, is stored and sent nowhere in clear', () => {
    const half = Math.floor(token.length / 2);
    const forms = { token, hex: Buffer.from(token, 'utf8').toString('hex'), firstHalf: token.slice(0, half), secondHalf: token.slice(half) };
    const seen = {
      listings: textUnder(join(userData, 'listings')),
      ledger: textUnder(join(userData, 'ledger')),
      'operations:get': operationShown,
      conversationFile: textUnder(join(userData, 'conversations')),
      window: toWindow.join('\n'),
      providerA: sentTo(providerA),
      providerB: sentTo(providerB),
    };
    expect(seen.listings).toContain('Session: [REDACTED]');
    for (const [where, text] of Object.entries(seen)) {
      for (const [form, value] of Object.entries(forms)) expect(text.includes(value), `the token (${form}) reached ${where}`).toBe(false);
    }
  });

  it('every file and folder the core creates in the user-data folder is readable by the person alone', () => {
    const folders = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? [join(dir, name), ...folders(join(dir, name))] : []));
    const created = [...folders(userData), ...filesUnder(userData)];
    // The session wrote each kind of file this test is about.
    for (const part of ['conversations', 'listings', join('ledger', 'index.sqlite'), 'settings.json']) {
      expect(created.some((p) => p.endsWith(part)), `${part} was written`).toBe(true);
    }
    const open = created.filter((p) => (statSync(p).mode & 0o077) !== 0).map((p) => `${p.slice(userData.length)} ${(statSync(p).mode & 0o777).toString(8)}`);
    expect(open).toEqual([]);
    expect(readFileSync(join(userData, 'settings.json'), 'utf8').length).toBeGreaterThan(0);
  });
});
