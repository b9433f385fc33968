/**
 * The preload: exposes exactly the contract as `window.warden` and nothing else.
 *
 * Built to CommonJS (out/preload/index.cjs) because sandboxed preloads cannot be ES modules.
 * `window.warden` is generated from shared/ipc.ts: one named function per channel and per event.
 * There is no generic `invoke(channel)`, no `send`, and `ipcRenderer` itself never crosses the
 * bridge; event listeners receive only the payload, never the IpcRendererEvent (whose `sender`
 * would hand the page an ipcRenderer).
 */
// First: zod must be jitless before any schema exists (the page's CSP forbids eval).
import '../../shared/zod-jitless';
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { createWardenApi, eventWireChannel, type Invoker, type Subscriber } from '../../shared/ipc';
import type { Result } from '../../shared/result';

const invoke: Invoker = (channel, request) => ipcRenderer.invoke(channel, request) as Promise<Result<unknown>>;

const subscribe: Subscriber = (event, listener) => {
  const wireChannel = eventWireChannel(event);
  const wrapper = (_event: IpcRendererEvent, payload: unknown) => listener(payload);
  ipcRenderer.on(wireChannel, wrapper);
  return () => {
    ipcRenderer.removeListener(wireChannel, wrapper);
  };
};

contextBridge.exposeInMainWorld('warden', createWardenApi(invoke, subscribe));
