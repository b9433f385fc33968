/**
 * How a chat call that was running ends when it is stopped, through the real core: a person's
 * Stop of a call to a tool that only reads (by annotations Warden trusts: its built-in server's)
 * needs nothing checked, so it is no Recovery item; a Stop of any other tool stays "outcome
 * unknown"; and Warden quitting mid-call is written as Warden quitting, never as the person's Stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedgerForApp } from '../../../electron/core/ledger';
import type { Conversation } from '../../../shared/contract/chat';
import { openSlowBuiltin, type SlowBuiltinState } from '../../fixtures/servers/slow-builtin';
import { fixturePath, TSX_LOADER } from '../mcp/helpers';
import { call, callsOf, settled, startChatCore, until, type ChatCore } from './helpers';
import { offeredName, ScriptedModel, withScripted } from './scripted-model';

let t: ChatCore | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.core.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  t = undefined;
  dir = undefined;
});

/** A model that asks for one long call of `tool`, then answers in words. */
const asking = (tool: string) =>
  new ScriptedModel((request, i) => (i === 0 ? { calls: [{ name: offeredName(request, tool)!, args: { steps: 200, stepMs: 50 } }] } : { text: 'Done.' }));

async function start(state: SlowBuiltinState, model: ScriptedModel, folder?: string): Promise<ChatCore> {
  const ledger = folder ? (await openLedgerForApp(folder)).ledger : undefined;
  const core = await startChatCore({
    ...(ledger ? { ledger } : {}),
    chat: { providers: withScripted(model), ...(folder ? { dataDir: path.join(folder, 'conversations') } : {}) },
    connections: { reconnect: { maxAttempts: 0 }, builtinTransport: () => openSlowBuiltin(state) },
  });
  await until(() => core.core.connections.listTools({ serverId: core.demo.serverId }).length === 2, 'the slow built-in server to list its tools');
  // Always Allow for both tools, so each call runs as soon as the model asks (confirmed in the dialog stand-in).
  core.dialogs.single = 'approve';
  for (const toolName of ['archive_search', 'archive_publish']) await call(core.core, 'permissions:set', { scope: 'tool', ...core.demo, toolName, mode: 'allow' });
  return core;
}

/** Sends a message and waits until its call is running at the server. */
async function running(core: ChatCore, state: SlowBuiltinState, tool: string): Promise<string> {
  const c = await call<Conversation>(core.core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
  await call(core.core, 'chat:send-message', { conversationId: c.id, text: `Use ${tool}` });
  await until(() => (state.started[tool] ?? 0) === 1, `${tool} to start`);
  return c.id;
}

describe('a running chat call that is stopped', () => {
  it('to a tool that only reads, by annotations Warden trusts, ends stopped with nothing to check and is no Recovery item', async () => {
    const state: SlowBuiltinState = { started: {}, cancelled: {} };
    t = await start(state, asking('archive_search'));
    const conversationId = await running(t, state, 'archive_search');
    expect(await call(t.core, 'chat:stop', { conversationId })).toEqual({ stopped: true });
    const c = await settled(t.core, conversationId);
    const card = callsOf(c)[0]!;
    expect(card).toMatchObject({ status: 'stopped', why: 'Stopped by you in the chat. This tool only reads, so nothing needs checking.' });
    expect(card.modelResult).toMatch(/stopped.*only reads.*nothing changed/i);
    expect(JSON.stringify(c)).not.toMatch(/outcome unknown|may have acted/i);
    await until(() => (state.cancelled.archive_search ?? 0) === 1, 'the server to hear the Stop');
    const { operations } = await call<{ operations: Array<{ operationId: string }> }>(t.core, 'recovery:list', {});
    expect(operations.map((o) => o.operationId)).not.toContain(card.operationId);
    expect((await t.core.gate.gate.get(card.operationId!))?.state).not.toBe('outcome_unknown');
  });

  it('to a tool that may change things stays outcome unknown, waiting in Recovery', async () => {
    const state: SlowBuiltinState = { started: {}, cancelled: {} };
    t = await start(state, asking('archive_publish'));
    const conversationId = await running(t, state, 'archive_publish');
    await call(t.core, 'chat:stop', { conversationId });
    const card = callsOf(await settled(t.core, conversationId))[0]!;
    expect(card.status).toBe('outcome_unknown');
    await until(async () => (await call<{ operations: Array<{ operationId: string }> }>(t!.core, 'recovery:list', {})).operations.some((o) => o.operationId === card.operationId), 'the call to wait in Recovery');
  });

  it('to a tool whose server only claims it reads (not Warden\'s own) stays outcome unknown', async () => {
    const model = asking('archive_search');
    t = await startChatCore({ chat: { providers: withScripted(model) } });
    const added = await call<{ definition: { id: string } }>(t.core, 'servers:add', {
      definition: { name: 'Archive', transport: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, fixturePath('slow-archive')] },
    });
    const serverId = added.definition.id;
    const accountId = (await call<{ accounts: Array<{ id: string }> }>(t.core, 'accounts:list', { serverId })).accounts[0]!.id;
    expect((await call<{ status: { state: string } }>(t.core, 'connections:connect', { serverId, accountId })).status.state).toBe('connected');
    expect(t.core.connections.listTools({ serverId }).find((x) => x.name === 'archive_search')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    t.dialogs.single = 'approve';
    await call(t.core, 'permissions:set', { scope: 'tool', serverId, accountId, toolName: 'archive_search', mode: 'allow' });
    const c = await call<Conversation>(t.core, 'chat:create', { providerId: 'scripted', model: 'scripted' });
    await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'Search the archive' });
    await until(() => {
      const id = callsOf(t!.core.chat.get(c.id))[0]?.operationId;
      return typeof id === 'string' && t!.core.gate.gate.getLive(id)?.state === 'executing';
    }, 'the call to be sent');
    await call(t.core, 'chat:stop', { conversationId: c.id });
    const card = callsOf(await settled(t.core, c.id))[0]!;
    expect(card.status).toBe('outcome_unknown');
    expect(card.why).toBe('Stopped by you in the chat: the server may have acted');
  });

  it('by Warden quitting is written as Warden quitting, never as "Stopped by you"', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-quit-'));
    const state: SlowBuiltinState = { started: {}, cancelled: {} };
    t = await start(state, asking('archive_publish'), dir);
    const conversationId = await running(t, state, 'archive_publish');
    await t.core.close();

    t = await start(state, asking('archive_publish'), dir);
    const c = await call<Conversation>(t.core, 'chat:get', { conversationId });
    const words = JSON.stringify(c);
    expect(words).not.toMatch(/stopped by you/i);
    expect(c.messages.filter((m) => m.role === 'notice').map((m) => m.text).join('\n')).toMatch(/Warden quit/);
    const card = callsOf(c)[0]!;
    expect(card.status).toBe('outcome_unknown');
    expect(card.why).toMatch(/^Warden quit while this call was running/);
    // The ledger (Activity, Recovery) says the same.
    expect((await t.core.gate.gate.get(card.operationId!))?.reason).toMatch(/^Warden quit while this call was running/);
  });
});
