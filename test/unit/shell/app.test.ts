import { afterEach, beforeEach, describe, expect, it, vi, type Mock } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startWarden } from '../../../electron/main/app';
import { organizationPolicyPath } from '../../../electron/core/policy/organization-location';
import { windowOptions } from '../../../electron/main/window';
import { channelNames } from '../../../shared/ipc';
import { electronMock, FakeEvent, FakeFrame, FakeWebContents, resetElectronMock } from '../../helpers/electron-mock';

const mainDir = '/opt/warden/out/main';
let closeSpy: Mock<() => Promise<void>>;

const openCores: WardenCore[] = [];

function makeCore(deps: Parameters<typeof createCore>[0]): WardenCore {
  const core = createCore(deps);
  openCores.push(core);
  closeSpy = vi.fn(() => core.close());
  return { ...core, handlers: core.handlers, events: core.events, status: core.status, close: closeSpy };
}

async function start(env: Record<string, string | undefined> = {}) {
  const running = await startWarden({ mainDir, env, makeCore });
  return running!;
}

afterEach(async () => {
  // Close every core a test started (closing twice is harmless), so no timer outlives a test.
  await Promise.all(openCores.splice(0).map((core) => core.close().catch(() => undefined)));
});

beforeEach(() => {
  resetElectronMock();
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
});

describe('app lifecycle', () => {
  it('a second instance quits without opening a window or binding IPC', async () => {
    electronMock.app.lockAcquired = false;
    const running = await startWarden({ mainDir, env: {}, makeCore });
    expect(running).toBeNull();
    expect(electronMock.app.quit).toHaveBeenCalledTimes(1);
    expect(electronMock.state.windows).toHaveLength(0);
    expect(electronMock.ipcMain.handle).not.toHaveBeenCalled();
    expect(electronMock.app.whenReady).not.toHaveBeenCalled();
  });

  it('the first instance focuses its window when a second one starts', async () => {
    await start();
    const [window] = electronMock.state.windows;
    window!.minimized = true;
    electronMock.app.emit('second-instance', new FakeEvent(), [], '/');
    expect(window!.restore).toHaveBeenCalled();
    expect(window!.focus).toHaveBeenCalled();
  });

  it('opens one secure window on the built preload and loads app://warden/index.html', async () => {
    await start();
    expect(electronMock.app.requestSingleInstanceLock).toHaveBeenCalled();
    expect(electronMock.state.windows).toHaveLength(1);
    const [window] = electronMock.state.windows;
    // A developer run (unpackaged) in the system's light theme.
    expect(window!.options).toEqual(windowOptions('/opt/warden/out/preload/index.cjs', { isPackaged: false, dark: false }));
    expect(window!.loadURL).toHaveBeenCalledExactlyOnceWith('app://warden/index.html');
    expect(electronMock.protocol.registerSchemesAsPrivileged).toHaveBeenCalledTimes(1);
    expect(electronMock.protocol.handle).toHaveBeenCalledWith('app', expect.any(Function));
  });

  it('hardens the window and secures the default session before the page loads', async () => {
    await start();
    const [window] = electronMock.state.windows;
    expect(window!.webContents.navigate('https://evil.example/').defaultPrevented).toBe(true);
    expect(window!.webContents.windowOpenHandler!({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    expect(electronMock.defaultSession.setPermissionRequestHandler).toHaveBeenCalledTimes(1);
    expect(electronMock.defaultSession.setPermissionCheckHandler).toHaveBeenCalledTimes(1);
    expect(electronMock.defaultSession.webRequest.onHeadersReceived).toHaveBeenCalledTimes(1);
  });

  it('hardens every other webContents the app creates', async () => {
    await start();
    const stray = new FakeWebContents('app://warden/index.html');
    electronMock.app.emit('web-contents-created', new FakeEvent(), stray);
    expect(stray.navigate('https://evil.example/').defaultPrevented).toBe(true);
  });

  it('binds exactly the contract and serves it to the window main frame only', async () => {
    await start();
    expect(electronMock.ipcMain.handle.mock.calls.map(([c]) => c)).toEqual(channelNames);
    const [window] = electronMock.state.windows;
    const ping = electronMock.state.ipcHandlers.get('core:ping')!;
    const fromWindow = { sender: window!.webContents, senderFrame: window!.webContents.mainFrame };
    expect(await ping(fromWindow, { nonce: 'hi' })).toMatchObject({ ok: true, value: { nonce: 'hi' } });
    const iframe = { sender: window!.webContents, senderFrame: new FakeFrame('app://warden/', window!.webContents.mainFrame) };
    expect(await ping(iframe, { nonce: 'hi' })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
  });

  it('gives the core the native dialog as its approval prompter', async () => {
    const makeCoreSpy = vi.fn(makeCore);
    await startWarden({ mainDir, env: {}, makeCore: makeCoreSpy });
    const deps = makeCoreSpy.mock.calls[0]![0];
    const prompter = deps.gate!.prompter!;
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
    const preview = { operationId: 'o', title: 't', detail: 'd', argumentsJson: '{}', argumentsText: '', serverLabel: 's', accountLabel: 'a', toolName: 'x' };
    expect(await prompter.prompt(preview)).toBe('approve');
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledWith(electronMock.state.windows[0], expect.objectContaining({ cancelId: 0, defaultId: 0 }));
  });

  it('gives the core the native question before a model provider address is saved', async () => {
    const makeCoreSpy = vi.fn(makeCore);
    await startWarden({ mainDir, env: {}, makeCore: makeCoreSpy });
    const confirm = makeCoreSpy.mock.calls[0]![0].confirmProviderEndpoint!;
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 0, checkboxChecked: false });
    expect(await confirm({ action: 'add', kind: 'openai', label: 'x', baseUrl: 'https://models.example.net/v1', previousBaseUrl: null })).toBe(false);
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledWith(electronMock.state.windows[0], expect.objectContaining({ cancelId: 0, defaultId: 0, title: 'Warden: send conversations to this address?' }));
  });

  it('gives the core the native sampling dialogs: a dismissed question denies', async () => {
    const makeCoreSpy = vi.fn(makeCore);
    await startWarden({ mainDir, env: {}, makeCore: makeCoreSpy });
    const asker = makeCoreSpy.mock.calls[0]![0].sampling!.asker!;
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 0, checkboxChecked: false });
    const question = { serverName: 'S', accountName: 'A', modelLabel: 'm from P', maxTokens: 10, requestedMaxTokens: 10, systemPrompt: '', transcript: 'hi', tools: [], warnings: [] };
    expect(await asker.ask(question, new AbortController().signal)).toBe('deny');
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledWith(electronMock.state.windows[0], expect.objectContaining({ cancelId: 0, defaultId: 0, title: 'Warden: let a server use your model?' }));
  });

  it('forwards core events to the window on their wire channel', async () => {
    const running = await start();
    const [window] = electronMock.state.windows;
    const status = running.core.status();
    running.core.events.emit('core:status-changed', status);
    expect(window!.webContents.send).toHaveBeenCalledWith('event:core:status-changed', status);
  });

  it('sends no core event to a window whose page is not on our origin', async () => {
    const running = await start();
    const [window] = electronMock.state.windows;
    // Events from the start (the enabled servers connecting) went to our page; from here on it is not ours.
    await running.core.launched;
    await new Promise((r) => setTimeout(r, 0));
    window!.webContents.mainFrame.url = 'https://evil.example/';
    vi.mocked(window!.webContents.send).mockClear();
    running.core.events.emit('core:status-changed', running.core.status());
    running.core.events.emit('servers:overview-changed', running.core.autostart.overview());
    expect(window!.webContents.send).not.toHaveBeenCalled();
  });

  it('sandboxes every renderer app-wide before anything is created', async () => {
    await start();
    expect(electronMock.app.enableSandbox).toHaveBeenCalledTimes(1);
    expect(electronMock.app.enableSandbox.mock.invocationCallOrder[0]).toBeLessThan(
      electronMock.app.whenReady.mock.invocationCallOrder[0]!,
    );
  });

  it('closes the core before quitting, once', async () => {
    await start();
    const first = new FakeEvent();
    electronMock.app.emit('will-quit', first);
    expect(first.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(electronMock.app.quit).toHaveBeenCalledTimes(1), { timeout: 10_000 });
    expect(closeSpy).toHaveBeenCalledTimes(1);
    expect(electronMock.state.ipcHandlers.size).toBe(0);
    const second = new FakeEvent();
    electronMock.app.emit('will-quit', second);
    expect(second.defaultPrevented).toBe(false);
    expect(closeSpy).toHaveBeenCalledTimes(1);
  });

  it('quits when the last window closes (except on macOS)', async () => {
    await start();
    electronMock.app.emit('window-all-closed');
    if (process.platform === 'darwin') expect(electronMock.app.quit).not.toHaveBeenCalled();
    else expect(electronMock.app.quit).toHaveBeenCalledTimes(1);
  });

  it('uses the loopback dev server only when unpackaged, and never serves app:// then', async () => {
    await start({ ELECTRON_RENDERER_URL: 'http://localhost:5173' });
    const [window] = electronMock.state.windows;
    expect(window!.loadURL).toHaveBeenCalledWith('http://localhost:5173/');
    expect(electronMock.protocol.handle).not.toHaveBeenCalled();
    // The dev origin is now "ours": the app:// origin is not.
    expect(window!.webContents.navigate('http://localhost:5173/#/servers').defaultPrevented).toBe(false);
    expect(window!.webContents.navigate('app://warden/index.html').defaultPrevented).toBe(true);
  });

  it('a packaged app ignores ELECTRON_RENDERER_URL', async () => {
    electronMock.app.isPackaged = true;
    await start({ ELECTRON_RENDERER_URL: 'http://localhost:5173' });
    expect(electronMock.state.windows[0]!.loadURL).toHaveBeenCalledWith('app://warden/index.html');
  });
});

describe('the main entry point', () => {
  it('starts the shell when Electron loads out/main/index.js', async () => {
    await import('../../../electron/main/index');
    await vi.waitFor(() => expect(electronMock.state.windows).toHaveLength(1), { timeout: 10_000 });
    expect(electronMock.app.requestSingleInstanceLock).toHaveBeenCalledTimes(1);
    expect(electronMock.ipcMain.handle.mock.calls.map(([c]) => c)).toEqual(channelNames);
    // Quit the way Electron does, so the entry point's core is closed too.
    electronMock.app.emit('will-quit', new FakeEvent());
    await vi.waitFor(() => expect(electronMock.app.quit).toHaveBeenCalledTimes(1), { timeout: 10_000 });
  });
});

describe('durable state in the user-data folder', () => {
  it('the app journals to the hash-chained ledger in userData, not to memory', async () => {
    const running = await start();
    expect(running.core.status().journal.kind).toBe('ledger');
    const userData = electronMock.app.getPath('userData');
    expect(existsSync(join(userData, 'ledger'))).toBe(true);
    // First run with no servers: the offline demo server is there, so the app is useful with no keys.
    await running.core.demoOffered;
    expect(running.core.servers.definitions().some((d) => d.transport === 'builtin')).toBe(true);
  });

  it('a rule set in one run is the rule the next run starts with (policy.json), and org policy is read from a machine-wide path', async () => {
    const running = await start();
    const before = running.core.gate.policy.current().user.length;
    const change = await running.core.gate.policy.set({ scope: 'global', mode: 'disabled' }, null, 'user');
    const saved = JSON.parse(readFileSync(join(electronMock.app.getPath('userData'), 'policy.json'), 'utf8')) as { user: { id: string }[] };
    expect(saved.user.map((r) => r.id)).toContain(change.ruleId);
    // Quit the way Electron does (unbinds IPC, closes the core), then start a second run.
    electronMock.app.emit('will-quit', new FakeEvent());
    await vi.waitFor(() => expect(electronMock.app.quit).toHaveBeenCalled(), { timeout: 10_000 });
    resetElectronMock();
    const again = await start();
    expect(again.core.gate.policy.current().user.map((r) => r.id)).toContain(change.ruleId);
    expect(again.core.gate.policy.current().user.length).toBe(before + 1);
    expect(await organizationPolicyPath('linux')).toBe('/etc/warden/policy.json');
    // Windows: ProgramData from the registry, never from the environment (test/unit/policy/organization-windows.test.ts).
    const registry = { readValue: async (_key: string, name: string) => (name === 'ProgramData' ? '%SystemDrive%\\ProgramData' : 'D:\\WINDOWS') };
    expect(await organizationPolicyPath('win32', registry)).toBe('D:\\ProgramData\\Warden\\policy.json');
    expect(await organizationPolicyPath('darwin')).toBe('/Library/Application Support/Warden/policy.json');
  });
});
