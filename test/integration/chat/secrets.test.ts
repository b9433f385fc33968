/**
 * Secrets Warden holds never travel through the chat, from the attacker's side: a hostile MCP
 * server echoes the OAuth bearer token it was sent (and the refresh token, id token and client
 * secret its authorization server handed out) in a tool result a model asked for. The ledger
 * scrubs them; the chat must too, or the tokens go in clear to the model provider (a third party,
 * and a model that obeys injected text could hand them to another server's tool), to the
 * renderer (which holds no secrets) and into the conversation file on disk (secrets live only in
 * the keychain).
 *
 * Through the core as main assembles it: the real keychain, the ledger with the app's one
 * redactor, a loopback OAuth server, the contract dispatch, and a scripted model.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REDACTED } from '../../../electron/core/redact/redactor';
import type { Conversation } from '../../../shared/contract/chat';
import { startOAuthFixture, type OAuthFixture } from '../oauth/fixture-oauth-servers';
import { cleanUpWorld, startCoreWorld, textUnder } from '../oauth/core-world';
import { callsOf, until } from './helpers';
import { offeredName, ScriptedModel, withScripted } from './scripted-model';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

describe('a hostile server echoing its credentials into a chat', () => {
  it('the model, the renderer and the conversation file see them redacted, as the ledger does', async () => {
    const f: OAuthFixture = await startOAuthFixture({ echoCredentials: true, issueIdToken: true, issueClientSecret: true });
    cleanups.push(() => f.close());
    const model = new ScriptedModel((r, i) => (i === 0 ? { calls: [{ name: offeredName(r, 'echo_credentials')!, args: {} }] } : { text: 'done' }));
    // The conversation files live in the app's data folder, beside the ledger.
    const dataDir = mkdtempSync(join(tmpdir(), 'warden-chat-secrets-'));
    const conversations = join(dataDir, 'conversations');
    const world = await startCoreWorld({
      ledger: true,
      dataDir,
      extra: {
        gate: { prompter: { prompt: async () => 'approve', promptBatch: async () => 'approve-all' } },
        chat: { providers: withScripted(model), dataDir: conversations },
      },
    });
    cleanups.push(async () => {
      await world.close().catch(() => undefined);
      await cleanUpWorld(world);
    });
    const toRenderer: string[] = [];
    world.core.events.subscribe((event, payload) => {
      if (event.startsWith('chat:')) toRenderer.push(JSON.stringify(payload));
    });

    const added = await world.call('servers:add', {
      definition: { name: 'Echo', transport: 'http', url: f.mcpUrl, headers: [], auth: { kind: 'oauth' } },
      accountLabel: 'Work',
    });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await world.call('auth:login', target);
    expect((await world.connect(target.serverId, target.accountId)).state).toBe('connected');

    const c = (await world.call('chat:create', { providerId: 'scripted', model: 'scripted' })) as Conversation;
    await world.call('chat:send-message', { conversationId: c.id, text: 'Who am I signed in as?' });
    await until(() => world.core.chat.get(c.id).state === 'waiting_approval', 'the call to ask');
    const asking = world.core.chat.get(c.id).messages.find((m) => m.toolCalls.length > 0)!;
    await world.call('chat:review', { conversationId: c.id, messageId: asking.id });
    await until(() => world.core.chat.get(c.id).state === 'idle', 'the reply to end');
    expect(f.record.toolCalls).toBe(1);
    const done = (await world.call('chat:get', { conversationId: c.id })) as Conversation;
    expect(callsOf(done).map((x) => x.status)).toEqual(['succeeded']);
    await world.core.close();

    const secrets = [...f.record.issuedAccessTokens, ...f.record.issuedRefreshTokens, ...f.record.issuedIdTokens, ...f.record.issuedClientSecrets];
    expect(secrets).toHaveLength(4);
    const seen = {
      // What the model provider was sent in the next round (the tool result).
      provider: JSON.stringify(model.requests[1]),
      renderer: [JSON.stringify(done), ...toRenderer].join('\n'),
      disk: readdirSync(conversations).map((name) => readFileSync(join(conversations, name), 'utf8')).join('\n'),
      ledger: textUnder(join(dataDir, 'ledger')),
    };
    for (const [where, text] of Object.entries(seen)) {
      expect(text, where).toContain(`Authorization: Bearer ${REDACTED}`);
      for (const secret of secrets) expect(text.includes(secret), `a credential reached the ${where}`).toBe(false);
    }
  });
});
