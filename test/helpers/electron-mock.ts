/**
 * A stand-in for the `electron` module, for shell tests (Electron cannot run on these machines).
 *
 * Use with `vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule))`
 * and reach the same instance through `electronMock`. It records what the shell registers
 * (handlers, listeners, options) and lets a test fire the events Electron would fire. Only the
 * surface Warden's shell uses is modelled; `resetElectronMock()` clears recorded state between tests.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';

let nextId = 1;

/** A WebFrameMain double: url, parent, and the ids Electron identifies frames by. */
export class FakeFrame {
  readonly processId: number;
  readonly routingId: number;
  constructor(
    public url: string,
    public parent: FakeFrame | null = null,
  ) {
    this.processId = 1;
    this.routingId = nextId++;
  }
}

/** An Electron-style event whose `preventDefault` is observable. */
export class FakeEvent {
  defaultPrevented = false;
  constructor(readonly url?: string) {}
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

/** A WebContents double. */
export class FakeWebContents extends EventEmitter {
  readonly id = nextId++;
  mainFrame: FakeFrame;
  destroyed = false;
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  readonly send = vi.fn();
  readonly setWindowOpenHandler = vi.fn((handler: (details: { url: string }) => { action: string }) => {
    this.windowOpenHandler = handler;
  });
  readonly isDestroyed = vi.fn(() => this.destroyed);
  constructor(url = 'app://warden/index.html') {
    super();
    this.mainFrame = new FakeFrame(url);
  }
  /** Fires will-navigate the way Electron does (event carries the url; legacy url argument too). */
  navigate(url: string, event = 'will-navigate'): FakeEvent {
    const e = new FakeEvent(url);
    this.emit(event, e, url);
    return e;
  }
}

/** A Session double recording the handlers installed on it. */
export class FakeSession {
  permissionRequestHandler: ((...args: unknown[]) => void) | null = null;
  permissionCheckHandler: ((...args: unknown[]) => boolean) | null = null;
  devicePermissionHandler: ((...args: unknown[]) => boolean) | null = null;
  headersListener: ((details: unknown, callback: (response: unknown) => void) => void) | null = null;
  readonly setPermissionRequestHandler = vi.fn((h: (...args: unknown[]) => void) => {
    this.permissionRequestHandler = h;
  });
  readonly setPermissionCheckHandler = vi.fn((h: (...args: unknown[]) => boolean) => {
    this.permissionCheckHandler = h;
  });
  readonly setDevicePermissionHandler = vi.fn((h: (...args: unknown[]) => boolean) => {
    this.devicePermissionHandler = h;
  });
  readonly webRequest = {
    onHeadersReceived: vi.fn((listener: (details: unknown, callback: (response: unknown) => void) => void) => {
      this.headersListener = listener;
    }),
  };
}

/** The BrowserWindow double; every constructed window is kept in `electronMock.windows`. */
export class FakeBrowserWindow extends EventEmitter {
  readonly webContents: FakeWebContents;
  destroyed = false;
  minimized = false;
  readonly loadURL = vi.fn(async (_url: string) => undefined);
  readonly show = vi.fn();
  readonly focus = vi.fn();
  readonly restore = vi.fn(() => {
    this.minimized = false;
  });
  readonly isMinimized = vi.fn(() => this.minimized);
  readonly isDestroyed = vi.fn(() => this.destroyed);
  constructor(readonly options: Record<string, unknown>) {
    super();
    this.webContents = new FakeWebContents();
    state.windows.push(this);
    app.emit('web-contents-created', new FakeEvent(), this.webContents);
  }
}

class FakeApp extends EventEmitter {
  isPackaged = false;
  lockAcquired = true;
  readonly requestSingleInstanceLock = vi.fn(() => this.lockAcquired);
  readonly enableSandbox = vi.fn();
  readonly quit = vi.fn();
  readonly exit = vi.fn();
  readonly whenReady = vi.fn(async () => undefined);
  readonly getVersion = vi.fn(() => '0.0.0-test');
  /** A throwaway user-data folder per test process, so the shell's durable state is real files. */
  private userData: string | undefined;
  readonly getPath = vi.fn((name: string) => {
    if (name !== 'userData') return tmpdir();
    if (!this.userData) {
      const dir = mkdtempSync(join(tmpdir(), 'warden-userdata-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      this.userData = dir;
    }
    return this.userData;
  });
}

const state = {
  windows: [] as FakeBrowserWindow[],
  ipcHandlers: new Map<string, (event: unknown, ...args: unknown[]) => unknown>(),
  exposed: new Map<string, unknown>(),
  protocolHandlers: new Map<string, (request: Request) => Promise<Response>>(),
};

const app = new FakeApp();
const defaultSession = new FakeSession();
const ipcRendererEmitter = new EventEmitter();

const ipcMain = {
  handle: vi.fn((channel: string, listener: (event: unknown, ...args: unknown[]) => unknown) => {
    if (state.ipcHandlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    state.ipcHandlers.set(channel, listener);
  }),
  removeHandler: vi.fn((channel: string) => {
    state.ipcHandlers.delete(channel);
  }),
  /** electron-store registers a data listener for its renderer helper (which Warden never uses). */
  on: vi.fn(),
};

const ipcRenderer = {
  invoke: vi.fn(async (_channel: string, ..._args: unknown[]) => ({ ok: true, value: {} }) as unknown),
  on: vi.fn((channel: string, listener: (...args: unknown[]) => void) => {
    ipcRendererEmitter.on(channel, listener);
    return ipcRenderer;
  }),
  removeListener: vi.fn((channel: string, listener: (...args: unknown[]) => void) => {
    ipcRendererEmitter.removeListener(channel, listener);
    return ipcRenderer;
  }),
  send: vi.fn(),
  /** Test-only: delivers a message as main's webContents.send would, with a fake IpcRendererEvent. */
  emitFromMain(channel: string, payload: unknown): void {
    ipcRendererEmitter.emit(channel, { sender: ipcRenderer, senderId: 0, ports: [] }, payload);
  },
  listenerCount(channel: string): number {
    return ipcRendererEmitter.listenerCount(channel);
  },
};

/** The mocked module's exports. */
export const electronModule = {
  app,
  BrowserWindow: FakeBrowserWindow,
  ipcMain,
  ipcRenderer,
  session: { defaultSession },
  shell: { openExternal: vi.fn(async (_url: string) => undefined) },
  dialog: {
    showMessageBox: vi.fn(async (..._args: unknown[]) => ({ response: 0, checkboxChecked: false })),
  },
  protocol: {
    registerSchemesAsPrivileged: vi.fn(),
    handle: vi.fn((scheme: string, handler: (request: Request) => Promise<Response>) => {
      state.protocolHandlers.set(scheme, handler);
    }),
  },
  contextBridge: {
    exposeInMainWorld: vi.fn((key: string, api: unknown) => {
      state.exposed.set(key, api);
    }),
  },
};
// electron-store does `import electron from 'electron'`: the default export is the same module.
(electronModule as Record<string, unknown>).default = electronModule;

/** The same instance the mocked module hands out, plus what it recorded. */
export const electronMock = { ...electronModule, state, defaultSession };

/** Clears recorded state and call history; keeps default behaviour (lock acquired, unpackaged). */
export function resetElectronMock(): void {
  state.windows.length = 0;
  state.ipcHandlers.clear();
  state.exposed.clear();
  state.protocolHandlers.clear();
  app.removeAllListeners();
  app.isPackaged = false;
  app.lockAcquired = true;
  ipcRendererEmitter.removeAllListeners();
  for (const key of ['permissionRequestHandler', 'permissionCheckHandler', 'devicePermissionHandler', 'headersListener'] as const) {
    defaultSession[key] = null;
  }
  vi.clearAllMocks();
}
