/**
 * A model's tool call is running when Warden is really killed (SIGKILL of a core process, see
 * test/fixtures/chat-crash-while-calling.ts). A new core opens the same ledger, settings and
 * conversations: the conversation shows the call's recovered outcome (outcome unknown, settled in
 * Recovery, which lists it), the call is never sent again, and when the person writes next, the
 * model is told that the outcome is unknown — never the server's answer as if the call had run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { MODEL_TEXT } from '../../../electron/core/chat/call-results';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { ListableSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { Conversation } from '../../../shared/contract/chat';
import { killFixtureWhen } from '../../helpers/kill-fixture';
import { call, callsOf, until } from './helpers';
import { ScriptedModel, withScripted } from './scripted-model';

const noSecrets: ListableSecretStore = { get: async () => null, set: async () => undefined, delete: async () => false, keys: async () => [] };

let dir = '';
let core: WardenCore | undefined;
afterAll(async () => {
  await core?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the chat core until the model's call is running at the server, then SIGKILLs it (and the server's process group). */
async function crashWhileCalling(slowFile: string, callsFile: string): Promise<{ conversationId: string; operationId: string }> {
  const line = await killFixtureWhen({
    fixture: 'test/fixtures/chat-crash-while-calling.ts',
    env: { WARDEN_DIR: dir, SLOW_FILE: slowFile, CALLS_FILE: callsFile },
    ready: /running (\S+) (\S+) (\d+)/,
    what: "the model's call running at the server",
    timeoutMs: 90_000,
  });
  return { conversationId: line[1]!, operationId: line[2]! };
}

describe('a chat whose tool call was running when Warden was killed', () => {
  it('reopens with the call "outcome unknown" (listed in Recovery), never re-sends it, and the model is told the outcome is unknown, not a result', { timeout: 180_000 }, async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-crash-'));
    const callsFile = path.join(dir, 'calls.jsonl');
    const slowFile = path.join(dir, 'slow');
    writeFileSync(slowFile, 'send_invoice hangs while this file exists\n');
    const { conversationId, operationId } = await crashWhileCalling(slowFile, callsFile);
    // From now on the server would answer at once: anything re-sent would come back "sent".
    rmSync(slowFile);

    const model = new ScriptedModel(() => ({ text: 'I cannot tell whether the invoice went out; please check in Recovery.' }));
    const service = await LedgerService.open({ dir: path.join(dir, 'ledger') });
    core = createCore({
      version: 'chat-crash-restart',
      ledger: service,
      servers: { settingsStore: openConfSettingsStore(dir), secrets: noSecrets },
      gate: { prompter: { prompt: async () => 'approve' } },
      connections: { reconnect: { maxAttempts: 0 } },
      chat: { dataDir: path.join(dir, 'conversations'), providers: withScripted(model) },
    });
    const report = await core.recovered;
    expect(report?.outcomeUnknown).toEqual([operationId]);
    const server = core.servers.definitions()[0]!;
    const account = (await core.handlers['accounts:list']({ serverId: server.id })).accounts[0]!;
    expect((await core.connections.connect(server.id, account.id)).state).toBe('connected');

    // The conversation reopens with the recovered outcome, through the contract the Chat view reads.
    await until(async () => callsOf(await call<Conversation>(core!, 'chat:get', { conversationId }))[0]?.status === 'outcome_unknown', 'the call to show its recovered outcome');
    const reopened = await call<Conversation>(core, 'chat:get', { conversationId });
    const [shown] = callsOf(reopened);
    expect(shown).toMatchObject({ operationId, status: 'outcome_unknown', modelResult: MODEL_TEXT.outcomeUnknown, isError: true });
    expect(shown!.why).toMatch(/Warden stopped while this call was running|may or may not have/);
    expect(shown!.resultText ?? '').not.toMatch(/Invoice for 1200 EUR sent/);
    // Recovery has it, with its options (settle as happened / not happened, or retry as a new call).
    const { operations } = await call<{ operations: Array<{ operationId: string }> }>(core, 'recovery:list', {});
    expect(operations.map((o) => o.operationId)).toEqual([operationId]);

    // The person writes again: the model gets the unknown outcome for that call, not a result.
    await call(core, 'chat:send-message', { conversationId, text: 'Did the invoice go out?' });
    await until(() => core!.chat.get(conversationId).state === 'idle' && model.requests.length > 0, 'the reply');
    const results = model.requests[0]!.messages.flatMap((m) => (m.role === 'tool' ? m.results : []));
    expect(results.map((r) => r.callId)).toEqual(['toolu_invoice']);
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.content).toContain(MODEL_TEXT.outcomeUnknown);
    expect(JSON.stringify(model.requests)).not.toMatch(/Invoice for 1200 EUR sent/);
    // The server got the call once, before the kill; nothing was re-sent after the restart.
    expect(readFileSync(callsFile, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(existsSync(slowFile)).toBe(false);
  });
});
