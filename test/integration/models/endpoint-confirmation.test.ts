/**
 * A model provider's base URL is where Warden sends whole conversations (the person's messages,
 * every tool result, server instructions). From the attacker's side: a compromised renderer has
 * no network of its own (CSP `connect-src 'self'`), so pointing a provider at its own host would
 * be its way out. Only a person, in main's native dialog, decides where conversations go.
 *
 * Through the core as the app assembles it (createCore, the contract dispatch), with the demo
 * server and loopback servers speaking the OpenAI wire protocol: one the person chose, one the
 * attacker listens on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dispatch } from '../../../electron/core/dispatch';
import type { ProviderEndpointQuestion } from '../../../electron/core/models/provider-service';
import type { Conversation } from '../../../shared/contract/chat';
import { startOpenAIFixture, type ModelFixture } from '../../fixtures/models';
import { call, settled, startChatCore, type ChatCore } from '../chat/helpers';

let t: ChatCore | undefined;
const fixtures: ModelFixture[] = [];
afterEach(async () => {
  await t?.core.close();
  await Promise.all(fixtures.map((f) => f.close()));
  fixtures.length = 0;
  t = undefined;
});

async function fixture(): Promise<ModelFixture> {
  const f = await startOpenAIFixture({ models: [{ id: 'fixture-model' }] });
  fixtures.push(f);
  return f;
}

/** A person's conversation with a tool result in it (the demo reads the inbox). */
async function conversationWithToolOutput(core: ChatCore['core']): Promise<Conversation> {
  const c = await call<Conversation>(core, 'chat:start-demo', {});
  const done = await settled(core, c.id);
  expect(JSON.stringify(done)).toContain('IMPORTANT SYSTEM NOTICE');
  return done;
}

describe('where conversations are sent is decided by a person in a native dialog', () => {
  it('a compromised renderer cannot add a provider at its own host and have a conversation sent there', async () => {
    const attacker = await fixture();
    const asked: ProviderEndpointQuestion[] = [];
    t = await startChatCore({
      confirmProviderEndpoint: async (q) => {
        asked.push(q);
        return false;
      },
    });
    const victim = await conversationWithToolOutput(t.core);

    // The attacker's moves, in order: add a provider at its host, switch the conversation to it, send.
    const added = await dispatch(t.core.handlers, 'models:add-provider', { kind: 'openai', label: 'Helpful assistant', baseUrl: attacker.baseUrl, defaultModel: 'fixture-model' }, () => {});
    expect(added).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED', message: expect.stringMatching(/not confirmed/) } });
    // The person was asked, with the exact address and what would be sent there.
    expect(asked).toEqual([expect.objectContaining({ action: 'add', kind: 'openai', label: 'Helpful assistant', baseUrl: attacker.baseUrl, previousBaseUrl: null })]);
    const listed = await call<{ providers: Array<{ baseUrl: string | null }> }>(t.core, 'models:list-providers', {});
    expect(listed.providers.map((p) => p.baseUrl)).toEqual([null]);
    for (const [channel, request] of [
      ['models:test', { providerId: 'helpful-assistant' }],
      ['chat:set-model', { conversationId: victim.id, providerId: 'helpful-assistant', model: 'fixture-model' }],
    ] as const) {
      expect(await dispatch(t.core.handlers, channel, request, () => {})).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    }
    await call(t.core, 'chat:send-message', { conversationId: victim.id, text: 'and again' });
    await settled(t.core, victim.id);
    expect(attacker.requests).toEqual([]);
  });

  it('a provider the person confirmed cannot be moved to another host without a new confirmation', async () => {
    const chosen = await fixture();
    const attacker = await fixture();
    const asked: ProviderEndpointQuestion[] = [];
    let answer = true;
    t = await startChatCore({
      confirmProviderEndpoint: async (q) => {
        asked.push(q);
        return answer;
      },
    });
    const { provider } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind: 'openai', label: 'Local model', baseUrl: chosen.baseUrl, defaultModel: 'fixture-model' });
    expect(asked).toHaveLength(1);
    const victim = await conversationWithToolOutput(t.core);
    await call(t.core, 'chat:set-model', { conversationId: victim.id, providerId: provider.providerId, model: 'fixture-model' });

    // Renaming and choosing another default model send nothing anywhere new: no dialog.
    await call(t.core, 'models:update-provider', { providerId: provider.providerId, label: 'Renamed', defaultModel: 'other-model' });
    expect(asked).toHaveLength(1);

    answer = false;
    const moved = await dispatch(t.core.handlers, 'models:update-provider', { providerId: provider.providerId, baseUrl: attacker.baseUrl }, () => {});
    expect(moved).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(asked[1]).toMatchObject({ action: 'move', label: 'Renamed', baseUrl: attacker.baseUrl, previousBaseUrl: chosen.baseUrl });
    const listed = await call<{ providers: Array<{ providerId: string; baseUrl: string | null }> }>(t.core, 'models:list-providers', {});
    expect(listed.providers.find((p) => p.providerId === provider.providerId)?.baseUrl).toBe(chosen.baseUrl);

    // The conversation goes on to the host the person chose, and only there.
    chosen.enqueue({ kind: 'reply', text: ['Still here.'] });
    await call(t.core, 'chat:send-message', { conversationId: victim.id, text: 'hello' });
    const done = await settled(t.core, victim.id);
    expect(done.messages.at(-1)!.text).toBe('Still here.');
    expect(chosen.completions()).toHaveLength(1);
    expect(attacker.requests).toEqual([]);
  });
});
