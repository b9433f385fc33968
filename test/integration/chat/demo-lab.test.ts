/**
 * The offline demo is the prompt-injection lab, through the real core: the demo model (which
 * obeys injected text) against the real gate, policy store and in-process demo server. What the
 * server received comes from the server's own record.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../../shared/contract/chat';
import { call, callsOf, settled, startChatCore, waitingApproval, type ChatCore } from './helpers';

let t: ChatCore | undefined;
afterEach(async () => {
  await t?.core.close();
  t = undefined;
});

const received = (c: ChatCore) => c.demos.flatMap((d) => d.calls.map((x) => x.tool));

describe('the offline demo lab', () => {
  it('summarising the inbox: the inbox result is flagged, and the delete the model obeys is never offered and refused as not permitted', async () => {
    t = await startChatCore();
    const started = await call<Conversation>(t.core, 'chat:start-demo', {});
    const c = await settled(t.core, started.id);
    const calls = callsOf(c);
    expect(calls.map((x) => [x.modelName, x.status])).toEqual([
      [expect.stringMatching(/__read_inbox$/), 'succeeded'],
      [expect.stringMatching(/__notes_delete$/), 'not_permitted'],
    ]);
    expect(calls[0]!.flagged).toBe(true);
    expect(calls[0]!.modelResult).toMatch(/^<tool_output untrusted="true" server="Warden demo \(built-in\)" tool="read_inbox">/);
    expect(calls[1]!.modelResult).toBe('Error: this tool is not permitted.');
    // The refusal is in the ledger like every decision.
    const refused = (await t.core.gate.gate.get(calls[1]!.operationId!))!;
    expect(refused.state).toBe('denied');
    expect(refused.origin).toMatchObject({ source: 'model', conversationId: c.id, callId: calls[1]!.callId });
    // The delete never reached the server: it only ever received the inbox read.
    expect(received(t)).toEqual(['read_inbox']);
    expect(t.demos[0]!.notes.map((n) => n.id)).toEqual([1]);
    // The delete was not among the tools offered to the model.
    const tools = await call<{ tools: Array<{ toolName: string; offered: boolean }> }>(t.core, 'chat:tools', { conversationId: c.id });
    expect(tools.tools.find((x) => x.toolName === 'notes_delete')).toMatchObject({ offered: false });
    expect(tools.tools.filter((x) => x.offered).map((x) => x.toolName).sort()).toEqual(['files_list', 'files_read', 'notes_add', 'notes_list', 'read_inbox']);
    expect(c.messages.at(-1)!.text).toMatch(/not permitted, so nothing was deleted/);
  });

  it('saving a note waits and writes nothing until approved; an approval works once', async () => {
    t = await startChatCore();
    const c0 = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: c0.id, text: 'Save a note: call the dentist' });
    const waiting = await waitingApproval(t.core, c0.id);
    const pending = callsOf(waiting)[0]!;
    expect(pending.status).toBe('awaiting_approval');
    expect(pending.preview).toBe('Add a demo note: "call the dentist" — notes_add on Warden demo (built-in) (Default)');
    expect(t.demos.flatMap((d) => d.calls)).toEqual([]);
    t.dialogs.single = 'approve';
    const message = waiting.messages.find((m) => m.toolCalls.length)!;
    await call(t.core, 'chat:review', { conversationId: c0.id, messageId: message.id });
    const done = await settled(t.core, c0.id);
    expect(callsOf(done)[0]!.status).toBe('succeeded');
    expect(t.demos[0]!.notes.map((n) => n.text)).toContain('call the dentist');
    // Single use: the same operation cannot be approved again.
    await expect(t.core.gate.gate.approve(pending.operationId!)).rejects.toThrow(/cannot be approved/);
    expect(t.demos.flatMap((d) => d.calls).filter((x) => x.tool === 'notes_add')).toHaveLength(1);
  });

  it('declining writes nothing and the model is told', async () => {
    t = await startChatCore();
    const c0 = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: c0.id, text: 'Save a note: buy milk' });
    const waiting = await waitingApproval(t.core, c0.id);
    t.dialogs.single = 'deny';
    await call(t.core, 'chat:review', { conversationId: c0.id, messageId: waiting.messages.find((m) => m.toolCalls.length)!.id });
    const done = await settled(t.core, c0.id);
    expect(callsOf(done)[0]).toMatchObject({ status: 'declined', modelResult: 'Error: the user declined this action.' });
    expect(done.messages.at(-1)!.text).toMatch(/You declined/);
    expect(t.demos.flatMap((d) => d.calls)).toEqual([]);
  });

  it('an unknown tool is refused and recorded', async () => {
    t = await startChatCore();
    const c0 = await call<Conversation>(t.core, 'chat:create', {});
    await call(t.core, 'chat:send-message', { conversationId: c0.id, text: 'Call format_disk' });
    const done = await settled(t.core, c0.id);
    const x = callsOf(done)[0]!;
    expect(x).toMatchObject({ modelName: 'format_disk', status: 'not_permitted', modelResult: 'Error: this tool is not permitted.' });
    expect((await t.core.gate.gate.get(x.operationId!))!.state).toBe('denied');
    expect(t.demos.flatMap((d) => d.calls)).toEqual([]);
  });
});
