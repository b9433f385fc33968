/**
 * Stand-in for the Electron preload, for the browser test host (test code only, never shipped).
 *
 * Runs as a classic script before the app's module script and defines `window.warden` with the
 * very same `createWardenApi` the real preload uses, so both expose exactly the contract's names.
 * Calls travel over a WebSocket to the test host, which dispatches them to the real core.
 * The host wraps this bundle in a closure that defines `__WARDEN_TEST_HOST__` (socket URL and
 * token), so neither appears in the page URL or as a page global.
 */
// Must stay the first import: it configures zod before shared/ipc.ts builds the contract's schemas.
import './zod-jitless';
import { createWardenApi, type EventName, type Invoker, type Subscriber } from '../../shared/ipc';
import { fail, type Result } from '../../shared/result';
import { SUBPROTOCOL, TOKEN_PROTOCOL_PREFIX, type StandinConfig } from './wire';

declare const __WARDEN_TEST_HOST__: StandinConfig;

const config = __WARDEN_TEST_HOST__;
const socket = new WebSocket(config.socketUrl, [SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${config.token}`]);
const pending = new Map<number, (result: Result<unknown>) => void>();
const listeners = new Map<EventName, Set<(payload: unknown) => void>>();
let nextId = 1;

// Resolves true once the socket is open, false if it closed before opening.
const opened = new Promise<boolean>((resolve) => {
  socket.addEventListener('open', () => resolve(true));
  socket.addEventListener('close', () => resolve(false));
});

socket.addEventListener('close', (event) => {
  const why = `The test host socket closed (code ${event.code}${event.reason ? `: ${event.reason}` : ''})`;
  for (const resolve of pending.values()) resolve(fail('NOT_CONNECTED', why));
  pending.clear();
  console.warn(`[warden stand-in] ${why}`);
});

socket.addEventListener('message', (event) => {
  let message: unknown;
  try {
    message = JSON.parse(String(event.data));
  } catch {
    console.warn('[warden stand-in] ignored a message that is not JSON');
    return;
  }
  if (!message || typeof message !== 'object') return;
  const m = message as Record<string, unknown>;
  if (typeof m.id === 'number' && pending.has(m.id)) {
    const resolve = pending.get(m.id)!;
    pending.delete(m.id);
    resolve(m.result as Result<unknown>);
    return;
  }
  if (typeof m.event === 'string') {
    for (const listener of [...(listeners.get(m.event as EventName) ?? [])]) {
      try {
        listener(m.payload);
      } catch (error) {
        // A throwing listener must not stop the others; surface it like an uncaught error.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
});

const invoke: Invoker = async (channel, request) => {
  if (!(await opened) || socket.readyState !== WebSocket.OPEN) {
    return fail('NOT_CONNECTED', 'The test host socket is not open');
  }
  const id = nextId++;
  let text: string;
  try {
    text = JSON.stringify({ id, channel, request });
  } catch (error) {
    return fail('INVALID_REQUEST', `${channel}: request cannot be serialized: ${error instanceof Error ? error.message : String(error)}`);
  }
  return new Promise<Result<unknown>>((resolve) => {
    pending.set(id, resolve);
    socket.send(text);
  });
};

const subscribe: Subscriber = (event, listener) => {
  let set = listeners.get(event);
  if (!set) listeners.set(event, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
  };
};

function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(value);
}

// Like contextBridge.exposeInMainWorld: a read-only, non-configurable property the page cannot swap.
Object.defineProperty(globalThis, 'warden', {
  value: deepFreeze(createWardenApi(invoke, subscribe)),
  enumerable: true,
  writable: false,
  configurable: false,
});
