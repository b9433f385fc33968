/**
 * Checking real actions (what was intended, what was requested, what the destination observed,
 * what the outcome was) through the real core, the chat loop and a spawned
 * "publish report" destination that keeps its own effect log. Each case says what the
 * destination did, what the ledger recorded, and what the model was told.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerForApp } from '../../../electron/core/ledger';
import type { Conversation } from '../../../shared/contract/chat';
import { ROOT, TSX_LOADER } from '../mcp/helpers';
import { call, callsOf, settled, startChatCore, until, waitingApproval, type ChatCore } from './helpers';
import { offeredName, ScriptedModel, withScripted, type ScriptedReply } from './scripted-model';

let t: ChatCore;
let dir: string;
let effects: string;
let server = { serverId: '', accountId: '' };
let next: (r: Parameters<typeof offeredName>[0]) => ScriptedReply = () => ({ text: 'ok' });
const model = new ScriptedModel((r) => (r.messages.at(-1)?.role === 'tool' ? { text: 'Reported what Warden said.' } : next(r)));

const published = (): Array<Record<string, unknown>> => (existsSync(effects) ? readFileSync(effects, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'warden-seed001-'));
  effects = path.join(dir, 'effects.jsonl');
  const { ledger } = await openLedgerForApp(dir);
  t = await startChatCore({ ledger, chat: { providers: withScripted(model) }, connections: { reconnect: { maxAttempts: 0 }, defaultCallTimeoutMs: 1_500 } });
  const added = await call<{ definition: { id: string } }>(t.core, 'servers:add', {
    definition: { name: 'Reports', transport: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, path.join(ROOT, 'test/fixtures/servers/publish-report.ts')], env: [{ name: 'EFFECT_LOG', value: effects }] },
  });
  const accountId = (await call<{ accounts: Array<{ id: string }> }>(t.core, 'accounts:list', { serverId: added.definition.id })).accounts[0]!.id;
  server = { serverId: added.definition.id, accountId };
  expect((await call<{ status: { state: string } }>(t.core, 'connections:connect', server)).status.state).toBe('connected');
}, 60_000);
afterAll(async () => {
  await t?.core.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends one message whose first reply is `reply`; returns the conversation id. */
async function ask(reply: typeof next): Promise<string> {
  next = reply;
  const c = await call<Conversation>(t.core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
  await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'publish' });
  return c.id;
}
const publish = (args: Record<string, unknown>, tool = 'publish_report') => (r: Parameters<typeof offeredName>[0]) => ({ calls: [{ name: offeredName(r, tool)!, args }] });

describe('checking real actions: intent, request, observation, outcome', () => {
  it('a valid publication: approved, published once with exactly the approved content, and the model hears what the destination said', async () => {
    const id = await ask(publish({ workspace: 'demo-workspace', body: 'Quarterly test report: no customer data.' }));
    const waiting = await waitingApproval(t.core, id);
    expect(published()).toEqual([]);
    t.dialogs.single = 'approve';
    await call(t.core, 'chat:review', { conversationId: id, messageId: waiting.messages.find((m) => m.toolCalls.length)!.id });
    const done = await settled(t.core, id);
    expect(published()).toEqual([{ tool: 'publish_report', workspace: 'demo-workspace', body: 'Quarterly test report: no customer data.' }]);
    expect(callsOf(done)[0]).toMatchObject({ status: 'succeeded', modelResult: expect.stringContaining('Published to demo-workspace.') });
  });

  it('a changed workspace or modified content after approval is void: the approved request is the only one ever sent', async () => {
    const before = published().length;
    const gate = t.core.gate.gate;
    const args = { workspace: 'team-a', body: 'Approved draft' };
    const op = await gate.submit({ source: 'model', conversationId: 'c-seed', ...server, toolName: 'publish_report', arguments: args, operationId: 'real-actions-change' });
    expect(op.state).toBe('awaiting_approval');
    args.workspace = 'attacker-workspace';
    args.body = 'Modified after approval';
    await gate.approve('real-actions-change');
    await gate.settled('real-actions-change');
    // The same operation id with a different workspace gets the recorded operation back, not a second send.
    const again = await gate.submit({ source: 'model', conversationId: 'c-seed', ...server, toolName: 'publish_report', arguments: { workspace: 'attacker-workspace', body: 'Modified after approval' }, operationId: 'real-actions-change' });
    expect(again.arguments).toEqual({ workspace: 'team-a', body: 'Approved draft' });
    expect(published().slice(before)).toEqual([{ tool: 'publish_report', workspace: 'team-a', body: 'Approved draft' }]);
    // A model asking again with a changed workspace is a new operation that needs its own approval.
    const id = await ask(publish({ workspace: 'attacker-workspace', body: 'Approved draft' }));
    const waiting = await waitingApproval(t.core, id);
    expect(callsOf(waiting)[0]!.operationId).not.toBe('real-actions-change');
    t.dialogs.single = 'deny';
    await call(t.core, 'chat:review', { conversationId: id, messageId: waiting.messages.find((m) => m.toolCalls.length)!.id });
    await settled(t.core, id);
    expect(published().slice(before)).toHaveLength(1);
  });

  it('an extra field the schema does not declare is refused naming the field; where the schema allows more it is shown and fingerprinted', async () => {
    const before = published().length;
    const id = await ask(publish({ workspace: 'demo-workspace', body: 'x', cc: 'everyone@example.com' }));
    const done = await settled(t.core, id);
    expect(callsOf(done)[0]).toMatchObject({ status: 'invalid', modelResult: expect.stringContaining('arguments.cc: not declared by the tool\'s input schema') });
    expect(published().length).toBe(before);

    const gate = t.core.gate.gate;
    const plain = await gate.submit({ source: 'model', ...server, toolName: 'publish_report_tagged', arguments: { workspace: 'w', body: 'b' } });
    const tagged = await gate.submit({ source: 'model', ...server, toolName: 'publish_report_tagged', arguments: { workspace: 'w', body: 'b', cc: 'everyone@example.com' } });
    expect(tagged.state).toBe('awaiting_approval');
    expect(gate.preview(tagged.operationId).argumentsJson).toContain('"cc": "everyone@example.com"');
    expect(tagged.fingerprint).not.toBe(plain.fingerprint);
    await gate.reject(plain.operationId);
    await gate.reject(tagged.operationId);
  });

  it('a repeated operation id has no second effect and gets the same recorded outcome', async () => {
    t.dialogs.single = 'approve';
    await call(t.core, 'permissions:set', { scope: 'tool', ...server, toolName: 'publish_report', mode: 'allow' });
    const before = published().length;
    const gate = t.core.gate.gate;
    const first = await gate.request({ source: 'model', ...server, toolName: 'publish_report', arguments: { workspace: 'once', body: 'b' }, operationId: 'real-actions-repeat' });
    const second = await gate.request({ source: 'model', ...server, toolName: 'publish_report', arguments: { workspace: 'once', body: 'b' }, operationId: 'real-actions-repeat' });
    expect(first.state).toBe('succeeded');
    // The same operation, read back from the history: its recorded outcome, never a second call.
    // (Recorded times are the ledger's, which can be a millisecond after the live transition's.)
    const recorded = (op: typeof first) => ({ id: op.operationId, state: op.state, arguments: op.arguments, result: op.result, fingerprint: op.fingerprint, history: op.history.map(({ from, to, reason }) => ({ from, to, reason })) });
    expect(recorded(second)).toEqual(recorded(first));
    expect(second.history).toEqual((await gate.get('real-actions-repeat'))!.history);
    expect(published().slice(before)).toEqual([{ tool: 'publish_report', workspace: 'once', body: 'b' }]);
  });

  it('an unavailable destination: failed, nothing published, and nothing claimed to the model', async () => {
    const before = published().length;
    const id = await ask(publish({ workspace: 'offline', body: 'b' }));
    const done = await settled(t.core, id);
    expect(callsOf(done)[0]).toMatchObject({ status: 'failed', isError: true, modelResult: expect.stringMatching(/^The tool reported an error:\n<tool_output untrusted="true" server="Reports" tool="publish_report">\nDestination offline is unavailable/) });
    expect(published().length).toBe(before);
  });

  it('Stop while a call runs cancels it: it ends outcome unknown (the destination may have acted), never "failed"', async () => {
    const id = await ask(publish({ workspace: 'slow', body: 'stopped' }));
    await until(() => callsOf(t.core.chat.get(id))[0]?.status === 'running', 'the call to run');
    await call(t.core, 'chat:stop', { conversationId: id });
    const done = await settled(t.core, id);
    expect(callsOf(done)[0]).toMatchObject({ status: 'outcome_unknown', modelResult: expect.stringMatching(/no answer is known/) });
    expect(published().some((p) => p.body === 'stopped')).toBe(true);
  });

  it('a timeout after the destination accepted: outcome unknown, the model is told so, and reconciliation records what the person learns', async () => {
    const before = published().length;
    const id = await ask(publish({ workspace: 'slow', body: 'b' }));
    const done = await settled(t.core, id);
    const x = callsOf(done)[0]!;
    expect(x.status).toBe('outcome_unknown');
    expect(x.modelResult).toMatch(/no answer is known.*Do not claim it succeeded/s);
    // The destination did act: exactly why "unknown" is the honest answer.
    expect(published().slice(before)).toEqual([{ tool: 'publish_report', workspace: 'slow', body: 'b' }]);
    const recovery = await call<{ operations: Array<{ operationId: string }> }>(t.core, 'recovery:list', {});
    expect(recovery.operations.map((o) => o.operationId)).toContain(x.operationId);
    const reconciled = await call<{ operation: { state: string } }>(t.core, 'recovery:reconcile', { operationId: x.operationId, outcome: 'succeeded', reason: 'I checked the workspace: the report is there.' });
    expect(reconciled.operation.state).toBe('succeeded');
  });
});
