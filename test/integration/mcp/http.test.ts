/**
 * Remote transports against real loopback servers: Streamable HTTP, the automatic fallback to
 * legacy HTTP+SSE for an old server, and static headers whose secret values come from the
 * SecretStore at connect time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEARER_SECRET, headerSecretName, secretKey } from '../../../shared/domain/servers';
import type { ConnectionStatus } from '../../../electron/core/mcp/connection';
import type { ToolsChange } from '../../../electron/core/mcp/contract-diff';
import { firstText, httpDefinition, makeManager, startHttpFixture, waitUntil, type StartedHttpServer, trackManagers } from './helpers';

const track = trackManagers();
const signal = () => new AbortController().signal;

let paginated: StartedHttpServer;
let rugPull: StartedHttpServer;
let legacy: StartedHttpServer;
beforeAll(async () => {
  [paginated, rugPull, legacy] = await Promise.all([
    startHttpFixture('paginated', '--http'),
    startHttpFixture('rug-pull', '--http'),
    startHttpFixture('legacy-sse', '--sse'),
  ]);
});
afterAll(async () => {
  await Promise.all([paginated?.stop(), rugPull?.stop(), legacy?.stop()]);
});

describe('Streamable HTTP', () => {
  it('connects, lists every page and calls a tool with progress over Streamable HTTP', async () => {
    const { manager } = track(makeManager([httpDefinition('remote', paginated.url)]));
    const status = await manager.connect('remote', 'default');
    expect(status).toMatchObject({ state: 'connected', transport: 'streamable-http' });
    expect(manager.listTools({ serverId: 'remote' })).toHaveLength(11);
    const progress: number[] = [];
    manager.on('progress', (_op, _t, p) => progress.push(p.progress));
    const r = await manager.call({ serverId: 'remote', accountId: 'default', toolName: 'count_with_progress' }, { steps: 3 }, { signal: signal(), operationId: 'p' });
    expect(firstText(r)).toBe('counted to 3');
    expect(progress).toEqual([1, 2, 3]);
  });

  it('list_changed over Streamable HTTP triggers re-discovery and a contract change report', async () => {
    const { manager } = track(makeManager([httpDefinition('weather', rugPull.url)]));
    const changes: ToolsChange[] = [];
    manager.on('toolsChanged', (c) => changes.push(c));
    await manager.connect('weather', 'default');
    await manager.call({ serverId: 'weather', accountId: 'default', toolName: 'next_stage' }, {}, { signal: signal(), operationId: 's' });
    const change = await waitUntil(() => changes[1], 15_000, 'list_changed re-discovery');
    expect(change.changed[0]).toMatchObject({ name: 'get_weather', fields: ['description'] });
  });

  it('static headers carry secret values from the SecretStore, and the bearer token becomes Authorization', async () => {
    const def = httpDefinition('remote', paginated.url, {
      headers: [
        { name: 'X-Fixture-Token', secret: true },
        { name: 'X-Plain', value: 'plain' },
      ],
      auth: { kind: 'bearer' },
    });
    const { manager, secrets } = track(makeManager([def]));
    const token = 'hdr-' + Math.random().toString(36).slice(2);
    await secrets.set(secretKey('remote', 'default', headerSecretName('X-Fixture-Token')), token);
    await secrets.set(secretKey('remote', 'default', BEARER_SECRET), 'bearer-value');
    expect((await manager.connect('remote', 'default')).state).toBe('connected');
    await waitUntil(() => paginated.stderr().includes(`header x-fixture-token=${token}`), 10_000, 'header to reach the server');
    expect(JSON.stringify(manager.snapshot())).not.toContain(token);
    expect(JSON.stringify(manager.logLines('remote', 'default'))).not.toContain(token);
  });

  it('an unreachable server ends in error naming the origin', async () => {
    const { manager } = track(makeManager([httpDefinition('gone', 'http://127.0.0.1:9/mcp')]));
    const status = await manager.connect('gone', 'default');
    expect(status.state).toBe('error');
    expect(status.state === 'error' && status.reason).toContain('127.0.0.1:9');
  });

  it('an oauth server with no provider reports auth_required instead of error', async () => {
    const { manager } = track(makeManager([httpDefinition('secure', paginated.url, { auth: { kind: 'oauth' } })]));
    const status = await manager.connect('secure', 'default');
    expect(status.state).toBe('auth_required');
  });
});

describe('legacy HTTP+SSE fallback', () => {
  it('a server that answers the initialize POST with 4xx is reached over legacy SSE automatically', async () => {
    const { manager } = track(makeManager([httpDefinition('old', legacy.url)]));
    const status = await manager.connect('old', 'default');
    expect(status).toMatchObject({ state: 'connected', transport: 'sse' });
    const r = await manager.call({ serverId: 'old', accountId: 'default', toolName: 'echo' }, { message: 'hi' }, { signal: signal(), operationId: 'e' });
    expect(firstText(r)).toBe('sse echo: hi');
    expect(manager.logLines('old', 'default').lines.some((l) => /answered 405; falling back to legacy HTTP\+SSE/.test(l.text))).toBe(true);
  });
});

describe('remote server going away', () => {
  it('a call to a server that is gone is not sent, and the connection moves to error and reconnects with backoff', async () => {
    const doomed = await startHttpFixture('paginated', '--http');
    try {
      const { manager } = track(makeManager([httpDefinition('doomed', doomed.url)]));
      const statuses: ConnectionStatus[] = [];
      manager.on('status', (_s, _a, st) => statuses.push(st));
      expect((await manager.connect('doomed', 'default')).state).toBe('connected');
      await doomed.stop();
      await expect(
        manager.call({ serverId: 'doomed', accountId: 'default', toolName: 'echo' }, { message: 'x' }, { signal: signal(), operationId: 'gone' }),
      ).rejects.toMatchObject({ notSent: true, message: expect.stringMatching(/refused|not connected/) });
      const status = await waitUntil(() => statuses.find((s) => s.state === 'error'), 20_000, 'error status');
      expect(status).toMatchObject({ attempt: 1, retryInMs: 50 });
      expect(manager.getTool('doomed', 'default', 'echo')).toBeUndefined();
    } finally {
      await doomed.stop();
    }
  });
});
