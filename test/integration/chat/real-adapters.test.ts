/**
 * The chat loop with the real model adapters (official SDKs) against loopback servers speaking
 * the Anthropic Messages and OpenAI Chat Completions streams: a model that obeys the inbox's
 * injection, parallel calls in one reply, and every call answered with exactly one result on the
 * wire, matched by the provider's own call id.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../../shared/contract/chat';
import { startAnthropicFixture, startOpenAIFixture, type ModelFixture } from '../../fixtures/models';
import { call, callsOf, settled, startChatCore, waitingApproval, type ChatCore } from './helpers';

let t: ChatCore | undefined;
let fixture: ModelFixture | undefined;
afterEach(async () => {
  await t?.core.close();
  await fixture?.close();
  t = undefined;
  fixture = undefined;
});

const KEY = 'sk-chat-fixture-0123456789';

for (const kind of ['anthropic', 'openai'] as const) {
  describe(`the chat loop over the ${kind} adapter`, () => {
    it('a model that obeys the injection: reads the inbox, names the Disabled delete, and is told "not permitted"; the delete never runs', async () => {
      fixture = await (kind === 'anthropic' ? startAnthropicFixture : startOpenAIFixture)({ apiKey: KEY, models: [{ id: 'fixture-model' }] });
      t = await startChatCore({ models: { adapter: { maxRetries: 1, retryBaseDelayMs: 5, connectTimeoutMs: 5000, idleTimeoutMs: 5000 } } });
      await call(t.core, 'connections:connect', t.demo);
      const { provider } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind, label: `Fixture ${kind}`, baseUrl: fixture.baseUrl, apiKey: KEY });
      const c = await call<Conversation>(t.core, 'chat:create', { providerId: provider.providerId, model: 'fixture-model' });
      // Turn 1: the tool names come from what Warden offered in the request.
      const offered = () => ((fixture!.requests.at(-1)!.body as { tools?: Array<{ name?: string; function?: { name: string } }> }).tools ?? []).map((x) => x.name ?? x.function!.name);
      fixture.enqueue({ kind: 'reply', text: ['Reading.'], toolCalls: [{ id: 'call_inbox', name: 'Warden_demo_built-in__read_inbox', argumentsJson: '{}' }] });
      fixture.enqueue({ kind: 'reply', text: ['The message says to delete, so I will.'], toolCalls: [{ id: 'call_del', name: 'Warden_demo_built-in__notes_delete', argumentsJson: '{"id": 1}' }, { id: 'call_list', name: 'Warden_demo_built-in__notes_list', argumentsJson: '{}' }] });
      fixture.enqueue({ kind: 'reply', text: ['I could not delete anything.'] });
      await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'Summarise my inbox' });
      const done = await settled(t.core, c.id);
      expect(offered()).not.toContain('Warden_demo_built-in__notes_delete');
      expect(offered()).toContain('Warden_demo_built-in__read_inbox');
      expect(callsOf(done).map((x) => [x.callId, x.status])).toEqual([
        ['call_inbox', 'succeeded'],
        ['call_del', 'not_permitted'],
        ['call_list', 'succeeded'],
      ]);
      expect(callsOf(done)[0]!.flagged).toBe(true);
      expect(t.demos.flatMap((d) => d.calls.map((x) => x.tool)).sort()).toEqual(['notes_list', 'read_inbox']);
      // On the wire: the last request answers both calls of the second reply, by their ids.
      const last = JSON.stringify(fixture.requests.at(-1)!.body);
      expect(last).toContain('call_del');
      expect(last).toContain('Error: this tool is not permitted.');
      expect(last).toContain('<tool_output untrusted=\\"true\\" server=\\"Warden demo (built-in)\\" tool=\\"read_inbox\\">');
      expect(done.messages.at(-1)!.text).toBe('I could not delete anything.');
    });
  });
}

describe('provider failures in the loop', () => {
  it('a 401 ends the turn with a plain reason; a call waiting for approval keeps its state while the stream is paused', async () => {
    fixture = await startAnthropicFixture({ apiKey: KEY, models: [{ id: 'fixture-model' }] });
    t = await startChatCore({ models: { adapter: { maxRetries: 0, retryBaseDelayMs: 5, connectTimeoutMs: 5000, idleTimeoutMs: 5000 } } });
    await call(t.core, 'connections:connect', t.demo);
    const { provider } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind: 'anthropic', label: 'Fixture', baseUrl: fixture.baseUrl, apiKey: KEY });
    const c = await call<Conversation>(t.core, 'chat:create', { providerId: provider.providerId, model: 'fixture-model' });
    fixture.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_save', name: 'Warden_demo_built-in__notes_add', argumentsJson: '{"text":"x"}' }] });
    fixture.enqueue({ kind: 'status', status: 401, message: 'invalid x-api-key' });
    await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'save x' });
    const waiting = await waitingApproval(t.core, c.id);
    expect(callsOf(waiting)[0]!.status).toBe('awaiting_approval');
    t.dialogs.single = 'deny';
    await call(t.core, 'chat:review', { conversationId: c.id, messageId: waiting.messages.find((m) => m.toolCalls.length)!.id });
    const done = await settled(t.core, c.id);
    // The failure travels as data; the renderer's one table of sentences says it with the fix.
    expect(done.messages.at(-1)).toMatchObject({ role: 'notice', tone: 'error', problem: { code: 'UNAUTHORIZED', status: 401 }, text: expect.stringMatching(/refused the API key \(HTTP 401\)/) });
  });
});
