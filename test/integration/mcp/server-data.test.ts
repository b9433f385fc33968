/**
 * Resources, resource templates, subscriptions, prompts, completions and log messages of
 * @modelcontextprotocol/server-everything, over stdio and over Streamable HTTP, through the
 * assembled core's channels (as the window calls them): listed page by page, read and journaled
 * with the URI, refused for a server the person set to Disabled, prompts filled in with their
 * messages marked as the server's, suggestions for arguments, and log messages in the log panel.
 */
import { resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { dispatch } from '../../../electron/core/dispatch';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ChannelName, ResponseOf } from '../../../shared/ipc';
import type { ServerView } from '../../../shared/domain/servers';
import { freePort, ROOT, startHttpProcess, waitUntil, type StartedHttpServer } from './helpers';

const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

let http: StartedHttpServer | undefined;
afterAll(async () => {
  await http?.stop();
});

async function everythingOverHttp(): Promise<string> {
  for (let attempt = 0; !http; attempt++) {
    const port = await freePort();
    try {
      http = await startHttpProcess(process.execPath, [EVERYTHING, 'streamableHttp'], {
        env: { PORT: String(port) },
        urlFrom: (_out, err) => (err.includes(`listening on port ${port}`) ? `http://127.0.0.1:${port}/mcp` : undefined),
      });
    } catch (error) {
      if (attempt >= 3) throw error; // the port was taken between probing and listening
    }
  }
  return http.url;
}

interface Started {
  core: WardenCore;
  journal: MemoryJournal;
  serverId: string;
  accountId: string;
  call: <C extends ChannelName>(channel: C, request: unknown) => Promise<ResponseOf<C>>;
  fail: (channel: ChannelName, request: unknown) => Promise<{ code: string; message: string }>;
  events: Array<{ event: string; payload: unknown }>;
}

async function start(transport: 'stdio' | 'http'): Promise<Started> {
  const journal = new MemoryJournal(systemClock);
  const core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', journal, gate: { prompter: { prompt: async () => 'approve' } }, connections: { reconnect: { maxAttempts: 0 } } });
  cleanups.push(() => core.close());
  const events: Started['events'] = [];
  core.events.subscribe((event, payload) => void events.push({ event, payload }));
  const call = async <C extends ChannelName>(channel: C, request: unknown): Promise<ResponseOf<C>> => {
    const r = await dispatch(core.handlers, channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as ResponseOf<C>;
  };
  const fail = async (channel: ChannelName, request: unknown) => {
    const r = await dispatch(core.handlers, channel, request);
    if (r.ok) throw new Error(`${channel} succeeded: ${JSON.stringify(r.value).slice(0, 200)}`);
    return r.error;
  };
  const definition =
    transport === 'stdio'
      ? { name: 'Everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] }
      : { name: 'Everything', transport: 'http', url: await everythingOverHttp(), headers: [], auth: { kind: 'none' } };
  const added = await call('servers:add', { definition });
  const view = added as unknown as ServerView;
  const serverId = view.definition.id;
  const accountId = view.accounts[0]!.id;
  const status = await call('connections:connect', { serverId, accountId });
  expect(status.status.state).toBe('connected');
  return { core, journal, serverId, accountId, call, fail, events };
}

describe.each(['stdio', 'http'] as const)('server-everything over %s', (transport) => {
  it('lists resources page by page and templates, reads text and binary resources, and journals every read with its URI', { timeout: 90_000 }, async () => {
    const { call, journal, serverId, accountId } = await start(transport);
    const features = await call('connections:features', { serverId, accountId });
    expect(features).toMatchObject({ resources: true, subscribe: true, prompts: true, completions: true, logging: true, logLevel: 'info' });

    const first = await call('resources:list', { serverId, accountId });
    expect(first.resources.length).toBeGreaterThan(0);
    const all = [...first.resources];
    for (let cursor = first.nextCursor; cursor !== null; ) {
      const page = await call('resources:list', { serverId, accountId, cursor });
      all.push(...page.resources);
      cursor = page.nextCursor;
    }
    expect(all.some((r) => r.uri.startsWith('demo://resource/static/document/'))).toBe(true);

    const templates = await call('resources:templates', { serverId, accountId });
    const textTemplate = templates.templates.find((t) => t.uriTemplate.includes('/dynamic/text/'));
    expect(textTemplate?.variables).toEqual(['resourceId']);

    // The template's variable gets the server's suggestions, and the filled-in URI reads.
    const suggested = await call('completions:complete', { serverId, accountId, ref: { type: 'resource-template', uriTemplate: textTemplate!.uriTemplate }, argument: { name: 'resourceId', value: '3' } });
    expect(suggested.values).toEqual(['3']);

    const doc = all.find((r) => r.uri.startsWith('demo://resource/static/document/'))!;
    const read = await call('resources:read', { serverId, accountId, uri: doc.uri });
    expect(read.serverLabel).toBe('Everything');
    expect(read.contents[0]!.text?.length).toBeGreaterThan(10);
    expect(read.attachmentId).toMatch(/^[0-9a-f-]{36}$/);

    const blob = await call('resources:read', { serverId, accountId, uri: 'demo://resource/dynamic/blob/1' });
    expect(blob.contents[0]).toMatchObject({ text: null });
    expect(blob.contents[0]!.binaryBytes).toBeGreaterThan(0);

    const reads = journal.read().filter((r) => r.type === 'server.data-read').map((r) => r.payload);
    expect(reads).toEqual([
      expect.objectContaining({ kind: 'resource', serverId, accountId, target: doc.uri, outcome: 'read', source: 'user' }),
      expect.objectContaining({ kind: 'resource', target: 'demo://resource/dynamic/blob/1', outcome: 'read' }),
    ]);
  });

  it('a server set to Disabled is not read, and the refusal is journaled', { timeout: 60_000 }, async () => {
    const { call, fail, journal, serverId, accountId } = await start(transport);
    await call('permissions:set', { scope: 'server', serverId, accountId, mode: 'disabled' });
    const error = await fail('resources:read', { serverId, accountId, uri: 'demo://resource/dynamic/text/1' });
    expect(error.code).toBe('DENIED');
    expect(error.message).toMatch(/Everything to Disabled/);
    expect((await fail('prompts:get', { serverId, accountId, name: 'simple-prompt' })).code).toBe('DENIED');
    const reads = journal.read().filter((r) => r.type === 'server.data-read').map((r) => r.payload);
    expect(reads).toEqual([expect.objectContaining({ kind: 'resource', outcome: 'refused' }), expect.objectContaining({ kind: 'prompt', outcome: 'refused' })]);
  });

  it('subscribes to a resource and announces its updates', { timeout: 60_000 }, async () => {
    const { call, events, serverId, accountId } = await start(transport);
    const uri = 'demo://resource/dynamic/text/1';
    expect(await call('resources:subscribe', { serverId, accountId, uri })).toEqual({ subscribed: true });
    await runTool(call, serverId, accountId, 'toggle-subscriber-updates');
    const updated = await waitUntil(() => events.find((e) => e.event === 'resources:updated'), 20_000, 'a resources:updated event');
    expect(updated.payload).toEqual({ serverId, accountId, uri, displayUri: uri });
    expect(await call('resources:unsubscribe', { serverId, accountId, uri })).toEqual({ subscribed: false });
  });

  it('gets prompts with arguments, every message marked with the role the server gave it, and suggests argument values', { timeout: 60_000 }, async () => {
    const { call, journal, serverId, accountId } = await start(transport);
    const listed = await call('prompts:list', { serverId, accountId });
    const args = listed.prompts.find((p) => p.name === 'args-prompt');
    expect(args?.arguments).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'city', required: true })]));
    const got = await call('prompts:get', { serverId, accountId, name: 'args-prompt', arguments: { city: 'Lisbon' } });
    expect(got.messages[0]).toMatchObject({ serverRole: 'user', kind: 'text' });
    expect(got.messages[0]!.text).toContain('Lisbon');
    expect(journal.read().filter((r) => r.type === 'server.data-read').map((r) => r.payload)).toEqual([
      expect.objectContaining({ kind: 'prompt', target: 'args-prompt', outcome: 'read' }),
    ]);

    const departments = await call('completions:complete', { serverId, accountId, ref: { type: 'prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'S' } });
    expect(departments.values).toEqual(['Sales', 'Support']);
    const names = await call('completions:complete', {
      serverId,
      accountId,
      ref: { type: 'prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { department: 'Engineering' },
    });
    expect(names.values).toEqual(['Alice', 'Bob', 'Charlie']);
  });

  it('sets the log level and shows the server\'s log messages in its log panel', { timeout: 60_000 }, async () => {
    const { call, serverId, accountId } = await start(transport);
    expect(await call('logging:set-level', { serverId, accountId, level: 'debug' })).toEqual({ level: 'debug', applied: true });
    await runTool(call, serverId, accountId, 'toggle-simulated-logging');
    const line = await waitUntil(async () => (await call('connections:logs', { serverId, accountId })).lines.find((l) => l.source === 'server'), 20_000, 'a server log line');
    expect(line.text).toMatch(/^(debug|info|notice|warning|error|critical|alert|emergency): .*-level message|level-message/);
  });
});

/** Runs one tool of the server by hand (Run…), set to Always Allow first (confirmed by the test's dialog). */
async function runTool(call: Started['call'], serverId: string, accountId: string, toolName: string): Promise<void> {
  await call('permissions:set', { scope: 'tool', serverId, accountId, toolName, mode: 'allow' });
  const op = await call('tools:run', { serverId, accountId, toolName, arguments: {} });
  await waitUntil(async () => ['succeeded', 'failed', 'outcome_unknown', 'denied'].includes((await call('operations:get', { operationId: op.operationId })).state), 20_000, `${toolName} to finish`);
}
