/**
 * The stdio transport and discovery against real fixture server processes: pagination, calls,
 * progress, secrets injected at connect time, stderr capture, and process-tree cleanup.
 */
import { describe, expect, it } from 'vitest';
import { secretKey, envSecretName } from '../../../shared/domain/servers';
import type { CallProgress } from '../../../electron/core/mcp/tool-call';
import { CallNotSentError, outcomeOf, ToolCallFailedError } from '../../../electron/core/gate/call-outcome';
import { firstText, isAlive, makeManager, stdioFixture, waitUntil, trackManagers } from './helpers';

const track = trackManagers();

describe('stdio connections', () => {
  it('discovery follows nextCursor until every page of tools/list is read', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated', [{ name: 'FIXTURE_TOOL_COUNT', value: '9' }])]));
    const status = await manager.connect('paged', 'default');
    expect(status.state).toBe('connected');
    const names = manager.listTools({ serverId: 'paged' }).map((t) => t.name);
    // 4 fixed tools + 9 extra, served 3 per page: a client that stopped at page one would see 3.
    expect(names).toHaveLength(13);
    expect(names).toContain('tool_8');
    expect(new Set(names).size).toBe(13);
  });

  it('a call returns the server answer and forwards each progress notification', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await manager.connect('paged', 'default');
    const echo = await manager.call({ serverId: 'paged', accountId: 'default', toolName: 'echo' }, { message: 'hi' }, { signal: new AbortController().signal, operationId: 'op-1' });
    expect(firstText(echo)).toBe('Echo: hi');

    const progress: Array<{ op: string; p: CallProgress }> = [];
    manager.on('progress', (op, _target, p) => progress.push({ op, p }));
    const counted = await manager.call({ serverId: 'paged', accountId: 'default', toolName: 'count_with_progress' }, { steps: 4 }, { signal: new AbortController().signal, operationId: 'op-2' });
    expect(firstText(counted)).toBe('counted to 4');
    expect(progress.map((e) => e.op)).toEqual(['op-2', 'op-2', 'op-2', 'op-2']);
    expect(progress.map((e) => e.p.progress)).toEqual([1, 2, 3, 4]);
    expect(progress[3]!.p).toMatchObject({ total: 4, message: 'step 4' });
  });

  it('progress is asked for only while someone listens, and concurrent calls each get their own', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await manager.connect('paged', 'default');
    // Watch what goes over the wire (the connection's transport is private; tests may look).
    const transport = (manager.connection('paged', 'default') as unknown as { transport: { send: (m: unknown, o?: unknown) => Promise<void> } }).transport;
    const sentMeta: unknown[] = [];
    const send = transport.send.bind(transport);
    transport.send = (m, o) => {
      const msg = m as { method?: string; params?: { _meta?: unknown } };
      if (msg.method === 'tools/call') sentMeta.push(msg.params?._meta);
      return send(m, o);
    };
    const target = { serverId: 'paged', accountId: 'default', toolName: 'count_with_progress' };
    const unheard = await manager.call(target, { steps: 2 }, { signal: new AbortController().signal, operationId: 'op-0' });
    expect(firstText(unheard)).toBe('counted to 2');
    expect(sentMeta).toEqual([undefined]);

    const seen: Array<{ op: string; progress: number; total?: number }> = [];
    manager.on('progress', (op, t, p) => {
      expect(t).toEqual(target);
      seen.push({ op, progress: p.progress, total: p.total });
    });
    const [a, b] = await Promise.all([
      manager.call(target, { steps: 3 }, { signal: new AbortController().signal, operationId: 'op-a' }),
      manager.call(target, { steps: 5 }, { signal: new AbortController().signal, operationId: 'op-b' }),
    ]);
    expect(firstText(a)).toBe('counted to 3');
    expect(firstText(b)).toBe('counted to 5');
    expect(sentMeta).toHaveLength(3);
    expect(sentMeta[1]).toMatchObject({ progressToken: expect.any(Number) });
    expect(sentMeta[2]).toMatchObject({ progressToken: expect.any(Number) });
    expect((sentMeta[1] as { progressToken: number }).progressToken).not.toBe((sentMeta[2] as { progressToken: number }).progressToken);
    expect(seen.filter((e) => e.op === 'op-a')).toEqual([1, 2, 3].map((progress) => ({ op: 'op-a', progress, total: 3 })));
    expect(seen.filter((e) => e.op === 'op-b')).toEqual([1, 2, 3, 4, 5].map((progress) => ({ op: 'op-b', progress, total: 5 })));
    expect(seen.some((e) => e.op === 'op-0')).toBe(false);
  });

  it('the registry hands out one frozen descriptor per discovered tool and rebuilds it when the account is renamed', async () => {
    const { manager, directory } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await manager.connect('paged', 'default');
    const first = manager.getTool('paged', 'default', 'echo')!;
    expect(first).toMatchObject({ serverId: 'paged', accountId: 'default', name: 'echo', accountLabel: 'Default', serverLabel: 'Fixture paginated' });
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { contractHash: string }).contractHash = 'forged';
    }).toThrow(TypeError);
    expect(manager.getTool('paged', 'default', 'echo')).toBe(first);
    expect(manager.listTools({ serverId: 'paged' }).find((t) => t.name === 'echo')).toBe(first);
    directory.accounts.get('paged')!.set('default', 'Work');
    const renamed = manager.getTool('paged', 'default', 'echo')!;
    expect(renamed.accountLabel).toBe('Work');
    expect(renamed.contractHash).toBe(first.contractHash);
  });

  it('secret env values are read from the SecretStore at connect time and reach only the server process', async () => {
    const def = stdioFixture('secretive', 'paginated', [
      { name: 'FIXTURE_SECRET_ENV', value: 'API_TOKEN' },
      { name: 'API_TOKEN', secret: true },
    ]);
    const { manager, secrets } = track(makeManager([def]));
    const token = 'tok-' + Math.random().toString(36).slice(2);
    await secrets.set(secretKey('secretive', 'default', envSecretName('API_TOKEN')), token);
    const status = await manager.connect('secretive', 'default');
    expect(status.state).toBe('connected');
    const result = await manager.call({ serverId: 'secretive', accountId: 'default', toolName: 'whoami_env' }, {}, { signal: new AbortController().signal, operationId: 'op' });
    expect(firstText(result)).toBe(token);
    expect(secrets.reads).toEqual([secretKey('secretive', 'default', 'env:API_TOKEN')]);
    // Nothing the UI can read carries the value, even though the server printed it to stderr.
    await waitUntil(() => manager.logLines('secretive', 'default').lines.some((l) => l.text === 'debug: token=[REDACTED]'), 10_000, 'the redacted stderr line');
    expect(JSON.stringify(manager.snapshot())).not.toContain(token);
    expect(JSON.stringify(manager.logLines('secretive', 'default'))).not.toContain(token);
    expect(JSON.stringify(manager.listTools())).not.toContain(token);
  });

  it('a missing secret leaves the connection in error naming the secret, and nothing is spawned', async () => {
    const def = stdioFixture('needs-secret', 'paginated', [{ name: 'API_TOKEN', secret: true }]);
    const { manager } = track(makeManager([def]));
    const status = await manager.connect('needs-secret', 'default');
    expect(status).toMatchObject({ state: 'error' });
    expect(status.state === 'error' && status.reason).toContain('env:API_TOKEN');
    expect(manager.connection('needs-secret', 'default')!.pid).toBeUndefined();
  });

  it('stderr is captured into the connection log', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await manager.connect('paged', 'default');
    const { lines } = await waitUntil(() => {
      const l = manager.logLines('paged', 'default');
      return l.lines.some((x) => x.source === 'stderr' && x.text === 'paginated fixture starting') ? l : undefined;
    }, 10_000, 'stderr line');
    expect(lines.some((l) => l.source === 'warden' && l.text.startsWith('connected over stdio'))).toBe(true);
  });

  it('disconnect kills the whole process tree, grandchildren included', async () => {
    const { manager } = track(makeManager([stdioFixture('tree', 'paginated', [{ name: 'FIXTURE_GRANDCHILD', value: '1' }])]));
    await manager.connect('tree', 'default');
    const pid = manager.connection('tree', 'default')!.pid!;
    const grandchild = Number(firstText(await manager.call({ serverId: 'tree', accountId: 'default', toolName: 'grandchild_pid' }, {}, { signal: new AbortController().signal, operationId: 'op' })));
    expect(grandchild).toBeGreaterThan(0);
    expect(isAlive(pid) && isAlive(grandchild)).toBe(true);
    await manager.disconnect('tree');
    expect(manager.connection('tree', 'default')!.status).toEqual({ state: 'disconnected' });
    await waitUntil(() => !isAlive(pid) && !isAlive(grandchild), 10_000, 'server and grandchild to exit');
  });

  it('a JSON-RPC error answer is a definite failure, and an isError result is the tool\'s own answer', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await manager.connect('paged', 'default');
    const target = { serverId: 'paged', accountId: 'default' };
    const rejected = manager.call({ ...target, toolName: 'unlisted_rpc_error' }, {}, { signal: new AbortController().signal, operationId: 'e' });
    await expect(rejected).rejects.toBeInstanceOf(ToolCallFailedError);
    await expect(rejected).rejects.toMatchObject({ callFailed: true, rpcCode: -32602 });
    expect(outcomeOf({ ok: false, error: await rejected.catch((e: unknown) => e) })).toBe('failed');
    const toolError = await manager.call({ ...target, toolName: 'no_such_tool' }, {}, { signal: new AbortController().signal, operationId: 't' });
    expect(toolError).toMatchObject({ isError: true });
    expect(firstText(toolError)).toBe('unknown tool no_such_tool');
  });

  it('a call on a connection that is not connected is reported as not sent', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await expect(
      manager.call({ serverId: 'paged', accountId: 'default', toolName: 'echo' }, { message: 'x' }, { signal: new AbortController().signal, operationId: 'op' }),
    ).rejects.toBeInstanceOf(CallNotSentError);
    await manager.connect('paged', 'default');
    await manager.disconnect('paged', 'default');
    await expect(
      manager.call({ serverId: 'paged', accountId: 'default', toolName: 'echo' }, { message: 'x' }, { signal: new AbortController().signal, operationId: 'op' }),
    ).rejects.toMatchObject({ notSent: true });
  });

  it('a command that does not exist ends in error with a clear reason', async () => {
    const { manager } = track(makeManager([{ id: 'nope', name: 'Nope', transport: 'stdio', command: '/nonexistent/warden-no-such-server', args: [], env: [] }]));
    const status = await manager.connect('nope', 'default');
    expect(status.state).toBe('error');
    expect(status.state === 'error' && status.reason).toContain('command not found: /nonexistent/warden-no-such-server');
  });

  it('an unknown server or account is refused with NOT_FOUND naming the field', async () => {
    const { manager } = track(makeManager([stdioFixture('paged', 'paginated')]));
    await expect(manager.connect('missing', 'default')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('serverId') });
    await expect(manager.connect('paged', 'personal')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('accountId') });
  });
});
