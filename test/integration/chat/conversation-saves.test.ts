/**
 * How often a message makes Warden sync its conversation file, through the real core (the real
 * gate on the durable ledger, the demo server over MCP, the conversation store on disk): a tool
 * round writes the conversation once, never the two-per-round it once did, and the whole message
 * still reopens from disk exactly as the person saw it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedgerForApp } from '../../../electron/core/ledger';
import type { Conversation } from '../../../shared/contract/chat';
import { call, callsOf, settled, startChatCore, type ChatCore } from './helpers';
import { offeredName, ScriptedModel, withScripted } from './scripted-model';

let t: ChatCore | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.core.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  t = undefined;
  dir = undefined;
});

const TOOL_ROUNDS = 4;

async function start(folder: string, model: ScriptedModel): Promise<ChatCore> {
  const { ledger } = await openLedgerForApp(folder);
  return startChatCore({ ledger, chat: { dataDir: path.join(folder, 'conversations'), providers: withScripted(model) } });
}

describe('conversation saves per message', () => {
  it('a message with four tool rounds syncs its conversation at most once per model reply plus once for the message itself, and reopens whole', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-saves-'));
    const model = new ScriptedModel((r, i) => (i < TOOL_ROUNDS ? { text: `Round ${i}. `, calls: [{ name: offeredName(r, 'notes_list')!, args: {} }] } : { text: 'All four lists read.' }));
    t = await start(dir, model);
    const c = await call<Conversation>(t.core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
    await t.core.chat.flushConversations();
    const before = t.core.chat.conversationWrites();
    await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'List my notes four times' });
    const done = await settled(t.core, c.id);
    await t.core.chat.flushConversations();
    const writes = t.core.chat.conversationWrites() - before;
    expect(callsOf(done).map((x) => x.status)).toEqual(Array(TOOL_ROUNDS).fill('succeeded'));
    // One write for the person's message (durable before the model is asked), then at most one
    // per model reply: five replies, so six. Two saves per tool round would be ten.
    expect(writes).toBeLessThanOrEqual(1 + TOOL_ROUNDS + 1);
    expect(writes).toBeGreaterThanOrEqual(1);
    await t.core.close();

    t = await start(dir, model);
    const reopened = await call<Conversation>(t.core, 'chat:get', { conversationId: c.id });
    expect(reopened.messages.map((m) => [m.role, m.text])).toEqual(done.messages.map((m) => [m.role, m.text]));
    expect(callsOf(reopened).map((x) => x.status)).toEqual(Array(TOOL_ROUNDS).fill('succeeded'));
    expect(reopened.messages.some((m) => m.role === 'notice')).toBe(false);
  });
});
