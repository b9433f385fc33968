/**
 * A packaged Warden offers no debugger: whoever launches it with a debugging or code-injection
 * switch (a shortcut edited by malware, a wrapper script, another local program) gets a plain
 * refusal and a process that exits before any window, core, keychain access or IPC exists.
 *
 * Written from the attacker's side: the launch arguments are the attack. The shell is driven
 * through `startWarden` and the real entry point (out/main/index.js's source) over the mocked
 * `electron` module.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { startWarden } from '../../../electron/main/app';
import { refusedLaunchSwitches } from '../../../electron/main/launch-guard';
import { windowOptions } from '../../../electron/main/window';
import { electronMock, menuItems, resetElectronMock } from '../../helpers/electron-mock';

const mainDir = '/opt/warden/out/main';
const openCores: WardenCore[] = [];
const makeCore = (deps: Parameters<typeof createCore>[0]): WardenCore => {
  const core = createCore(deps);
  openCores.push(core);
  return core;
};

/** Launches the packaged app the way the OS would with these arguments after the executable. */
function launchPackaged(args: string[]) {
  electronMock.app.isPackaged = true;
  return startWarden({ mainDir, env: {}, makeCore, argv: ['/opt/Warden/warden', ...args] });
}

/** Nothing of Warden may exist after a refused launch: no lock, no ready, no window, no IPC, no core. */
function expectRefusedBeforeAnything(running: unknown): void {
  expect(running).toBeNull();
  expect(electronMock.app.exit).toHaveBeenCalledExactlyOnceWith(1);
  expect(electronMock.app.requestSingleInstanceLock).not.toHaveBeenCalled();
  expect(electronMock.app.whenReady).not.toHaveBeenCalled();
  expect(electronMock.state.windows).toHaveLength(0);
  expect(electronMock.ipcMain.handle).not.toHaveBeenCalled();
  expect(openCores).toHaveLength(0);
}

beforeEach(() => {
  resetElectronMock();
  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});

afterEach(async () => {
  await Promise.all(openCores.splice(0).map((core) => core.close().catch(() => undefined)));
  vi.restoreAllMocks();
});

describe('a packaged Warden refuses debugging switches at launch', () => {
  it.each([
    ['--remote-debugging-port=9222', 'remote-debugging-port'],
    ['--remote-debugging-pipe', 'remote-debugging-pipe'],
    ['--remote-debugging-address=0.0.0.0', 'remote-debugging-address'],
    ['--remote-allow-origins=*', 'remote-allow-origins'],
    ['--inspect', 'inspect'],
    ['--inspect=0.0.0.0:9229', 'inspect'],
    ['--inspect-brk', 'inspect-brk'],
    ['--inspect-brk-node=9229', 'inspect-brk-node'],
    ['--inspect-port=9229', 'inspect-port'],
    ['--inspect-publish-uid=http', 'inspect-publish-uid'],
    ['--debug=9229', 'debug'],
    ['--debug-brk', 'debug-brk'],
    ['--debug-port=9229', 'debug-port'],
    ['--js-flags=--allow-natives-syntax', 'js-flags'],
    ['--auto-open-devtools-for-tabs', 'auto-open-devtools-for-tabs'],
    ['--renderer-cmd-prefix=/tmp/evil.sh', 'renderer-cmd-prefix'],
    ['--gpu-launcher=/tmp/evil.sh', 'gpu-launcher'],
    ['--utility-cmd-prefix=/tmp/evil.sh', 'utility-cmd-prefix'],
    ['--browser-subprocess-path=/tmp/evil', 'browser-subprocess-path'],
    ['--no-sandbox', 'no-sandbox'],
    ['--disable-web-security', 'disable-web-security'],
    ['--ignore-certificate-errors', 'ignore-certificate-errors'],
  ])('%s: quits with a plain message before anything starts', async (arg, name) => {
    const running = await launchPackaged(['--lang=en-GB', arg]);
    expectRefusedBeforeAnything(running);
    expect(electronMock.dialog.showErrorBox).toHaveBeenCalledTimes(1);
    const [title, content] = electronMock.dialog.showErrorBox.mock.calls[0]!;
    expect(title).toBe('Warden was not started');
    expect(content).toContain(`--${name}`);
    expect(content).toMatch(/Start Warden without/);
    // Chromium is told to forget the switch too, in case its own handler has not started yet.
    expect(electronMock.app.commandLine.removeSwitch).toHaveBeenCalledWith(name);
  });

  it.each([
    ['single dash (Chromium accepts it on every OS)', 'linux', '-remote-debugging-port=9222'],
    ['underscores (Node accepts them in option names)', 'linux', '--inspect_brk=9229'],
    ['a space-separated value', 'linux', '--remote-debugging-port 9222'],
    ['upper case on Windows (Chromium lower-cases switches there)', 'win32', '--REMOTE-DEBUGGING-PORT=9222'],
    ['a slash on Windows', 'win32', '/remote-debugging-port=9222'],
  ] as const)('spelled with %s', (_what, platform, arg) => {
    const argv = ['/opt/Warden/warden', ...arg.split(' ')];
    expect(refusedLaunchSwitches(argv, platform).length).toBeGreaterThan(0);
  });

  it('refuses a switch Chromium saw even when process.argv does not show it', async () => {
    electronMock.app.commandLine.switches.set('remote-debugging-port', '9222');
    const running = await launchPackaged([]);
    expectRefusedBeforeAnything(running);
    expect(electronMock.dialog.showErrorBox.mock.calls[0]![1]).toContain('--remote-debugging-port');
  });

  it('refuses a switch hidden after the end-of-switches marker, and names every refused switch once', async () => {
    const running = await launchPackaged(['--inspect', '--', '--remote-debugging-pipe', '--inspect']);
    expectRefusedBeforeAnything(running);
    const firstLine = electronMock.dialog.showErrorBox.mock.calls[0]![1].split('\n')[0]!;
    expect(firstLine).toBe('Warden was started with switches it does not accept: --remote-debugging-pipe, --inspect.');
  });

  it('the real entry point refuses too (out/main/index.js with the attacker argv)', async () => {
    electronMock.app.isPackaged = true;
    const saved = process.argv;
    process.argv = ['/opt/Warden/warden', '--remote-debugging-port=9222'];
    try {
      await import('../../../electron/main/index');
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.argv = saved;
    }
    expect(electronMock.app.exit).toHaveBeenCalledWith(1);
    expect(electronMock.app.whenReady).not.toHaveBeenCalled();
    expect(electronMock.state.windows).toHaveLength(0);
  });

  it.each([
    ['--zygote-cmd-prefix=/tmp/evil.sh', 'zygote-cmd-prefix'],
    ['--single-process', 'single-process'],
    ['--no-zygote', 'no-zygote'],
    ['--ppapi-plugin-launcher=/tmp/evil.sh', 'ppapi-plugin-launcher'],
    ['--in-process-gpu', 'in-process-gpu'],
    ['--load-extension=/tmp/evil', 'load-extension'],
    ['--proxy-server=http://attacker:8080', 'proxy-server'],
    ['--remote-debugging-targets=x', 'remote-debugging-targets'],
    // Nobody can list every switch a future Chromium adds: any switch Warden does not know is refused.
    ['--some-switch-chromium-adds-next-year', 'some-switch-chromium-adds-next-year'],
  ])('%s (sandbox, code or traffic): quits before anything starts', async (arg, name) => {
    const running = await launchPackaged([arg]);
    expectRefusedBeforeAnything(running);
    expect(electronMock.dialog.showErrorBox.mock.calls[0]![1]).toContain(`--${name}`);
  });

  it('ordinary switches and file arguments start the app normally', async () => {
    const running = await launchPackaged(['--lang=de', '--enable-logging', '/home/me/inspect', 'debug.txt', '--ozone-platform-hint=auto']);
    expect(running).not.toBeNull();
    expect(electronMock.app.exit).not.toHaveBeenCalled();
    expect(electronMock.dialog.showErrorBox).not.toHaveBeenCalled();
    expect(electronMock.state.windows).toHaveLength(1);
  });

  it('an unpackaged (developer) run keeps its debugging switches', async () => {
    electronMock.app.isPackaged = false;
    const running = await startWarden({ mainDir, env: {}, makeCore, argv: ['electron', '.', '--inspect', '--remote-debugging-port=9222'] });
    expect(running).not.toBeNull();
    expect(electronMock.app.exit).not.toHaveBeenCalled();
  });
});

describe('a packaged Warden offers no DevTools', () => {
  it('its window has devTools: false, and a developer run keeps them', () => {
    expect(windowOptions('/p', { isPackaged: true, dark: false }).webPreferences?.devTools).toBe(false);
    expect(windowOptions('/p', { isPackaged: false, dark: false }).webPreferences?.devTools).toBe(true);
  });

  it('the packaged app window is created with devTools: false', async () => {
    await launchPackaged([]);
    const [window] = electronMock.state.windows;
    expect((window!.options.webPreferences as Record<string, unknown>).devTools).toBe(false);
  });

  it('sets its own application menu, with no DevTools, reload or view-menu role anywhere', async () => {
    await launchPackaged([]);
    expect(electronMock.Menu.setApplicationMenu).toHaveBeenCalled();
    const items = menuItems(electronMock.state.applicationMenu);
    expect(items.length).toBeGreaterThan(10);
    for (const item of items) {
      // viewMenu is Electron's default View menu, which contains Toggle Developer Tools.
      expect(['toggleDevTools', 'viewMenu', 'reload', 'forceReload']).not.toContain(item.role);
      expect(`${item.label ?? ''}`).not.toMatch(/developer|devtools|inspect/i);
      expect(`${item.accelerator ?? ''}`.replace(/\s/g, '')).not.toMatch(/^(CmdOrCtrl|CommandOrControl|Ctrl|Cmd)\+(Shift|Alt)\+I$|^F12$/i);
    }
  });

  it('a developer run has Toggle Developer Tools in its View menu', async () => {
    await startWarden({ mainDir, env: {}, makeCore, argv: ['electron', '.'] });
    expect(menuItems(electronMock.state.applicationMenu).some((i) => i.role === 'toggleDevTools')).toBe(true);
  });

  it('the application menu is set before the window exists, so Electron never shows its default one', async () => {
    let menuWhenWindowCreated: unknown = 'no window';
    electronMock.app.on('web-contents-created', () => {
      menuWhenWindowCreated = electronMock.state.applicationMenu;
    });
    await launchPackaged([]);
    expect(electronMock.state.windows).toHaveLength(1);
    expect(menuWhenWindowCreated).not.toBeNull();
    expect(menuWhenWindowCreated).toBe(electronMock.state.applicationMenu);
  });
});
