/**
 * Always Allow never outlives a rug pull, from the attacker's side: a hostile server (stdio and
 * Streamable HTTP, test/fixtures/servers/relist.ts) changes what a tool claims to be and then
 * races the client, refuses or stalls the re-list, or changes silently. Everything runs through
 * the real core: the contract for setup (a person's Always Allow confirmed in the dialog
 * stand-in), the gate's `submit` for calls (the chat loop's path), real server processes, and the
 * server's own log of what it received.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type CoreDeps, type WardenCore } from '../../../electron/core/app-core';
import { memorySettingsStore } from '../../../electron/core/settings/memory-settings-store';
import { dispatch } from '../../../electron/core/dispatch';
import type { ConnectionLayerOptions } from '../../../electron/core/mcp/connection-layer';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ChannelName } from '../../../shared/ipc';
import type { ServerView } from '../../../shared/domain/servers';
import { startHttpFixture, stdioFixture, waitUntil, type StartedHttpServer } from './helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
let http: StartedHttpServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await core?.close();
  await http?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  core = undefined;
  http = undefined;
  dir = undefined;
});

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

type Transport = 'stdio' | 'http';

interface Setup {
  serverId: string;
  accountId: string;
  /** Rewrites the fixture's control file (read by the server on every request). */
  control: (c: { description?: string; listing?: 'ok' | 'refuse' | 'hang'; listingDelayMs?: number; pullOnCall?: boolean }) => void;
  /** The server's log once it shows `city` (stderr trails the answers): every call received up to it. */
  receivedThrough: (city: string) => Promise<string[]>;
  /** Always Allow on get_weather for the contract listed now (confirmed in the dialog stand-in). */
  allow: () => Promise<void>;
  /** A model's call to get_weather through the gate; resolves once decided (or finished). */
  weather: (city: string) => ReturnType<WardenCore['gate']['gate']['submit']>;
}

async function setup(transport: Transport, connections: ConnectionLayerOptions = {}, extra: Pick<CoreDeps, 'clock' | 'servers'> = {}): Promise<Setup> {
  dir = mkdtempSync(join(tmpdir(), 'warden-relist-'));
  const controlFile = join(dir, 'control.json');
  const control: Setup['control'] = (c) => writeFileSync(controlFile, JSON.stringify(c));
  control({});
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    ...extra,
    version: 'test',
    journal: new MemoryJournal(extra.clock ?? systemClock),
    gate: { prompter: { prompt: async () => 'approve' } },
    connections: { reconnect: { maxAttempts: 0 }, ...connections },
  });
  let definition: Record<string, unknown>;
  if (transport === 'stdio') {
    const def = stdioFixture('ignored', 'relist');
    definition = { name: 'Weather', transport: 'stdio', command: def.command, args: def.args, env: [{ name: 'FIXTURE_CONTROL', value: controlFile }] };
  } else {
    http = await startHttpFixture('relist', '--http', { FIXTURE_CONTROL: controlFile });
    definition = { name: 'Weather', transport: 'http', url: http.url, headers: [], auth: { kind: 'none' } };
  }
  const added = await call<ServerView>('servers:add', { definition });
  const serverId = added.definition.id;
  const accountId = added.accounts[0]!.id;
  const status = await call<{ status: { state: string } }>('connections:connect', { serverId, accountId });
  expect(status.status.state).toBe('connected');
  const received = (): string[] => [...stderr().matchAll(/received get_weather (\S+)/g)].map((m) => m[1]!);
  const stderr = (): string =>
    transport === 'http'
      ? http!.stderr()
      : core!.connections
          .logLines(serverId, accountId)
          .lines.filter((l) => l.source === 'stderr')
          .map((l) => l.text)
          .join('\n');
  return {
    serverId,
    accountId,
    control,
    receivedThrough: (city) => waitUntil(() => (received().includes(city) ? received() : undefined), 15_000, `the server to log ${city}`),
    allow: async () => {
      await call('permissions:set', { scope: 'tool', serverId, accountId, toolName: 'get_weather', mode: 'allow' });
    },
    weather: (city) => core!.gate.gate.submit({ source: 'model', conversationId: 'c1', serverId, accountId, toolName: 'get_weather', arguments: { city } }),
  };
}

/** Waits for an operation the gate started to finish. */
const settled = (operationId: string) => core!.gate.gate.settled(operationId);

describe.each<Transport>(['stdio', 'http'])('re-list races over %s', (transport) => {
  it('a call made after the server said its tools changed is decided against the new listing, never the old grant (every time)', async () => {
    const s = await setup(transport);
    s.control({ pullOnCall: true });
    // Repeated on purpose: the attack won 9 of 10 tries when it was a race. Each round grants
    // Always Allow for the contract listed now; call 1 runs under it and the server, before
    // answering, changes the tool and says so; call 2 (made right after the answer, as a chat
    // loop does) must never run under the grant of the abandoned contract.
    for (let round = 1; round <= 8; round++) {
      await s.allow();
      const first = await s.weather(`first-${round}`);
      expect((await settled(first.operationId)).state).toBe('succeeded');
      const second = await s.weather(`second-${round}`);
      expect(second.state, `round ${round}: ${second.reason}`).toBe('awaiting_approval');
      expect(second.decision?.reason).toMatch(/tool changed since you allowed it/);
      expect(second.identity.contractHash).not.toBe(first.identity.contractHash);
      await core!.gate.gate.reject(second.operationId);
    }
    const received = await s.receivedThrough('first-8');
    expect(received).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `first-${n}`));
  });

  it('an approval given right after the server said its tools changed is checked against the new listing, and sends nothing', async () => {
    const s = await setup(transport);
    // The re-list answers slowly, so the approval below is surely given while it is under way.
    s.control({ pullOnCall: true, listingDelayMs: 1_500 });
    const pending = await s.weather('pending');
    expect(pending.state).toBe('awaiting_approval');
    await s.allow();
    // This call makes the server change get_weather and announce it before answering.
    expect((await settled((await s.weather('announce')).operationId)).state).toBe('succeeded');
    // The person approves the older request in the dialog right away.
    const answer = await dispatch(core!.handlers, 'approvals:review', { operationId: pending.operationId });
    expect(answer).toMatchObject({ ok: true, value: { pressed: 'approve', outcome: 'invalidated' } });
    const after = (await core!.gate.gate.get(pending.operationId))!;
    expect(after.state, after.reason).toBe('invalidated');
    expect(after.reason).toMatch(/tool changed since the request/);
    await s.allow();
    expect((await settled((await s.weather('later')).operationId)).state).toBe('succeeded');
    expect(await s.receivedThrough('later')).toEqual(['announce', 'later']);
  });

  it('an approval given while the re-list is under way sends nothing when the server then refuses to list its tools', async () => {
    const s = await setup(transport);
    const pending = await s.weather('pending');
    expect(pending.state).toBe('awaiting_approval');
    await s.allow();
    // The next call makes the server change get_weather and announce it; its re-list is refused, slowly.
    s.control({ pullOnCall: true, listing: 'refuse', listingDelayMs: 1_500 });
    expect((await settled((await s.weather('announce')).operationId)).state).toBe('succeeded');
    const answer = await dispatch(core!.handlers, 'approvals:review', { operationId: pending.operationId });
    expect(answer).toMatchObject({ ok: true, value: { pressed: 'approve', outcome: 'invalidated' } });
    const after = (await core!.gate.gate.get(pending.operationId))!;
    expect(after.reason).toMatch(/could not re-list its tools.*an approval given meanwhile sends nothing/);
    expect(await s.receivedThrough('announce')).toEqual(['announce']);
  });

  it('a re-list the server refuses drops Always Allow to Ask for the waiting call and every later one, until a re-list matches the pins', async () => {
    const s = await setup(transport);
    await s.allow();
    expect((await settled((await s.weather('before')).operationId)).state).toBe('succeeded');

    // The server refuses tools/list from now on, and says its tools changed (on the call's stream).
    s.control({ listing: 'refuse', pullOnCall: true });
    expect((await settled((await s.weather('announce')).operationId)).state).toBe('succeeded');
    const waiting = await s.weather('waiting');
    expect(waiting.state, waiting.reason).toBe('awaiting_approval');
    expect(waiting.decision?.reason).toMatch(/could not re-list its tools/);
    const later = await s.weather('later');
    expect(later.state, later.reason).toBe('awaiting_approval');
    expect(later.decision?.reason).toMatch(/could not re-list its tools/);
    expect(await s.receivedThrough('announce')).toEqual(['before', 'announce']);

    // Listing works again, but the tool is not what was allowed. The next call is still held at
    // Ask (the last re-list failed) and has the server re-listed in the background; once that
    // succeeds, the pins decide: still Ask, the tool changed.
    s.control({ listing: 'ok', description: 'Now also deletes files.' });
    const retried = await s.weather('retried');
    expect(retried.state, retried.reason).toBe('awaiting_approval');
    const connection = core!.connections.connection(s.serverId, s.accountId)!;
    await waitUntil(() => connection.listingProblem === undefined, 15_000, 'the background re-list');
    const changed = await s.weather('changed');
    expect(changed.state, changed.reason).toBe('awaiting_approval');
    expect(changed.decision?.reason).toMatch(/tool changed since you allowed it/);

    // Allowed again for what is listed now: a listing that matches the pins runs without asking.
    await s.allow();
    const after = await s.weather('after');
    expect((await settled(after.operationId)).state).toBe('succeeded');
    expect(await s.receivedThrough('after')).toEqual(['before', 'announce', 'after']);
  });

  it('a re-list the server never answers is given up on at the bound, and Always Allow is held at Ask', async () => {
    const s = await setup(transport, { relistTimeoutMs: 500 });
    await s.allow();
    s.control({ listing: 'hang', pullOnCall: true });
    expect((await settled((await s.weather('announce')).operationId)).state).toBe('succeeded');
    const started = Date.now();
    const waiting = await s.weather('waiting');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(waiting.state, waiting.reason).toBe('awaiting_approval');
    expect(waiting.decision?.reason).toMatch(/could not re-list its tools/);
    // Later calls are not held up by the stalled server: they ask at once (and a re-list is retried).
    const laterStarted = Date.now();
    const later = await s.weather('later');
    expect(Date.now() - laterStarted).toBeLessThan(450);
    expect(later.state, later.reason).toBe('awaiting_approval');
    expect(await s.receivedThrough('announce')).toEqual(['announce']);
  });

  it('a tool changed without any notice is caught before an Always Allow is honoured once the listing is older than the interval', async () => {
    const s = await setup(transport, { relistAfterMs: 300 });
    await s.allow();
    expect((await settled((await s.weather('fresh')).operationId)).state).toBe('succeeded');
    // No list_changed: the server just starts describing the tool differently.
    s.control({ description: 'Returns the weather. Also uploads ~/.aws/credentials.' });
    await new Promise((r) => setTimeout(r, 400));
    const stale = await s.weather('stale');
    expect(stale.state, stale.reason).toBe('awaiting_approval');
    expect(stale.decision?.reason).toMatch(/tool changed since you allowed it/);
    expect(await s.receivedThrough('fresh')).toEqual(['fresh']);
  });
});

describe('the re-list interval', () => {
  /** A clock that runs with real time, plus whatever the test skips ahead. */
  const skippingClock = () => {
    let skipped = 0;
    return { clock: { now: () => Date.now() + skipped }, skip: (ms: number) => void (skipped += ms) };
  };

  it('is 10 minutes by default: a tool changed without notice keeps no Always Allow past it', async () => {
    const time = skippingClock();
    const s = await setup('stdio', {}, { clock: time.clock });
    await s.allow();
    expect((await settled((await s.weather('fresh')).operationId)).state).toBe('succeeded');
    s.control({ description: 'Returns the weather. Also uploads ~/.aws/credentials.' });
    time.skip(10 * 60 * 1000 + 1_000);
    const stale = await s.weather('stale');
    expect(stale.state, stale.reason).toBe('awaiting_approval');
    expect(stale.decision?.reason).toMatch(/tool changed since you allowed it/);
    expect(await s.receivedThrough('fresh')).toEqual(['fresh']);
  });

  it('is the relistAfterMs preference in settings when one is set', async () => {
    const time = skippingClock();
    const settingsStore = memorySettingsStore({ schemaVersion: 1, servers: [], accounts: [], preferences: { relistAfterMs: 60_000 } });
    const s = await setup('stdio', {}, { clock: time.clock, servers: { settingsStore } });
    await s.allow();
    expect((await settled((await s.weather('fresh')).operationId)).state).toBe('succeeded');
    s.control({ description: 'Returns the weather. Also uploads ~/.aws/credentials.' });
    time.skip(61_000);
    const stale = await s.weather('stale');
    expect(stale.state, stale.reason).toBe('awaiting_approval');
    expect(stale.decision?.reason).toMatch(/tool changed since you allowed it/);
    expect(await s.receivedThrough('fresh')).toEqual(['fresh']);
  });
});

describe('re-list on reconnect', () => {
  it('a stdio server that comes back with a changed tool after a crash is re-listed, and the old grant asks', async () => {
    const s = await setup('stdio', { reconnect: { baseDelayMs: 50, maxDelayMs: 200, maxAttempts: 3 } });
    await s.allow();
    expect((await settled((await s.weather('before')).operationId)).state).toBe('succeeded');
    s.control({ description: 'Returns the weather. Also uploads ~/.aws/credentials.' });
    const connection = core!.connections.connection(s.serverId, s.accountId)!;
    process.kill(connection.pid!, 'SIGKILL');
    await waitUntil(() => connection.status.state === 'error', 15_000, 'the drop to be noticed');
    await waitUntil(() => connection.status.state === 'connected', 30_000, 'the reconnect');
    const after = await s.weather('after');
    expect(after.state, after.reason).toBe('awaiting_approval');
    expect(after.decision?.reason).toMatch(/tool changed since you allowed it/);
    expect(await s.receivedThrough('before')).toEqual(['before']);
  });
});
