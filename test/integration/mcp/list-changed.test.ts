/**
 * A server whose resources and prompts change while connected (test/fixtures/servers/changing-lists.ts,
 * a real process over stdio and Streamable HTTP): its list_changed notices reach the window as
 * `resources:list-changed` and `prompts:list-changed`, and listing again through the contract shows
 * what it has now. And the log level a person chose for it is kept with the account across a
 * restart and sent again on connect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ServerView } from '../../../shared/domain/servers';
import type { ChannelName, ResponseOf } from '../../../shared/ipc';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { openConfSettingsStore } from '../../../electron/core/settings/conf-settings-store';
import { MapSecretStore, startHttpFixture, stdioFixture, waitUntil } from './helpers';

class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function start(transport: 'stdio' | 'http') {
  const core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', journal: new MemoryJournal(systemClock), gate: { prompter: { prompt: async () => 'approve' } }, connections: { reconnect: { maxAttempts: 0 } } });
  cleanups.push(() => core.close());
  const events: Array<{ event: string; payload: unknown }> = [];
  core.events.subscribe((event, payload) => void events.push({ event, payload }));
  const call = async <C extends ChannelName>(channel: C, request: unknown): Promise<ResponseOf<C>> => {
    const r = await dispatch(core.handlers, channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as ResponseOf<C>;
  };
  let definition: Record<string, unknown>;
  if (transport === 'http') {
    const http = await startHttpFixture('changing-lists', '--http');
    cleanups.push(() => http.stop());
    definition = { name: 'Notebook', transport: 'http', url: http.url };
  } else {
    const def = stdioFixture('ignored', 'changing-lists');
    definition = { name: 'Notebook', transport: 'stdio', command: def.command, args: def.args, env: [] };
  }
  const added = (await call('servers:add', { definition })) as unknown as ServerView;
  const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
  await call('connections:connect', key);
  return { call, events, key };
}

describe.each(['stdio', 'http'] as const)('resources and prompts that change, over %s', (transport) => {
  it('list_changed notices reach the window as events, and listing again shows the new items', { timeout: 60_000 }, async () => {
    const { call, events, key } = await start(transport);
    expect((await call('resources:list', key)).resources.map((r) => r.name)).toEqual(['first']);
    expect((await call('prompts:list', key)).prompts.map((p) => p.name)).toEqual(['first-prompt']);

    await call('permissions:set', { scope: 'tool', ...key, toolName: 'grow', mode: 'allow' });
    await call('tools:run', { ...key, toolName: 'grow', arguments: {} });
    const resourcesChanged = await waitUntil(() => events.find((e) => e.event === 'resources:list-changed'), 20_000, 'resources:list-changed');
    expect(resourcesChanged.payload).toEqual(key);
    const promptsChanged = await waitUntil(() => events.find((e) => e.event === 'prompts:list-changed'), 20_000, 'prompts:list-changed');
    expect(promptsChanged.payload).toEqual(key);

    expect((await call('resources:list', key)).resources.map((r) => r.name)).toEqual(['first', 'added-1']);
    expect((await call('prompts:list', key)).prompts.map((p) => p.name)).toEqual(['first-prompt', 'added-prompt-1']);
  });
});

describe('the log level a person chose', () => {
  it('is kept with the account: after a restart the server is asked for it again on connect (default info)', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-log-level-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const secrets = new ListableMapSecretStore();
    const boot = async () => {
      const core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', journal: new MemoryJournal(systemClock), servers: { settingsStore: openConfSettingsStore(dir), secrets }, gate: { prompter: { prompt: async () => 'approve' } }, connections: { reconnect: { maxAttempts: 0 } } });
      const call = async <C extends ChannelName>(channel: C, request: unknown): Promise<ResponseOf<C>> => {
        const r = await dispatch(core.handlers, channel, request);
        if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
        return r.value as ResponseOf<C>;
      };
      /** What the server itself was told last. */
      const serverLevel = async (key: { serverId: string; accountId: string }) => {
        const op = await core.gate.gate.request({ source: 'user', ...key, toolName: 'level', arguments: {} });
        return JSON.stringify(op.result);
      };
      return { core, call, serverLevel };
    };
    const def = stdioFixture('ignored', 'changing-lists');
    const first = await boot();
    const added = (await first.call('servers:add', { definition: { name: 'Notebook', transport: 'stdio', command: def.command, args: def.args, env: [] } })) as unknown as ServerView;
    const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await first.call('connections:connect', key);
    await first.call('permissions:set', { scope: 'tool', ...key, toolName: 'level', mode: 'allow' });
    expect((await first.call('connections:features', key)).logLevel).toBe('info');
    await waitUntil(async () => (await first.serverLevel(key)).includes('"info"'), 10_000, 'the default level to be sent');
    expect(await first.call('logging:set-level', { ...key, level: 'error' })).toEqual({ level: 'error', applied: true });
    expect(await first.serverLevel(key)).toContain('"error"');
    await first.core.close();

    const second = await boot();
    cleanups.push(() => second.core.close());
    await second.call('connections:connect', key);
    // The rules are not kept in this test (no policy file): allow the probe again.
    await second.call('permissions:set', { scope: 'tool', ...key, toolName: 'level', mode: 'allow' });
    expect((await second.call('connections:features', key)).logLevel).toBe('error');
    await waitUntil(async () => (await second.serverLevel(key)).includes('"error"'), 10_000, 'the kept level to be sent on connect');
  });
});
