import { beforeAll, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../helpers/electron-mock').then((m) => m.electronModule));

import { channelNames, eventNames, eventWireChannel, expectedApiPaths } from '../../shared/ipc';
import { channelPath, eventPath } from '../../shared/contract-kit';
import { electronMock } from '../helpers/electron-mock';

type Api = Record<string, Record<string, (...args: unknown[]) => unknown>>;
let warden: Api;

beforeAll(async () => {
  await import('../../electron/preload/index');
  warden = electronMock.state.exposed.get('warden') as Api;
});

/** Every leaf of the exposed object as a dotted path, with its type. */
function leaves(value: unknown, prefix = ''): Array<[path: string, type: string]> {
  if (value === null || typeof value !== 'object') return [[prefix, typeof value]];
  return Object.keys(value).flatMap((key) => leaves((value as Record<string, unknown>)[key], prefix ? `${prefix}.${key}` : key));
}

describe('the preload', () => {
  it('exposes one object, window.warden, and nothing else', () => {
    expect(electronMock.contextBridge.exposeInMainWorld).toHaveBeenCalledTimes(1);
    expect([...electronMock.state.exposed.keys()]).toEqual(['warden']);
  });

  it("exposes exactly the contract's function paths", () => {
    const all = leaves(warden);
    expect(all.every(([, type]) => type === 'function')).toBe(true);
    expect(all.map(([path]) => path).sort()).toEqual(expectedApiPaths());
  });

  it('exposes no generic invoke/send/on and no ipcRenderer at the top level or anywhere below', () => {
    const forbidden = ['invoke', 'send', 'sendSync', 'on', 'once', 'ipcRenderer', 'removeListener', 'postMessage'];
    for (const name of forbidden) expect(Object.keys(warden)).not.toContain(name);
    for (const [path] of leaves(warden)) {
      const last = path.split('.').pop()!;
      expect(forbidden, path).not.toContain(last);
    }
    expect(JSON.stringify(Object.keys(warden))).not.toMatch(/ipc/i);
  });

  it('calls ipcRenderer.invoke with the right channel and request for every contract method', async () => {
    for (const channel of channelNames) {
      electronMock.ipcRenderer.invoke.mockClear();
      electronMock.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: { from: channel } });
      const [domain, method] = channelPath(channel);
      const request = { probe: channel };
      const result = await warden[domain]![method]!(request);
      expect(electronMock.ipcRenderer.invoke).toHaveBeenCalledExactlyOnceWith(channel, request);
      expect(result).toEqual({ ok: true, value: { from: channel } });
    }
  });

  it('sends core:ping to main with its nonce', async () => {
    electronMock.ipcRenderer.invoke.mockClear();
    await warden.core!.ping!({ nonce: 'n-1' });
    expect(electronMock.ipcRenderer.invoke).toHaveBeenCalledExactlyOnceWith('core:ping', { nonce: 'n-1' });
  });

  it('delivers only the payload to an event listener, never the IpcRendererEvent', () => {
    for (const event of eventNames) {
      const [domain, method] = eventPath(event);
      const listener = vi.fn();
      const unsubscribe = warden[domain]![method]!(listener) as () => void;
      const payload = { version: '1', marker: event };
      electronMock.ipcRenderer.emitFromMain(eventWireChannel(event), payload);
      expect(listener).toHaveBeenCalledTimes(1);
      expect(listener.mock.calls[0]).toEqual([payload]);
      unsubscribe();
    }
  });

  it('unsubscribing removes exactly the listener it added', () => {
    const event = eventNames[0]!;
    const [domain, method] = eventPath(event);
    const wire = eventWireChannel(event);
    const before = electronMock.ipcRenderer.listenerCount(wire);
    const listener = vi.fn();
    const unsubscribe = warden[domain]![method]!(listener) as () => void;
    const added = electronMock.ipcRenderer.on.mock.calls.at(-1)!;
    expect(added[0]).toBe(wire);
    expect(electronMock.ipcRenderer.listenerCount(wire)).toBe(before + 1);
    unsubscribe();
    expect(electronMock.ipcRenderer.removeListener).toHaveBeenLastCalledWith(wire, added[1]);
    expect(electronMock.ipcRenderer.listenerCount(wire)).toBe(before);
    electronMock.ipcRenderer.emitFromMain(wire, {});
    expect(listener).not.toHaveBeenCalled();
  });

  it('refuses a listener that is not a function', () => {
    const [domain, method] = eventPath(eventNames[0]!);
    expect(() => warden[domain]![method]!('not a function')).toThrow(TypeError);
  });
});
