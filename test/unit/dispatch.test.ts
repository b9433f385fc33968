import { describe, expect, it, vi, type Mock } from 'vitest';
import { describeIssues, dispatch, type Handlers } from '../../electron/core/dispatch';
import { channelNames } from '../../shared/ipc';
import { WardenError } from '../../shared/result';

const status = {
  version: '1.0.0',
  startedAt: '2026-01-01T00:00:00.000Z',
  platform: 'linux',
  journal: { kind: 'memory', records: 0 },
  servers: { configured: 0, connected: 0 },
  pendingApprovals: 0,
  safeMode: false,
};

function handlers(overrides: Record<string, (req: never) => unknown> = {}): Handlers & Record<string, Mock> {
  const all: Record<string, Mock> = {};
  for (const channel of channelNames) all[channel] = vi.fn(() => ({}));
  all['core:status'] = vi.fn(() => status);
  all['core:ping'] = vi.fn(({ nonce }: { nonce: string }) => ({ nonce, receivedAt: '2026-01-01T00:00:00.000Z' }));
  for (const [k, f] of Object.entries(overrides)) all[k] = vi.fn(f);
  return all as unknown as Handlers & Record<string, Mock>;
}

describe('dispatch', () => {
  it('runs the handler with the parsed request and wraps its value', async () => {
    const h = handlers();
    expect(await dispatch(h, 'core:ping', { nonce: 'n' })).toEqual({
      ok: true,
      value: { nonce: 'n', receivedAt: '2026-01-01T00:00:00.000Z' },
    });
    expect(h['core:ping']).toHaveBeenCalledWith({ nonce: 'n' });
  });

  it.each([42, null, undefined, 'core:nope', 'hasOwnProperty', '__proto__'])('an unknown channel %j never reaches a handler', async (channel) => {
    const h = handlers();
    expect(await dispatch(h, channel, {})).toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } });
    for (const c of channelNames) expect(h[c]).not.toHaveBeenCalled();
  });

  it('an invalid request never reaches the handler and the error names the field', async () => {
    const h = handlers();
    const result = await dispatch(h, 'core:ping', { nonce: 7 });
    expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST', message: expect.stringMatching(/^core:ping: nonce: /) } });
    expect(h['core:ping']).not.toHaveBeenCalled();
  });

  it('a handler cannot leak fields the contract does not declare', async () => {
    const h = handlers({ 'core:status': () => ({ ...status, secretToken: 'sk-should-not-cross' }) });
    const result = await dispatch(h, 'core:status', {});
    expect(result.ok).toBe(true);
    expect(JSON.stringify(result)).not.toContain('sk-should-not-cross');
  });

  it('a response outside the contract becomes INVALID_RESPONSE and is logged, not sent', async () => {
    const log = vi.fn();
    const h = handlers({ 'core:status': () => ({ version: 3 }) });
    const result = await dispatch(h, 'core:status', {}, log);
    expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_RESPONSE' } });
    expect(log).toHaveBeenCalledTimes(1);
  });

  it('a WardenError keeps its code and message; anything else is INTERNAL and logged', async () => {
    const log = vi.fn();
    const denied = handlers({
      'core:ping': () => {
        throw new WardenError('DENIED', 'Disabled by organization policy');
      },
    });
    expect(await dispatch(denied, 'core:ping', { nonce: 'x' }, log)).toEqual({
      ok: false,
      error: { code: 'DENIED', message: 'Disabled by organization policy' },
    });
    expect(log).not.toHaveBeenCalled();
    const broken = handlers({
      'core:ping': async () => {
        throw new Error('disk on fire');
      },
    });
    expect(await dispatch(broken, 'core:ping', { nonce: 'x' }, log)).toMatchObject({
      ok: false,
      error: { code: 'INTERNAL', message: expect.stringContaining('disk on fire') },
    });
    expect(log).toHaveBeenCalledTimes(1);
  });

  it('describeIssues names each failing field and caps the list', () => {
    const issues = Array.from({ length: 8 }, (_, i) => ({ path: ['servers', i, 'command'], message: 'expected string' }));
    const text = describeIssues(issues);
    expect(text.split('; ')).toHaveLength(5);
    expect(text.startsWith('servers.0.command: expected string')).toBe(true);
    expect(describeIssues([{ path: [], message: 'expected object' }])).toBe('(request): expected object');
  });
});
