/**
 * The application menu: the usual roles (edit, window, zoom, full screen, quit) plus Warden's own
 * commands with their shortcuts — Ctrl/Cmd+N new chat, Ctrl/Cmd+, settings, Ctrl/Cmd+1…6 views.
 *
 * Warden's commands only move the window (they reach the renderer as `app:command`); none can
 * approve or run anything. An installed app's menu has no Reload and no Developer Tools, and
 * Electron's own `viewMenu` role is never used because it contains Toggle Developer Tools.
 */
import { Menu, type MenuItemConstructorOptions } from 'electron';
import { APP_VIEWS, type AppCommand, type AppView } from '../../shared/contract/app';

/** Menu labels of the views, in shortcut order (Ctrl/Cmd+1 is Chat). */
export const VIEW_LABELS: Readonly<Record<AppView, string>> = {
  chat: 'Chat',
  servers: 'Servers',
  permissions: 'Permissions',
  approvals: 'Approvals',
  activity: 'Activity',
  recovery: 'Recovery',
};

/** What the menu depends on. */
export interface MenuOptions {
  platform: NodeJS.Platform;
  /** An installed app: no Reload, no Developer Tools. */
  isPackaged: boolean;
  /** The app's name, the title of the macOS application menu. */
  appName: string;
  /** Carries out one of Warden's commands (main: focus the window, then `app:command`). */
  run(command: AppCommand): void;
}

const separator: MenuItemConstructorOptions = { type: 'separator' };

/** The menu template; pure, so every item, role and shortcut is asserted by a test. */
export function applicationMenuTemplate(options: MenuOptions): MenuItemConstructorOptions[] {
  const isMac = options.platform === 'darwin';
  const command =
    (c: AppCommand): MenuItemConstructorOptions['click'] =>
    () =>
      options.run(c);
  // `&` marks the Alt-key letter on Windows and Linux; macOS would show it literally.
  const mnemonic = (label: string) => (isMac ? label : `&${label}`);

  const settings: MenuItemConstructorOptions = { label: 'Settings…', accelerator: 'CmdOrCtrl+,', click: command({ type: 'open-settings' }) };
  const newChat: MenuItemConstructorOptions = { label: 'New Chat', accelerator: 'CmdOrCtrl+N', click: command({ type: 'new-chat' }) };
  const views: MenuItemConstructorOptions[] = APP_VIEWS.map((view, index) => ({
    label: VIEW_LABELS[view],
    accelerator: `CmdOrCtrl+${index + 1}`,
    click: command({ type: 'show-view', view }),
  }));
  const developer: MenuItemConstructorOptions[] = options.isPackaged
    ? []
    : [separator, { role: 'reload' }, { role: 'forceReload' }, { role: 'toggleDevTools' }];

  const macAppMenu: MenuItemConstructorOptions = {
    label: options.appName,
    submenu: [
      { role: 'about' },
      separator,
      settings,
      separator,
      { role: 'services' },
      separator,
      { role: 'hide' },
      { role: 'hideOthers' },
      { role: 'unhide' },
      separator,
      { role: 'quit' },
    ],
  };

  return [
    ...(isMac ? [macAppMenu] : []),
    {
      label: mnemonic('File'),
      submenu: [newChat, ...(isMac ? [] : [separator, settings]), separator, isMac ? { role: 'close' } : { role: 'quit' }],
    },
    { role: 'editMenu' },
    {
      label: mnemonic('View'),
      submenu: [...views, separator, { role: 'resetZoom' }, { role: 'zoomIn' }, { role: 'zoomOut' }, separator, { role: 'togglefullscreen' }, ...developer],
    },
    { role: 'windowMenu' },
    // macOS puts About in the application menu and adds its own search field to Help.
    { role: 'help', submenu: isMac ? [] : [{ role: 'about' }] },
  ];
}

/**
 * Sets Warden's menu as the application menu (macOS) and every window's menu bar (Windows,
 * Linux). Set once the app is ready and before the window exists, so Electron's default menu
 * (which has Toggle Developer Tools) is never the one in use.
 */
export function installApplicationMenu(options: MenuOptions): void {
  Menu.setApplicationMenu(Menu.buildFromTemplate(applicationMenuTemplate(options)));
}
