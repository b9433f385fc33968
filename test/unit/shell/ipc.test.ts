import { beforeEach, describe, expect, it, vi, type Mock } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import type { Handlers } from '../../../electron/core/dispatch';
import { bindContract, createSenderCheck, handleCall, type BindOptions } from '../../../electron/main/ipc';
import { channelNames } from '../../../shared/ipc';
import { WardenError, type Result } from '../../../shared/result';
import { electronMock, FakeFrame, FakeWebContents, resetElectronMock } from '../../helpers/electron-mock';

const ORIGIN = 'app://warden';

/** One spy per contract channel; only core:ping does real work, the rest must never be reached. */
function spiedHandlers(): Record<string, Mock> {
  const handlers: Record<string, Mock> = {};
  for (const channel of channelNames) handlers[channel] = vi.fn(() => ({}));
  handlers['core:ping'] = vi.fn(({ nonce }: { nonce: string }) => ({ nonce, receivedAt: new Date(0).toISOString() }));
  return handlers;
}

let ours: FakeWebContents;
let spies: Record<string, Mock>;
let handlers: Handlers;
let options: BindOptions;
let logError: Mock<(context: string, error: unknown) => void>;

function eventFrom(sender: FakeWebContents, frame: FakeFrame | null = sender.mainFrame): IpcMainInvokeEvent {
  return { sender, senderFrame: frame, frameId: 1, processId: 1 } as unknown as IpcMainInvokeEvent;
}

/** Calls a channel exactly as Electron would: through the listener registered with ipcMain.handle. */
async function invoke(channel: string, event: IpcMainInvokeEvent, request: unknown): Promise<Result<unknown>> {
  const listener = electronMock.state.ipcHandlers.get(channel);
  if (!listener) throw new Error(`no handler registered for ${channel}`);
  return (await listener(event, request)) as Result<unknown>;
}

function expectNoHandlerRan(): void {
  for (const channel of channelNames) expect(spies[channel], channel).not.toHaveBeenCalled();
}

beforeEach(() => {
  resetElectronMock();
  ours = new FakeWebContents('app://warden/index.html');
  spies = spiedHandlers();
  handlers = spies as unknown as Handlers;
  logError = vi.fn();
  options = { isTrustedSender: createSenderCheck(() => ours as unknown as WebContents, ORIGIN), logError };
  bindContract(electronMock.ipcMain as unknown as IpcMain, handlers, options);
});

describe('the IPC binder', () => {
  it('registers one ipcMain.handle per contract channel and nothing else', () => {
    const registered = electronMock.ipcMain.handle.mock.calls.map(([name]) => name);
    expect(registered).toEqual(channelNames);
    expect(new Set(registered).size).toBe(registered.length);
  });

  it('answers a valid call from our main frame with { ok: true, value }', async () => {
    const result = await invoke('core:ping', eventFrom(ours), { nonce: 'abc' });
    expect(result).toEqual({ ok: true, value: { nonce: 'abc', receivedAt: '1970-01-01T00:00:00.000Z' } });
    expect(spies['core:ping']).toHaveBeenCalledExactlyOnceWith({ nonce: 'abc' });
  });

  it('rejects a forged sender (another webContents on our origin) and never runs the handler', async () => {
    const other = new FakeWebContents('app://warden/index.html');
    const result = await invoke('core:ping', eventFrom(other), { nonce: 'abc' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it('rejects another webContents even when the event names our main frame (each check stands on its own)', async () => {
    const other = new FakeWebContents('app://warden/index.html');
    const result = await invoke('core:ping', eventFrom(other, ours.mainFrame), { nonce: 'abc' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it('rejects a frame that has a parent even if it carries the main frame ids', async () => {
    const lookalike = Object.assign(new FakeFrame('app://warden/index.html', ours.mainFrame), {
      processId: ours.mainFrame.processId,
      routingId: ours.mainFrame.routingId,
    });
    const result = await invoke('core:ping', eventFrom(ours, lookalike), { nonce: 'abc' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it('rejects a sub-frame of our own window, even on our origin', async () => {
    const iframe = new FakeFrame('app://warden/index.html', ours.mainFrame);
    const result = await invoke('core:ping', eventFrom(ours, iframe), { nonce: 'abc' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it('rejects a top-level frame that is not the window main frame', async () => {
    const stray = new FakeFrame('app://warden/index.html', null);
    const result = await invoke('core:ping', eventFrom(ours, stray), { nonce: 'abc' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it.each(['https://evil.example/', 'app://warden.evil/index.html', 'app://evil@warden/', 'file:///tmp/index.html', 'about:blank'])(
    'rejects our main frame once it is on a foreign origin: %s',
    async (url) => {
      ours.mainFrame.url = url;
      const result = await invoke('core:ping', eventFrom(ours), { nonce: 'abc' });
      expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
      expectNoHandlerRan();
    },
  );

  it('rejects a call whose frame is gone (senderFrame null) or whose window is destroyed', async () => {
    expect(await invoke('core:ping', eventFrom(ours, null), { nonce: 'a' })).toMatchObject({ error: { code: 'FORBIDDEN_SENDER' } });
    ours.destroyed = true;
    expect(await invoke('core:ping', eventFrom(ours), { nonce: 'a' })).toMatchObject({ error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it('checks the sender before the payload: a forged sender with a bad payload is FORBIDDEN_SENDER', async () => {
    const other = new FakeWebContents();
    const result = await invoke('core:ping', eventFrom(other), { nonce: 42 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it('fails closed when the sender check itself throws', async () => {
    const result = await handleCall(
      handlers,
      { isTrustedSender: () => { throw new Error('boom'); } },
      eventFrom(ours),
      'core:ping',
      { nonce: 'a' },
    );
    expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expectNoHandlerRan();
  });

  it.each([
    [{ nonce: 42 }, /nonce/],
    [{ nonce: '' }, /nonce/],
    [{ nonce: 'a', extra: true }, /extra|Unrecognized/i],
    [null, /\(request\)/],
    ['ping', /\(request\)/],
    [{ nonce: 'x'.repeat(201) }, /nonce/],
  ])('rejects an invalid payload %j with INVALID_REQUEST naming the field, without running the handler', async (payload, field) => {
    const result = await invoke('core:ping', eventFrom(ours), payload);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('INVALID_REQUEST');
    expect(result.error.message).toMatch(/^core:ping: /);
    expect(result.error.message).toMatch(field);
    expectNoHandlerRan();
  });

  it.each(['core:shutdown', 'approvals:approve', '__proto__', 'constructor', 'toString', ''])(
    'answers an undeclared channel %j with UNKNOWN_CHANNEL and never registers or runs it',
    async (channel) => {
      expect(electronMock.state.ipcHandlers.has(channel)).toBe(false);
      const result = await handleCall(handlers, options, eventFrom(ours), channel, {});
      expect(result).toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } });
      expectNoHandlerRan();
    },
  );

  it("turns a handler's WardenError into { ok: false, error: { code, message } }", async () => {
    spies['core:ping']!.mockImplementationOnce(() => {
      throw new WardenError('NOT_FOUND', 'no such thing');
    });
    const result = await invoke('core:ping', eventFrom(ours), { nonce: 'a' });
    expect(result).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'no such thing' } });
  });

  it('turns an unexpected error into INTERNAL and logs it with context', async () => {
    spies['core:ping']!.mockImplementationOnce(async () => {
      throw new TypeError('kaput');
    });
    const result = await invoke('core:ping', eventFrom(ours), { nonce: 'a' });
    expect(result).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    expect(logError).toHaveBeenCalledWith('handler core:ping failed', expect.any(TypeError));
  });

  it('the returned unbind removes every handler it registered', () => {
    resetElectronMock();
    const unbind = bindContract(electronMock.ipcMain as unknown as IpcMain, handlers, options);
    expect(electronMock.state.ipcHandlers.size).toBe(channelNames.length);
    unbind();
    expect(electronMock.state.ipcHandlers.size).toBe(0);
    expect(electronMock.ipcMain.removeHandler.mock.calls.map(([c]) => c)).toEqual(channelNames);
  });
});
