/**
 * A message the person saw survives a real crash. A core process SIGKILLs itself at the instant
 * the window would be handed a chat message (test/fixtures/chat-kill-when-shown.ts) — the
 * person's own message, a tool call's card with its result, the model's answer shown as final —
 * and a new core opening the same folders shows that message as it was shown.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { ListableSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import type { ChatMessage, Conversation } from '../../../shared/contract/chat';
import { call } from './helpers';
import { ScriptedModel, withScripted } from './scripted-model';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');
const noSecrets: ListableSecretStore = { get: async () => null, set: async () => undefined, delete: async () => false, keys: async () => [] };

let dir = '';
let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the fixture until it kills itself; returns the message it was showing when it died. */
async function killWhenShown(killAt: string): Promise<{ conversationId: string; shown: ChatMessage }> {
  const child = spawn(process.execPath, ['--import', tsxLoader, path.join(root, 'test/fixtures/chat-kill-when-shown.ts')], {
    env: { ...process.env, WARDEN_DIR: dir, KILL_AT: killAt },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, s) => resolve(s)));
  clearTimeout(timer);
  const line = /^shown (\S+) (\S+) (.*)$/m.exec(out);
  if (!line) throw new Error(`the fixture never showed the ${killAt} message: ${out} ${err}`);
  expect(signal).toBe('SIGKILL');
  return { conversationId: line[1]!, shown: JSON.parse(line[3]!) as ChatMessage };
}

async function reopen(): Promise<WardenCore> {
  const service = await LedgerService.open({ dir: path.join(dir, 'ledger') });
  const model = new ScriptedModel(() => ({ text: 'unused' }));
  return createCore({
    version: 'chat-kill-restart',
    ledger: service,
    servers: { settingsStore: openConfSettingsStore(dir), secrets: noSecrets },
    connections: { reconnect: { maxAttempts: 0 } },
    chat: { dataDir: path.join(dir, 'conversations'), providers: withScripted(model) },
  });
}

describe('a chat message the person saw survives Warden being killed at that moment', () => {
  for (const [killAt, what] of [
    ['user', "the person's own message"],
    ['call', "a tool call's card with its result"],
    ['reply', "the model's answer shown as final"],
  ] as const) {
    it(`${what} is there after the restart, as it was shown`, { timeout: 120_000 }, async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'warden-chat-kill-'));
      const { conversationId, shown } = await killWhenShown(killAt);
      core = await reopen();
      const reopened = await call<Conversation>(core, 'chat:get', { conversationId });
      const found = reopened.messages.find((m) => m.id === shown.id);
      expect(found, `${what} was lost: ${JSON.stringify(reopened.messages.map((m) => [m.role, m.text]))}`).toBeDefined();
      expect(found!.text).toBe(shown.text);
      if (killAt === 'call') expect(found!.toolCalls.map((c) => [c.callId, c.status, c.resultText])).toEqual(shown.toolCalls.map((c) => [c.callId, c.status, c.resultText]));
      if (killAt === 'reply') expect(found!.streaming).toBe(false);
    });
  }
});
