/**
 * How a chat call that was running ends when it is stopped, through the real core: Warden
 * quitting mid-call is written as Warden quitting, never as the person's Stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedgerForApp } from '../../../electron/core/ledger';
import type { Conversation } from '../../../shared/contract/chat';
import { openSlowBuiltin, type SlowBuiltinState } from '../../fixtures/servers/slow-builtin';
import { call, callsOf, startChatCore, until, type ChatCore } from './helpers';
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
