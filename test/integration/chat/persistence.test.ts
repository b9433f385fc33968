/**
 * Conversations persist in the user-data folder (atomic files) and survive a restart: list,
 * rename, search by title and delete; a call that waited for approval when Warden stopped is
 * shown as expired with "ask again" (and cancelled in the gate, so it can never run later); a
 * tool round writes its conversation once, and the person waits for one write per message.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedgerForApp } from '../../../electron/core/ledger';
import type { Conversation, ConversationSummary } from '../../../shared/contract/chat';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { call, callsOf, MapKeychain, settled, startChatCore, waitingApproval, type ChatCore } from './helpers';
import { offeredName, ScriptedModel, withScripted } from './scripted-model';

let t: ChatCore | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.core.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  t = undefined;
  dir = undefined;
});

async function start(folder: string, model?: ScriptedModel): Promise<ChatCore> {
  const { ledger } = await openLedgerForApp(folder);
  return startChatCore({ ledger, chat: { dataDir: path.join(folder, 'conversations'), ...(model ? { providers: withScripted(model) } : {}) } });
}

describe('conversations on disk', () => {
  it('survive a restart; list, rename, search by title and delete work on what was saved', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-persist-'));
    t = await start(dir);
    const a = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: a.id, text: 'List my notes' });
    await settled(t.core, a.id);
    const b = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: b.id, text: 'Call format_disk' });
    await settled(t.core, b.id);
    await t.core.close();

    t = await start(dir);
    const { conversations } = await call<{ conversations: ConversationSummary[] }>(t.core, 'chat:list', {});
    expect(conversations.map((c) => c.title).sort()).toEqual(['Call format_disk', 'List my notes']);
    const reopened = await call<Conversation>(t.core, 'chat:get', { conversationId: a.id });
    expect(callsOf(reopened)[0]).toMatchObject({ status: 'succeeded', resultText: expect.stringContaining('#1 Welcome') });
    await call(t.core, 'chat:rename', { conversationId: a.id, title: 'My notes' });
    expect((await call<{ conversations: ConversationSummary[] }>(t.core, 'chat:list', { search: 'NOTES' })).conversations.map((c) => c.id)).toEqual([a.id]);
    expect(await call(t.core, 'chat:delete', { conversationId: b.id })).toEqual({ deleted: true });
    await t.core.close();

    t = await start(dir);
    expect((await call<{ conversations: ConversationSummary[] }>(t.core, 'chat:list', {})).conversations.map((c) => c.title)).toEqual(['My notes']);
    // Only whole files are left: no temporary file from an atomic write.
    expect(readdirSync(path.join(dir, 'conversations')).filter((f) => !f.endsWith('.json'))).toEqual([]);
    expect(existsSync(path.join(dir, 'conversations', `${b.id}.json`))).toBe(false);
  });

  it('a call waiting for approval when Warden stopped shows as expired with "ask again", never runs, and asking again decides it anew', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-persist-'));
    t = await start(dir);
    const c = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'Save a note: water the plants' });
    const waiting = await waitingApproval(t.core, c.id);
    const opId = callsOf(waiting)[0]!.operationId!;
    await t.core.close();

    t = await start(dir);
    const reopened = await call<Conversation>(t.core, 'chat:get', { conversationId: c.id });
    expect(reopened.state).toBe('idle');
    const x = callsOf(reopened)[0]!;
    expect(x).toMatchObject({ status: 'expired', askAgain: true, modelResult: 'Error: the approval expired; nothing ran.' });
    expect(reopened.messages.at(-1)).toMatchObject({ role: 'notice', tone: 'warning' });
    expect(['cancelled', 'invalidated']).toContain((await t.core.gate.gate.get(opId))?.state);
    await expect(t.core.gate.gate.approve(opId)).rejects.toThrow();
    const messageId = reopened.messages.find((m) => m.toolCalls.length)!.id;
    await call(t.core, 'chat:ask-again', { conversationId: c.id, messageId });
    const again = await waitingApproval(t.core, c.id);
    const fresh = callsOf(again).at(-1)!;
    expect(fresh.status).toBe('awaiting_approval');
    expect(fresh.operationId).not.toBe(opId);
    expect(t.demos.flatMap((d) => d.calls)).toEqual([]);
  });

  it('a crash after the gate recorded a pending call but before the conversation was saved leaves nothing approvable: the call never runs', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-persist-'));
    // Server definitions persist too, as in the app, so the restarted core lists the same tool.
    const restart = async (folder: string) => {
      const { ledger } = await openLedgerForApp(folder);
      return startChatCore({ ledger, servers: { secrets: new MapKeychain(), settingsStore: openConfSettingsStore(folder) }, chat: { dataDir: path.join(folder, 'conversations') } });
    };
    t = await restart(dir);
    const c = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'Save a note: water the plants' });
    const waiting = await waitingApproval(t.core, c.id);
    const opId = callsOf(waiting)[0]!.operationId!;
    await t.core.close();
    // The crash window: the ledger has the call (its record is written before anything else
    // happens), the conversation file is still the one saved with the person's message.
    const file = path.join(dir, 'conversations', `${c.id}.json`);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Conversation;
    writeFileSync(file, JSON.stringify({ ...saved, state: 'responding', messages: saved.messages.filter((m) => m.role === 'user') }));

    t = await restart(dir);
    await call(t.core, 'connections:connect', t.demo);
    t.dialogs.single = 'approve';
    t.dialogs.batch = 'approve-all';
    const reopened = await call<Conversation>(t.core, 'chat:get', { conversationId: c.id });
    expect(callsOf(reopened)).toEqual([]);
    // Nothing from that turn waits in Approvals, and nothing can approve it.
    expect(t.core.gate.gate.pending().map((o) => o.operationId)).not.toContain(opId);
    expect((await t.core.gate.gate.get(opId))?.state).toBe('cancelled');
    await call(t.core, 'approvals:review', { operationId: opId }).catch(() => undefined);
    await expect(t.core.gate.gate.approve(opId)).rejects.toThrow();
    expect(t.demos.flatMap((d) => d.calls)).toEqual([]);
  });
});

const TOOL_ROUNDS = 4;

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
