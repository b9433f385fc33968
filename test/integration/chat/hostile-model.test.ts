/**
 * The chat loop against a hostile or broken model, from the attacker's side: a reply with tens of
 * thousands of tool calls, and call ids that repeat or that no provider would accept back.
 * Through the real core (createCore, the contract dispatch, the real gate and ledger journal, the
 * in-process demo server) with a scripted model.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../../shared/contract/chat';
import { toModelMessages } from '../../../electron/core/chat/model-messages';
import type { ModelRequest } from '../../../electron/core/models/provider';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock, type JournalEntry } from '../../../electron/core/ports';
import { call, callsOf, settled, startChatCore, until, type ChatCore } from './helpers';
import { offeredName, ScriptedModel, withScripted, type ScriptedReply } from './scripted-model';

let t: ChatCore | undefined;
afterEach(async () => {
  await t?.core.close();
  t = undefined;
});

async function scripted(script: (r: ModelRequest, i: number) => ScriptedReply, journal?: MemoryJournal) {
  const model = new ScriptedModel(script);
  t = await startChatCore({ chat: { providers: withScripted(model) }, ...(journal ? { journal } : {}) });
  await call(t.core, 'connections:connect', t.demo);
  const c = await call<Conversation>(t.core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
  return { model, c };
}
const received = () => t!.demos.flatMap((d) => d.calls.map((x) => x.tool));

describe('a model that floods the loop with tool calls', () => {
  it('a reply with 20,000 tool calls: none runs, a bounded number is recorded, and the loop stops saying how many there were', async () => {
    const { model, c } = await scripted((r, i) => (i === 0 ? { calls: Array.from({ length: 20_000 }, (_, k) => ({ id: `c${k}`, name: offeredName(r, 'notes_list')!, args: {} })) } : { text: 'done' }));
    const recordsBefore = t!.core.status().journal.records;
    await call(t!.core, 'chat:send-message', { conversationId: c.id, text: 'go' });
    const done = await settled(t!.core, c.id);
    expect(received()).toEqual([]);
    expect(done.messages.at(-1)).toMatchObject({ role: 'notice', tone: 'warning', text: expect.stringMatching(/^Stopped: the model asked for 20000 tool calls in one reply/) });
    // Each call the chat keeps was refused in the gate, on record; the rest were never entered.
    const kept = callsOf(done);
    expect(kept.length).toBeLessThanOrEqual(100);
    expect(kept.every((x) => x.status === 'skipped' && x.operationId !== null)).toBe(true);
    expect(t!.core.status().journal.records - recordsBefore).toBeLessThanOrEqual(2 * 100 + 10);
    expect(JSON.stringify(done).length).toBeLessThan(200_000);
    // The next message replays the reply with exactly one result per call it kept, and nothing more.
    await call(t!.core, 'chat:send-message', { conversationId: c.id, text: 'again' });
    await settled(t!.core, c.id);
    const replay = model.requests.at(-1)!.messages;
    const assistant = replay.find((m) => m.role === 'assistant' && m.toolCalls.length > 0);
    const results = replay.find((m) => m.role === 'tool');
    expect(assistant?.role === 'assistant' && assistant.toolCalls.length).toBe(kept.length);
    expect(results?.role === 'tool' && results.results.map((x) => x.callId)).toEqual(kept.map((x) => x.callId));
  });
});

describe('call ids a model repeats or makes up', () => {
  it('two calls of one reply with the same id get one result each under distinct ids, so the model can tell the refusal from the result', async () => {
    const { model, c } = await scripted((r, i) =>
      i === 0
        ? {
            calls: [
              { id: 'dup', name: offeredName(r, 'notes_list')!, args: {} },
              // The Disabled delete, named anyway: refused, under the very same id.
              { id: 'dup', name: 'Warden_demo_built-in__notes_delete', args: { id: 1 } },
              // An id no provider accepts back in a tool result.
              { id: 'bad id with spaces and ünïcode'.repeat(4), name: offeredName(r, 'notes_list')!, args: {} },
            ],
          }
        : { text: 'done' },
    );
    await call(t!.core, 'chat:send-message', { conversationId: c.id, text: 'go' });
    const done = await settled(t!.core, c.id);
    const calls = callsOf(done);
    expect(calls.map((x) => x.status)).toEqual(['succeeded', 'not_permitted', 'succeeded']);
    const ids = calls.map((x) => x.callId);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(ids[0]).toBe('dup');
    // On the wire of the next request: each call once, its result once, under the same id.
    const next = model.requests[1]!.messages;
    const asked = next.find((m) => m.role === 'assistant')!;
    const answered = next.find((m) => m.role === 'tool')!;
    expect(asked.role === 'assistant' && asked.toolCalls.map((x) => x.id)).toEqual(ids);
    expect(answered.role === 'tool' && answered.results.map((x) => x.callId)).toEqual(ids);
    expect(answered.role === 'tool' && answered.results[1]!.content).toBe('Error: this tool is not permitted.');
    // And the gate recorded each under its own id, as the chat shows it.
    const recorded = await Promise.all(calls.map(async (x) => (await t!.core.gate.gate.get(x.operationId!))!.origin.callId));
    expect(recorded).toEqual(ids);
    expect(toModelMessages(done.messages).filter((m) => m.role === 'tool')).toHaveLength(1);
  });

  it('an id reused in a later reply of the same conversation is made distinct too', async () => {
    const { model, c } = await scripted((r, i) => (i < 2 ? { calls: [{ id: 'call_1', name: offeredName(r, 'notes_list')!, args: {} }] } : { text: 'done' }));
    await call(t!.core, 'chat:send-message', { conversationId: c.id, text: 'go' });
    const done = await settled(t!.core, c.id);
    const ids = callsOf(done).map((x) => x.callId);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    const replayed = model.requests.at(-1)!.messages.flatMap((m) => (m.role === 'tool' ? m.results.map((x) => x.callId) : []));
    expect(replayed).toEqual(ids);
  });
});

/** A journal whose appends, once held, finish only when released (a slow disk: fsync taking a while). */
class SlowJournal extends MemoryJournal {
  held = false;
  private waiting: Array<() => void> = [];
  override async append(entries: JournalEntry[]) {
    const stored = super.append(entries);
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return stored;
  }
  release() {
    this.held = false;
    for (const go of this.waiting.splice(0)) go();
  }
}

describe('Stop while the calls of a reply are being recorded', () => {
  it('cancels every call of that reply: the allowed one is not sent, the one that asks is not left approvable', async () => {
    const journal = new SlowJournal(systemClock);
    const { c } = await scripted(
      (r, i) => (i === 0 ? { calls: [{ name: offeredName(r, 'notes_list')!, args: {} }, { name: offeredName(r, 'notes_add')!, args: { text: 'after stop' } }] } : { text: 'done' }),
      journal,
    );
    journal.held = true;
    await call(t!.core, 'chat:send-message', { conversationId: c.id, text: 'go' });
    // Both calls are decided (the gate decides synchronously); their records are still being written.
    await until(() => t!.core.gate.gate.list({ conversationId: c.id }).length === 2, 'both calls to be decided');
    const stopping = call(t!.core, 'chat:stop', { conversationId: c.id });
    journal.release();
    expect(await stopping).toEqual({ stopped: true });
    await until(() => t!.core.gate.gate.list({ conversationId: c.id }).every((o) => o.state !== 'executing'), 'the allowed call to end');
    // Nothing of that reply may still wait for a decision, nor have reached the server.
    expect(t!.core.gate.gate.pending()).toEqual([]);
    expect(received()).toEqual([]);
    const done = await settled(t!.core, c.id);
    // Finished operations leave the gate's live list: read each from the history.
    const ops = await Promise.all(callsOf(done).map((x) => t!.core.gate.gate.get(x.operationId!)));
    expect(ops.map((o) => o?.state).sort()).toEqual(['cancelled', 'failed']);
    expect(callsOf(done).map((x) => x.status).sort()).toEqual(['cancelled', 'failed']);
    expect(done.messages.at(-1)!.text).toMatch(/Stopped by you/);
  });
});
