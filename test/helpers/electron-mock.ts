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
  /** True until the test fires `did-finish-load` with {@link finishLoad}. */
  loading = true;
  readonly isLoading = vi.fn(() => this.loading);
  constructor(url = 'app://warden/index.html') {
    super();
    this.mainFrame = new FakeFrame(url);
  }
  /** Ends the page load the way Electron reports it: `isLoading()` turns false, then `did-finish-load`. */
  finishLoad(): void {
    this.loading = false;
    this.emit('did-finish-load');
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
  /** Whether the window has keyboard focus (`isFocused()`); a test sets it to model the person's desk. */
  focused = false;
  visible = false;
  readonly loadURL = vi.fn(async (_url: string) => undefined);
  readonly show = vi.fn(() => {
    this.visible = true;
  });
  readonly focus = vi.fn(() => {
    this.focused = true;
  });
  readonly restore = vi.fn(() => {
    this.minimized = false;
  });
  readonly isMinimized = vi.fn(() => this.minimized);
  readonly isDestroyed = vi.fn(() => this.destroyed);
  readonly isFocused = vi.fn(() => this.focused && !this.destroyed);
  readonly isVisible = vi.fn(() => this.visible && !this.destroyed);
  /** Windows only in Electron (`win.setOverlayIcon(overlay | null, description)`); recorded everywhere here. */
  readonly setOverlayIcon = vi.fn((_overlay: FakeNativeImage | null, _description: string) => undefined);
  readonly setBackgroundColor = vi.fn((_color: string) => undefined);
  constructor(readonly options: Record<string, unknown>) {
    super();
    this.webContents = new FakeWebContents();
    state.windows.push(this);
    app.emit('web-contents-created', new FakeEvent(), this.webContents);
  }
}

/**
 * Chromium's view of the process's command line (`app.commandLine`): the switches it parsed at
 * launch, by name without the leading dashes. Like Electron, changing it never changes
 * `process.argv`.
 */
export class FakeCommandLine {
  readonly switches = new Map<string, string>();
  readonly hasSwitch = vi.fn((name: string) => this.switches.has(name));
  readonly getSwitchValue = vi.fn((name: string) => this.switches.get(name) ?? '');
  readonly appendSwitch = vi.fn((name: string, value?: string) => {
    this.switches.set(name, value ?? '');
  });
  readonly appendArgument = vi.fn((_value: string) => undefined);
  readonly removeSwitch = vi.fn((name: string) => {
    this.switches.delete(name);
  });
}

/** Every user-data folder this test process made; removed together when it exits. */
const createdUserData: string[] = [];

class FakeApp extends EventEmitter {
  isPackaged = false;
  lockAcquired = true;
  readonly commandLine = new FakeCommandLine();
  readonly requestSingleInstanceLock = vi.fn(() => this.lockAcquired);
  readonly enableSandbox = vi.fn();
  /** macOS and Linux only in Electron; returns whether the call succeeded. */
  readonly setBadgeCount = vi.fn((_count?: number) => true);
  readonly setAppUserModelId = vi.fn((_id: string) => undefined);
  readonly quit = vi.fn();
  readonly exit = vi.fn();
  readonly whenReady = vi.fn(async () => undefined);
  readonly getVersion = vi.fn(() => '0.0.0-test');
  readonly getName = vi.fn(() => 'Warden');
  name = 'Warden';
  /**
   * A throwaway user-data folder per test process, so the shell's durable state is real files.
   * It survives `resetElectronMock` (a second run reads what the first wrote); `useFreshUserData`
   * starts an empty one.
   */
  private userData: string | undefined;
  useFreshUserData(): void {
    this.userData = undefined;
  }
  readonly getPath = vi.fn((name: string) => {
    if (name !== 'userData') return tmpdir();
    if (!this.userData) {
      const dir = mkdtempSync(join(tmpdir(), 'warden-userdata-'));
      if (createdUserData.length === 0) {
        process.once('exit', () => {
          for (const d of createdUserData) rmSync(d, { recursive: true, force: true });
        });
      }
      createdUserData.push(dir);
      this.userData = dir;
    }
    return this.userData;
  });
}

/**
 * A NativeImage double built from PNG bytes (`nativeImage.createFromBuffer`); its size is read
 * from the PNG header, as Electron decodes it.
 */
export class FakeNativeImage {
  constructor(readonly png: Buffer) {}
  isEmpty(): boolean {
    return this.png.length < 24 || this.png.toString('latin1', 1, 4) !== 'PNG';
  }
  getSize(): { width: number; height: number } {
    return this.isEmpty() ? { width: 0, height: 0 } : { width: this.png.readUInt32BE(16), height: this.png.readUInt32BE(20) };
  }
  toPNG(): Buffer {
    return this.png;
  }
}

/** A built menu: the template as Electron keeps it (submenus built recursively). */
export class FakeMenu {
  constructor(readonly items: FakeMenuItem[]) {}
}

/** One item of a built menu; `click` is the template's handler. */
export interface FakeMenuItem {
  label?: string;
  role?: string;
  type?: string;
  accelerator?: string;
  enabled?: boolean;
  visible?: boolean;
  click?: (menuItem: unknown, window: unknown, event: unknown) => void;
  submenu?: FakeMenu;
}

/**
 * `Menu.buildFromTemplate` as Electron checks it: every item needs a label, a role or a type
 * (Electron throws "Invalid template for MenuItem: must have at least one of label, role or
 * type"), and a submenu template is built into a Menu.
 */
function buildFromTemplate(template: ReadonlyArray<Record<string, unknown>>): FakeMenu {
  return new FakeMenu(
    template.map((item) => {
      if (item.label === undefined && item.role === undefined && item.type === undefined) {
        throw new TypeError('Invalid template for MenuItem: must have at least one of label, role or type');
      }
      const { submenu, ...rest } = item;
      const built = { ...rest } as FakeMenuItem;
      if (submenu instanceof FakeMenu) built.submenu = submenu;
      else if (Array.isArray(submenu)) built.submenu = buildFromTemplate(submenu as Record<string, unknown>[]);
      return built;
    }),
  );
}

/** The Notification double; every constructed notification is kept in `electronMock.state.notifications`. */
export class FakeNotification extends EventEmitter {
  static isSupported = vi.fn(() => state.notificationsSupported);
  readonly show = vi.fn();
  readonly close = vi.fn();
  constructor(readonly options: { title?: string; body?: string; subtitle?: string; silent?: boolean; urgency?: string; icon?: unknown } = {}) {
    super();
    state.notifications.push(this);
  }
  /** Fires `click` the way the OS reports a click on the notification. */
  click(): void {
    this.emit('click', new FakeEvent());
  }
}

/**
 * `nativeTheme`: `themeSource` overrides the OS, `shouldUseDarkColors` follows it, and a change
 * emits `updated` (Electron: setting `dark` or `light` "will emit the updated event").
 * `setSystemDark` models the person flipping the OS appearance.
 */
class FakeNativeTheme extends EventEmitter {
  private source: 'system' | 'light' | 'dark' = 'system';
  systemDark = false;
  get themeSource(): 'system' | 'light' | 'dark' {
    return this.source;
  }
  set themeSource(value: 'system' | 'light' | 'dark') {
    if (value !== 'system' && value !== 'light' && value !== 'dark') throw new TypeError(`Invalid themeSource ${String(value)}`);
    const changed = value !== this.source;
    this.source = value;
    if (changed) this.emit('updated');
  }
  get shouldUseDarkColors(): boolean {
    return this.source === 'dark' || (this.source === 'system' && this.systemDark);
  }
  setSystemDark(dark: boolean): void {
    this.systemDark = dark;
    this.emit('updated');
  }
  reset(): void {
    this.source = 'system';
    this.systemDark = false;
    this.removeAllListeners();
  }
}

const state = {
  notifications: [] as FakeNotification[],
  notificationsSupported: true,
  applicationMenu: null as FakeMenu | null,
  windows: [] as FakeBrowserWindow[],
  ipcHandlers: new Map<string, (event: unknown, ...args: unknown[]) => unknown>(),
  exposed: new Map<string, unknown>(),
  protocolHandlers: new Map<string, (request: Request) => Promise<Response>>(),
};

const app = new FakeApp();
const nativeTheme = new FakeNativeTheme();
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
    /** Safe before `ready` in Electron (on Linux it then prints to stderr instead of showing a window). */
    showErrorBox: vi.fn((_title: string, _content: string) => undefined),
    showOpenDialog: vi.fn(async (..._args: unknown[]) => ({ canceled: true, filePaths: [] as string[] })),
  },
  Menu: {
    buildFromTemplate: vi.fn(buildFromTemplate),
    setApplicationMenu: vi.fn((menu: FakeMenu | null) => {
      state.applicationMenu = menu;
    }),
    getApplicationMenu: vi.fn(() => state.applicationMenu),
  },
  Notification: FakeNotification,
  nativeTheme,
  nativeImage: {
    createFromBuffer: vi.fn((buffer: Buffer) => new FakeNativeImage(buffer)),
    createEmpty: vi.fn(() => new FakeNativeImage(Buffer.alloc(0))),
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
export const electronMock = { ...electronModule, state, defaultSession, nativeTheme };

/** Every item of a built menu, depth first (submenus included). */
export function menuItems(menu: FakeMenu | null): FakeMenuItem[] {
  if (!menu) return [];
  return menu.items.flatMap((item) => [item, ...menuItems(item.submenu ?? null)]);
}

/** Clears recorded state and call history; keeps default behaviour (lock acquired, unpackaged). */
export function resetElectronMock(): void {
  state.windows.length = 0;
  state.notifications.length = 0;
  state.notificationsSupported = true;
  state.applicationMenu = null;
  app.commandLine.switches.clear();
  nativeTheme.reset();
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
