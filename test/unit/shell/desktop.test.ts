/**
 * Desktop integration of the Electron shell, over the mocked `electron` module and the REAL core:
 * the application menu and its commands, approval notifications and the dock/taskbar badge
 * (with a real, hostile stdio MCP server whose tool text tries to get into the notification),
 * single instance, and the theme preference.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { APP_ID, startWarden, type StartOptions } from '../../../electron/main/app';
import { badgeDescription, OVERLAY_SIZE, overlayPixels, overlayText } from '../../../electron/main/badge';
import { applicationMenuTemplate, VIEW_LABELS } from '../../../electron/main/menu';
import { approvalNotificationText, MAX_LABEL_CHARS } from '../../../electron/main/notifications';
import { WINDOW_BACKGROUND } from '../../../electron/main/window';
import { APP_VIEWS } from '../../../shared/contract/app';
import { electronMock, FakeEvent, FakeNativeImage, menuItems, resetElectronMock, type FakeMenuItem } from '../../helpers/electron-mock';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');
const injectionServer = path.join(root, 'test/fixtures/servers/injection.ts');
const mainDir = '/opt/warden/out/main';

const openCores: WardenCore[] = [];
const makeCore = (deps: Parameters<typeof createCore>[0]): WardenCore => {
  const core = createCore(deps);
  openCores.push(core);
  return core;
};

async function start(options: Partial<StartOptions> = {}) {
  const running = await startWarden({ mainDir, env: {}, makeCore, argv: ['warden'], ...options });
  return running!;
}

const theWindow = () => electronMock.state.windows.at(-1)!;
/** Calls a contract channel exactly as the page does (from the window's main frame). */
async function invoke<T>(channel: string, request: unknown): Promise<{ ok: true; value: T } | { ok: false; error: { code: string; message: string } }> {
  const window = theWindow();
  const handler = electronMock.state.ipcHandlers.get(channel)!;
  return (await handler({ sender: window.webContents, senderFrame: window.webContents.mainFrame }, request)) as never;
}
/** Payloads the window received on one event's wire channel. */
const sent = (event: string) => theWindow().webContents.send.mock.calls.filter(([c]) => c === `event:${event}`).map(([, p]) => p);
const item = (label: string): FakeMenuItem => {
  const found = menuItems(electronMock.state.applicationMenu).find((i) => i.label === label);
  if (!found) throw new Error(`no menu item ${label}`);
  return found;
};
const click = (label: string) => item(label).click!({}, theWindow(), {});

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(() => {
  resetElectronMock();
  electronMock.app.useFreshUserData();
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  vi.spyOn(console, 'info').mockImplementation(() => undefined);
});

afterEach(async () => {
  await Promise.all(openCores.splice(0).map((core) => core.close().catch(() => undefined)));
  vi.restoreAllMocks();
});

describe('the application menu', () => {
  it('has the usual roles and Warden shortcuts: Ctrl/Cmd+N new chat, Ctrl/Cmd+, settings, Ctrl/Cmd+1…6 views', async () => {
    await start({ platform: 'linux' });
    expect(item('New Chat').accelerator).toBe('CmdOrCtrl+N');
    expect(item('Settings…').accelerator).toBe('CmdOrCtrl+,');
    expect(APP_VIEWS.map((v) => item(VIEW_LABELS[v]).accelerator)).toEqual(['CmdOrCtrl+1', 'CmdOrCtrl+2', 'CmdOrCtrl+3', 'CmdOrCtrl+4', 'CmdOrCtrl+5', 'CmdOrCtrl+6']);
    const roles = menuItems(electronMock.state.applicationMenu).map((i) => i.role).filter(Boolean);
    for (const role of ['editMenu', 'windowMenu', 'quit', 'togglefullscreen', 'resetZoom', 'zoomIn', 'zoomOut', 'about', 'help']) expect(roles).toContain(role);
    // Alt-key letters on Windows and Linux.
    expect(electronMock.state.applicationMenu!.items.map((i) => i.label ?? i.role)).toEqual(['&File', 'editMenu', '&View', 'windowMenu', 'help']);
  });

  it('on macOS, the app menu holds About, Settings…, Services, Hide and Quit, and File closes the window', () => {
    const template = applicationMenuTemplate({ platform: 'darwin', isPackaged: true, appName: 'Warden', run: () => {} });
    const [appMenu, file] = template as Array<{ label?: string; submenu: Array<{ role?: string; label?: string }> }>;
    expect(appMenu!.label).toBe('Warden');
    expect(appMenu!.submenu.map((i) => i.role ?? i.label ?? 'separator')).toEqual(['about', 'separator', 'Settings…', 'separator', 'services', 'separator', 'hide', 'hideOthers', 'unhide', 'separator', 'quit']);
    expect(file!.label).toBe('File');
    expect(file!.submenu.map((i) => i.role ?? i.label ?? 'separator')).toEqual(['New Chat', 'separator', 'close']);
  });

  it('a menu command brings the window forward and reaches the page as app:command once it has loaded', async () => {
    await start({ platform: 'linux' });
    const window = theWindow();
    click('Approvals');
    // The page has not loaded yet: the command waits for it instead of being lost.
    expect(sent('app:command')).toEqual([]);
    window.webContents.finishLoad();
    expect(sent('app:command')).toEqual([{ type: 'show-view', view: 'approvals' }]);
    expect(window.focus).toHaveBeenCalled();
    click('New Chat');
    click('Settings…');
    click('Recovery');
    expect(sent('app:command')).toEqual([
      { type: 'show-view', view: 'approvals' },
      { type: 'new-chat' },
      { type: 'open-settings' },
      { type: 'show-view', view: 'recovery' },
    ]);
  });

  it('with no window open (macOS keeps running), a command opens one and is delivered after it loads', async () => {
    await start({ platform: 'darwin' });
    theWindow().destroyed = true;
    theWindow().emit('closed');
    click('Servers');
    expect(electronMock.state.windows).toHaveLength(2);
    theWindow().webContents.finishLoad();
    expect(sent('app:command')).toEqual([{ type: 'show-view', view: 'servers' }]);
  });

  it('a page that navigated away from our origin gets no command', async () => {
    await start({ platform: 'linux' });
    theWindow().webContents.finishLoad();
    theWindow().webContents.mainFrame.url = 'https://evil.example/';
    click('Approvals');
    expect(sent('app:command')).toEqual([]);
  });
});

describe('approval notifications and the pending badge', () => {
  /** Adds the hostile injection server (named by the person) and connects it. */
  async function addHostileServer(core: WardenCore, name = 'Notes') {
    const view = await core.servers.addServer({
      definition: { name, transport: 'stdio', command: process.execPath, args: ['--import', tsxLoader, injectionServer], cwd: root, env: [] },
      accountLabel: 'Work',
    });
    const serverId = view.definition.id;
    const accountId = view.accounts[0]!.id;
    const status = await core.connections.connect(serverId, accountId);
    expect(status.state).toBe('connected');
    return { serverId, accountId };
  }

  /** The model (here: the page) proposes read_note; default mode Ask puts it in the queue. */
  async function proposeCall(ids: { serverId: string; accountId: string }) {
    const result = await invoke<{ operationId: string; state: string }>('tools:run', { ...ids, toolName: 'read_note', arguments: {} });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.state).toBe('awaiting_approval');
    return result.value.operationId;
  }

  it('a call waiting while the window is in the background shows a notification in Warden words only, and the badge counts it', async () => {
    const running = await start({ platform: 'linux' });
    const ids = await addHostileServer(running.core);
    expect(theWindow().isFocused()).toBe(false);
    await proposeCall(ids);
    await until(() => electronMock.state.notifications.length === 1, 'the notification');
    const [notification] = electronMock.state.notifications;
    expect(notification!.show).toHaveBeenCalledTimes(1);
    expect(notification!.options.title).toBe('A tool call is waiting for your approval');
    expect(notification!.options.body).toBe('Server: Notes (Work). Click to open Approvals in Warden; nothing runs until you approve it there.');
    // Nothing the server wrote (its name, tool name, hidden description) reaches the notification.
    const text = JSON.stringify(notification!.options);
    for (const serverText of ['read_note', 'Reads a note', 'always approve', 'Hidden', 'fixture-injection', '\\u001b']) expect(text).not.toContain(serverText);
    expect(electronMock.app.setBadgeCount).toHaveBeenLastCalledWith(1);
  });

  it('clicking the notification focuses the window on Approvals and approves nothing', async () => {
    const running = await start({ platform: 'linux' });
    const ids = await addHostileServer(running.core);
    const window = theWindow();
    window.minimized = true;
    window.webContents.finishLoad();
    const operationId = await proposeCall(ids);
    await until(() => electronMock.state.notifications.length === 1, 'the notification');
    electronMock.state.notifications[0]!.click();
    expect(window.restore).toHaveBeenCalled();
    expect(window.focus).toHaveBeenCalled();
    expect(sent('app:command')).toEqual([{ type: 'show-view', view: 'approvals' }]);
    // No approval dialog was opened, and the call is still waiting: a click is never a decision.
    await new Promise((r) => setTimeout(r, 100));
    expect(electronMock.dialog.showMessageBox).not.toHaveBeenCalled();
    expect((await running.core.gate.gate.get(operationId))?.state).toBe('awaiting_approval');
    expect((await running.core.gate.gate.get(operationId))?.approvedByUser).toBe(false);
  });

  it('no notification while the window is focused; the badge still counts, and clears when the call is decided', async () => {
    const running = await start({ platform: 'darwin' });
    const ids = await addHostileServer(running.core);
    theWindow().focused = true;
    const operationId = await proposeCall(ids);
    await until(() => electronMock.app.setBadgeCount.mock.calls.some(([n]) => n === 1), 'the badge to count 1');
    expect(electronMock.state.notifications).toHaveLength(0);
    expect((await invoke('approvals:reject', { operationId })).ok).toBe(true);
    await until(() => electronMock.app.setBadgeCount.mock.lastCall?.[0] === 0, 'the badge to clear');
  });

  it('a notification is withdrawn once the call it announced is no longer waiting', async () => {
    const running = await start({ platform: 'linux' });
    const ids = await addHostileServer(running.core);
    const operationId = await proposeCall(ids);
    await until(() => electronMock.state.notifications.length === 1, 'the notification');
    expect((await invoke('approvals:reject', { operationId })).ok).toBe(true);
    await until(() => electronMock.state.notifications[0]!.close.mock.calls.length === 1, 'the notification to close');
  });

  it('on Windows the count is an overlay on the taskbar button, with words for screen readers', async () => {
    const running = await start({ platform: 'win32' });
    expect(electronMock.app.setAppUserModelId).toHaveBeenCalledWith(APP_ID);
    const ids = await addHostileServer(running.core);
    const operationId = await proposeCall(ids);
    const window = theWindow();
    await until(() => window.setOverlayIcon.mock.calls.length > 0, 'the overlay');
    const [image, description] = window.setOverlayIcon.mock.lastCall!;
    expect(image).toBeInstanceOf(FakeNativeImage);
    expect((image as FakeNativeImage).getSize()).toEqual({ width: OVERLAY_SIZE, height: OVERLAY_SIZE });
    expect(description).toBe('1 tool call is waiting for your approval');
    expect(electronMock.app.setBadgeCount).not.toHaveBeenCalled();
    expect((await invoke('approvals:reject', { operationId })).ok).toBe(true);
    await until(() => window.setOverlayIcon.mock.lastCall?.[0] === null, 'the overlay to clear');
    expect(window.setOverlayIcon.mock.lastCall).toEqual([null, '']);
  });

  it('a system without notifications gets none and nothing breaks', async () => {
    electronMock.state.notificationsSupported = false;
    const running = await start({ platform: 'linux' });
    const ids = await addHostileServer(running.core);
    await proposeCall(ids);
    await until(() => electronMock.app.setBadgeCount.mock.calls.some(([n]) => n === 1), 'the badge');
    expect(electronMock.state.notifications).toHaveLength(0);
  });

  it('labels are shown on one line, with hidden characters visible and long names cut', () => {
    const { title, body } = approvalNotificationText([
      { serverLabel: `Mail\u202Egpj.exe`, accountLabel: 'Work' },
      { serverLabel: 'x'.repeat(100), accountLabel: 'Home' },
    ]);
    expect(title).toBe('2 tool calls are waiting for your approval');
    expect(body).toContain('Mail\\u202egpj.exe (Work)');
    expect(body).toContain(`${'x'.repeat(MAX_LABEL_CHARS - 1)}… (Home)`);
    expect(body).not.toContain('\u202e');
  });

  it('the overlay shows the count in white on an amber disc, "9+" from ten on', () => {
    expect(overlayText(3)).toBe('3');
    expect(overlayText(12)).toBe('9+');
    expect(badgeDescription(2)).toBe('2 tool calls are waiting for your approval');
    const pixels = overlayPixels(1);
    const at = (x: number, y: number) => [...pixels.subarray((y * OVERLAY_SIZE + x) * 4, (y * OVERLAY_SIZE + x) * 4 + 4)];
    expect(at(0, 0)[3]).toBe(0); // outside the disc: transparent
    expect(at(8, 1)).toEqual([0xb4, 0x53, 0x09, 255]); // the disc, top middle
    expect(at(8, 6)).toEqual([255, 255, 255, 255]); // the "1"'s stem
  });
});

describe('single instance', () => {
  it('a second launch restores and focuses the running window, ignoring its arguments', async () => {
    electronMock.app.isPackaged = true;
    await start({ platform: 'linux' });
    const window = theWindow();
    window.minimized = true;
    electronMock.app.emit('second-instance', new FakeEvent(), ['/opt/Warden/warden', '--remote-debugging-port=9222'], '/');
    expect(window.restore).toHaveBeenCalled();
    expect(window.show).toHaveBeenCalled();
    expect(window.focus).toHaveBeenCalled();
    expect(electronMock.state.windows).toHaveLength(1);
    expect(electronMock.app.exit).not.toHaveBeenCalled();
  });

  it('a second launch after the window was closed (macOS) opens a new one', async () => {
    await start({ platform: 'darwin' });
    theWindow().destroyed = true;
    theWindow().emit('closed');
    electronMock.app.emit('second-instance', new FakeEvent(), ['warden'], '/');
    expect(electronMock.state.windows).toHaveLength(2);
    expect(theWindow().focus).toHaveBeenCalled();
  });
});

describe('the theme preference', () => {
  const settingsFile = () => path.join(electronMock.app.getPath('userData'), 'settings.json');

  it('starts following the system, and a dark system gives a dark window from the first frame', async () => {
    electronMock.nativeTheme.setSystemDark(true);
    await start();
    expect(electronMock.nativeTheme.themeSource).toBe('system');
    expect(theWindow().options.backgroundColor).toBe(WINDOW_BACKGROUND.dark);
    expect(await invoke('theme:get', {})).toEqual({ ok: true, value: { preference: 'system', dark: true } });
  });

  it('theme:set stores the choice, applies it through nativeTheme, recolours the window and tells the page', async () => {
    await start();
    theWindow().webContents.finishLoad();
    expect(theWindow().options.backgroundColor).toBe(WINDOW_BACKGROUND.light);
    expect(await invoke('theme:set', { preference: 'dark' })).toEqual({ ok: true, value: { preference: 'dark', dark: true } });
    expect(electronMock.nativeTheme.themeSource).toBe('dark');
    expect(JSON.parse(readFileSync(settingsFile(), 'utf8')).preferences.theme).toBe('dark');
    expect(theWindow().setBackgroundColor).toHaveBeenLastCalledWith(WINDOW_BACKGROUND.dark);
    expect(sent('theme:changed')).toEqual([{ preference: 'dark', dark: true }]);
    // The OS turning light changes nothing while the person chose dark.
    electronMock.nativeTheme.setSystemDark(false);
    expect(sent('theme:changed')).toHaveLength(1);
  });

  it('the next start applies the stored theme before the window exists (no white flash in dark mode)', async () => {
    await start();
    expect((await invoke('theme:set', { preference: 'dark' })).ok).toBe(true);
    electronMock.app.emit('will-quit', new FakeEvent());
    await vi.waitFor(() => expect(electronMock.app.quit).toHaveBeenCalled(), { timeout: 10_000 });
    resetElectronMock();
    await start();
    expect(electronMock.nativeTheme.themeSource).toBe('dark');
    expect(theWindow().options.backgroundColor).toBe(WINDOW_BACKGROUND.dark);
  });

  it('while following the system, an OS switch reaches the page and the window colour', async () => {
    await start();
    theWindow().webContents.finishLoad();
    electronMock.nativeTheme.setSystemDark(true);
    expect(sent('theme:changed')).toEqual([{ preference: 'system', dark: true }]);
    expect(theWindow().setBackgroundColor).toHaveBeenLastCalledWith(WINDOW_BACKGROUND.dark);
  });

  it('an unknown theme is refused with the field named, and nothing changes', async () => {
    await start();
    const result = await invoke('theme:set', { preference: 'purple' });
    expect(result).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    expect(!result.ok && result.error.message).toContain('preference');
    expect(electronMock.nativeTheme.themeSource).toBe('system');
  });
});
