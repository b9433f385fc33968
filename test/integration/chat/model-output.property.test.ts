/**
 * No model output can create or change a rule, approve an operation, reach a tool that was not
 * offered, or make a call without a decision in the ledger: whatever names, arguments, text and
 * number of calls a model sends (fast-check), through the real core and the demo server.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../../shared/contract/chat';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import { toModelMessages } from '../../../electron/core/chat/model-messages';
import { call, settled, startChatCore, type ChatCore } from './helpers';
import { ScriptedModel, withScripted, type ScriptedReply } from './scripted-model';

let t: ChatCore;
const journal = new MemoryJournal(systemClock);
let replies: ScriptedReply[] = [];
const model = new ScriptedModel((_r, i) => replies[i] ?? { text: 'end' });

beforeAll(async () => {
  t = await startChatCore({ journal, chat: { providers: withScripted(model), limits: { perToolPerMinute: 10_000, maxRoundsPerMessage: 4 } }, gate: { approvalTtlMs: 50 } });
  // Connected so its tools are listed and offered (reading Always Allow, saving Ask, deleting Disabled).
  await call(t.core, 'connections:connect', t.demo);
});
afterAll(() => t.core.close());

const names = (demoNames: string[]) =>
  fc.oneof(
    fc.constantFrom(...demoNames),
    fc.constantFrom('notes_delete', 'Warden_demo_built-in__notes_delete', 'read_inbox', '~model', 'demo__notes_add', '', '__', 'x'.repeat(300)),
    fc.string({ maxLength: 80 }),
  );
const args = fc.oneof(
  fc.jsonValue().map((v) => ({ raw: JSON.stringify(v) })),
  fc.record({ text: fc.string({ maxLength: 50 }), id: fc.integer() }).map((v) => ({ raw: JSON.stringify(v) })),
  fc.string({ maxLength: 40 }).map((s) => ({ raw: s })),
);

describe('model output has no authority', () => {
  it('any names, arguments, text and number of calls: no rule changes, nothing is approved, only offered tools run, and every call that ran was decided on record', async () => {
    const probe = await call<Conversation>(t.core, 'chat:create', {});
    const offeredNow = (await call<{ tools: Array<{ modelName: string; toolName: string; offered: boolean; effective: string }> }>(t.core, 'chat:tools', { conversationId: probe.id })).tools;
    const demoNames = offeredNow.map((x) => x.modelName);
    const offeredTools = new Set(offeredNow.filter((x) => x.offered).map((x) => x.toolName));
    const allowed = new Set(offeredNow.filter((x) => x.effective === 'allow').map((x) => x.toolName));
    expect(offeredTools.has('notes_delete')).toBe(false);

    const reply = fc.record({
      text: fc.string({ maxLength: 200 }),
      calls: fc.array(fc.record({ name: names(demoNames), a: args }), { maxLength: 14 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 4 }), async (script) => {
        const policyBefore = t.core.gate.policy.current();
        const before = t.demos.flatMap((d) => d.calls).length;
        // The scripted model answers request i of this conversation with reply i.
        model.requests.length = 0;
        replies = script.map((r) => ({ text: r.text, calls: r.calls.map((c) => ({ name: c.name, rawArgs: c.a.raw })) }));
        const c = await call<Conversation>(t.core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
        await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'do anything' });
        const done = await settled(t.core, c.id);

        // 1. No rule was created or changed (the very same frozen state object).
        expect(t.core.gate.policy.current()).toBe(policyBefore);
        // 2. Nothing was approved by a person, and no dialog was ever shown.
        // Every operation of the conversation, finished ones included (read from the history).
        const ops = (await t.core.gate.handlers['operations:list']({ conversationId: c.id, limit: 1000 })).operations;
        expect(ops.some((o) => o.approvedByUser)).toBe(false);
        expect(t.dialogs.shown.length + t.dialogs.batches.length).toBe(0);
        // 3. The server only ever received offered, Always-Allowed tools.
        const newCalls = t.demos.flatMap((d) => d.calls).slice(before);
        for (const x of newCalls) expect(allowed.has(x.tool) && offeredTools.has(x.tool)).toBe(true);
        // 4. Every call the server received has an operation with a recorded allow decision.
        const records = journal.read();
        const executed = records.filter((r) => r.type === 'op.transition' && (r.payload as { to: string }).to === 'executing').map((r) => (r.payload as { operationId: string }).operationId);
        const approvedByPolicy = new Set(
          records
            .filter((r) => r.type === 'op.transition' && (r.payload as { to: string; decision?: { decision: string } }).to === 'approved' && (r.payload as { decision?: { decision: string } }).decision?.decision === 'allow')
            .map((r) => (r.payload as { operationId: string }).operationId),
        );
        for (const id of executed) expect(approvedByPolicy.has(id)).toBe(true);
        expect(newCalls.length).toBeLessThanOrEqual(ops.filter((o) => o.history.some((h) => h.to === 'executing')).length);
        // 5. Every tool call the model made has exactly one result, and an operation on record.
        const history = toModelMessages(done.messages);
        for (const [i, m] of history.entries()) {
          if (m.role !== 'assistant' || m.toolCalls.length === 0) continue;
          const next = history[i + 1];
          expect(next?.role).toBe('tool');
          expect(next?.role === 'tool' && next.results.map((r) => r.callId)).toEqual(m.toolCalls.map((x) => x.id));
        }
        for (const x of done.messages.flatMap((m) => m.toolCalls)) expect(x.operationId && t.core.gate.gate.get(x.operationId)).toBeTruthy();
        // 6. A call naming anything not offered was refused by the loop itself, before any policy.
        for (const o of ops) {
          if (o.identity.serverId === t.demo.serverId && offeredTools.has(o.identity.toolName)) continue;
          expect(o.state).toBe('denied');
          expect(o.reason).toMatch(/^Not offered to the model|^too many tool calls/);
        }
      }),
      { numRuns: 40 },
    );
  }, 240_000);
});
