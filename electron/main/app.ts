/**
 * The Electron app lifecycle: the launch guard, single instance, secure sessions, the renderer's
 * origin, the core, the IPC binding, the application menu, approval notifications and the badge,
 * the theme, the window, and a clean shutdown that closes the core.
 *
 * Kept separate from index.ts (which only calls `startWarden`) so tests can drive the lifecycle
 * with a mocked `electron` module.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, nativeTheme, session } from 'electron';
import type { AppCommand } from '../../shared/contract/app';
import { eventWireChannel } from '../../shared/ipc';
import { createCore, type WardenCore } from '../core/app-core';
import { openLedgerForApp } from '../core/ledger';
import { KeytarSecretStore } from '../core/secrets/keytar-secret-store';
import { loadManagedOrganizationPolicy } from '../core/policy/organization';
import { windowsPolicyPorts } from '../core/policy/windows-system';
import { createFileDialogs } from './file-dialogs';
import { loadPolicyFile, savePolicyFile } from '../core/settings/policy-file';
import { createDialogPrompter, createLinkConfirmer, createServerChangeConfirmer } from './dialogs';
import { createDialogElicitor } from './elicitor';
import { createAuthorizationServerConfirmer } from './oauth-dialog';
import { createProviderEndpointConfirmer } from './provider-dialog';
import { createSamplingAsker } from './sampling-dialog';
import { openElectronSettingsStore } from './electron-settings-store';
import { bindContract, createSenderCheck } from './ipc';
import { createPendingBadge } from './badge';
import { refuseDebuggingLaunch } from './launch-guard';
import { installApplicationMenu } from './menu';
import { watchApprovalsForAttention } from './notifications';
import { registerAppScheme, rendererEntry, serveRenderer } from './protocol';
import { hardenWebContents, isSameOrigin, secureAllSessions, systemBrowser } from './security';
import { nativeAppearance } from './theme';
import { builtPaths, windowBackground, windowOptions } from './window';

/**
 * Warden's application id: electron-builder's `appId`, and on Windows the AppUserModelID that
 * ties notifications and the taskbar button to the installed Start-menu shortcut.
 */
export const APP_ID = 'dev.warden.app';

/** Knobs for tests; production uses the defaults. */
export interface StartOptions {
  /** Folder of the built main bundle (`out/main`); defaults to this module's folder. */
  mainDir?: string;
  env?: Record<string, string | undefined>;
  /** Builds the core; defaults to `createCore`. */
  makeCore?: (deps: Parameters<typeof createCore>[0]) => WardenCore;
  /**
   * Opens the durable state (ledger, settings, rules, organization policy); defaults to
   * `openDurableState` in the user-data folder. Tests pass an in-memory stand-in.
   */
  openState?: () => Promise<Partial<Parameters<typeof createCore>[0]>>;
  /** The launch arguments; defaults to `process.argv`. */
  argv?: readonly string[];
  /** Defaults to `process.platform`; tests choose another to check per-platform behaviour. */
  platform?: NodeJS.Platform;
}

/**
 * Opens everything durable the core needs, in the user-data folder: the hash-chained ledger
 * (recovering what the last exit interrupted), settings in electron-store, the person's rules,
 * and the organization policy. One redactor is shared by the keychain and the ledger so no
 * secret value is ever written to disk.
 */
export async function openDurableState(): Promise<Partial<Parameters<typeof createCore>[0]>> {
  const userData = app.getPath('userData');
  // The ledger's key and its anchor are kept in the OS keychain (outside the ledger's folder).
  const { ledger, onSecretValue } = await openLedgerForApp(userData, { keychain: new KeytarSecretStore() });
  const rulesStore = openElectronSettingsStore('policy');
  const rules = loadPolicyFile(rulesStore);
  if (rules.problem) {
    console.error(`[warden] ${rules.problem}`);
    // Keep the unusable file for the person; new rule changes are saved to a fresh one.
    if (existsSync(rulesStore.path)) copyFileSync(rulesStore.path, `${rulesStore.path}.invalid-${Date.now()}`);
  }
  // Where an administrator puts the managed policy (a file only administrators can change; on
  // Windows, ProgramData from the registry, never from the environment). Read-only in the app.
  const org = await loadManagedOrganizationPolicy(process.platform === 'win32' ? { platform: 'win32', ...windowsPolicyPorts() } : { platform: process.platform });
  for (const e of org.errors) console.error(`[warden] organization policy: ${e}`);
  return {
    ledger,
    // Conversations: one file each, written atomically, read asynchronously at start.
    chat: { dataDir: join(userData, 'conversations') },
    // What each account listed (a disconnected account's tools, before/after of a changed tool).
    listingsDir: join(userData, 'listings'),
    rootsDir: join(userData, 'roots'),
    sampling: { dir: join(userData, 'sampling') },
    servers: { settingsStore: openElectronSettingsStore(), onSecretValue },
    // Model providers in their own file (`models.json`); their keys only in the keychain.
    models: { settingsStore: openElectronSettingsStore('models') },
    gate: {
      initialPolicy: { user: rules.user, conversation: rules.conversation, enforcedRoots: rules.enforcedRoots, organization: org.rules },
      persistPolicy: (state) => savePolicyFile(rulesStore, state),
    },
  };
}

/** What a started shell exposes to tests. */
export interface RunningWarden {
  core: WardenCore;
  window(): BrowserWindow | null;
}

/**
 * Starts Warden's main process. Resolves null when an installed app was launched with a
 * debugging switch (after a plain message and `app.exit(1)`, before anything else happens), or
 * (after asking the app to quit) when another instance already holds the single-instance lock;
 * that instance is focused instead.
 */
export async function startWarden(options: StartOptions = {}): Promise<RunningWarden | null> {
  const platform = options.platform ?? process.platform;
  // First, synchronously: nothing of Warden may exist in a process someone is debugging.
  if (app.isPackaged && refuseDebuggingLaunch({ app, dialog }, options.argv ?? process.argv, platform)) return null;
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  // Windows ties notifications and the taskbar button to the installer's shortcut through this id.
  if (platform === 'win32') app.setAppUserModelId(APP_ID);
  // Every renderer sandboxed, whatever options a future window passes (checklist: sandbox all).
  app.enableSandbox();
  registerAppScheme();

  const mainDir = options.mainDir ?? dirname(fileURLToPath(import.meta.url));
  const paths = builtPaths(mainDir);
  const entry = rendererEntry(app.isPackaged, options.env ?? process.env);
  let window: BrowserWindow | null = null;
  // Brings the window forward, opening one if there is none (macOS keeps running without one).
  // Null until the core is up; a launch before that sees the window appear when it is ready.
  let bringForward: (() => BrowserWindow) | null = null;

  // A second launch (a click on the icon while Warden runs) focuses this instance; its
  // arguments are ignored, so a second launch cannot pass anything to this one.
  app.on('second-instance', () => {
    bringForward?.();
  });
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, entry.origin));

  await app.whenReady();
  // Before any window exists, so Electron's default menu (with Toggle Developer Tools) is never used.
  installApplicationMenu({ platform, isPackaged: app.isPackaged, appName: app.name, run: (command) => runCommand(command) });
  secureAllSessions(app, session.defaultSession, entry.origin);
  if (entry.servesAppScheme) serveRenderer(paths.rendererDir);

  const durable = await (options.openState ?? openDurableState)();
  // The native dialog is the core's only approver: the renderer has no approve channel.
  const core = (options.makeCore ?? createCore)({
    ...durable,
    version: app.getVersion(),
    platform: process.platform,
    dataFolder: app.getPath('userData'),
    browser: systemBrowser,
    elicitor: createDialogElicitor(() => window),
    // Saving a server decides what runs on this machine: a person confirms it natively.
    confirmServerChange: createServerChangeConfirmer(() => window),
    // A sign-in that would contact another site (the server's authorization server) asks first.
    confirmAuthorizationServer: createAuthorizationServerConfirmer(() => window),
    // Import reads only a file the person chose in the native open dialog.
    fileDialogs: createFileDialogs(() => window),
    // A model provider's address is where conversations go: a person confirms it natively.
    confirmProviderEndpoint: createProviderEndpointConfirmer(() => window),
    // A server asking the person's model for a reply is asked about natively (Deny the default);
    // turning sampling on or to Always is confirmed there too.
    sampling: { ...durable.sampling, asker: createSamplingAsker(() => window) },
    // First run with no servers: add the in-process demo server (README: useful offline, no keys).
    offerDemoServer: true,
    // Enabled servers connect at launch, all at once, retrying failures with backoff.
    autoConnect: true,
    gate: { ...durable.gate, prompter: createDialogPrompter(() => window) },
    // The stored theme is applied now, before the window is created in its colours.
    appearance: nativeAppearance,
    // The demo model streams word by word so a person sees a reply being written; links from a
    // chat open only after the person confirms the full address natively.
    chat: { demoChunkDelayMs: 25, ...durable.chat, confirmLink: createLinkConfirmer(() => window) },
  });
  // Operations the last exit interrupted are settled (executing → outcome_unknown, never resent)
  // before the renderer can ask for anything.
  const recovery = await core.recovered.catch((error: unknown) => {
    console.error('[warden] recovering operations failed', error);
    return null;
  });
  if (recovery) console.info('[warden] recovery', JSON.stringify(recovery));

  const unbind = bindContract(ipcMain, core.handlers, {
    isTrustedSender: createSenderCheck(() => (window && !window.isDestroyed() ? window.webContents : null), entry.origin),
  });
  // Events go only to our window's main frame, and only while it is on our origin.
  const unsubscribe = core.events.subscribe((event, payload) => {
    if (!window || window.isDestroyed()) return;
    // The window's own colour follows the theme, so a resize or reload never flashes the other one.
    if (event === 'theme:changed') window.setBackgroundColor(windowBackground((payload as { dark: boolean }).dark));
    if (!isSameOrigin(window.webContents.mainFrame.url, entry.origin)) return;
    window.webContents.send(eventWireChannel(event), payload);
  });

  const badge = createPendingBadge({ platform, getWindow: () => window });
  const stopAttention = watchApprovalsForAttention({
    events: core.events,
    labelsOf: (operationId) => {
      const labels = core.gate.gate.getLive(operationId)?.labels;
      return labels ? { serverLabel: labels.server, accountLabel: labels.account } : null;
    },
    getWindow: () => window,
    badge,
    openApprovals: () => runCommand({ type: 'show-view', view: 'approvals' }),
  });

  const createWindow = (): BrowserWindow => {
    const win = new BrowserWindow(windowOptions(paths.preload, { isPackaged: app.isPackaged, dark: nativeTheme.shouldUseDarkColors }));
    hardenWebContents(win.webContents, entry.origin);
    win.once('ready-to-show', () => win.show());
    win.on('closed', () => {
      if (window === win) window = null;
    });
    win.webContents.on('render-process-gone', (_e, details) => {
      console.error(`[warden] renderer process gone: ${details.reason}`);
    });
    void win.loadURL(entry.url).catch((error: unknown) => console.error('[warden] failed to load the renderer', error));
    window = win;
    badge.refresh();
    return win;
  };

  bringForward = () => {
    const win = window && !window.isDestroyed() ? window : createWindow();
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
    return win;
  };

  // A menu item or a notification click: the window comes forward, then the page is told what to
  // show (once it has loaded, if the window had to be opened for this).
  function runCommand(command: AppCommand): void {
    const win = bringForward?.();
    if (!win) return;
    const send = () => core.events.emit('app:command', command);
    if (win.webContents.isLoading()) win.webContents.once('did-finish-load', send);
    else send();
  }

  app.on('activate', () => {
    if (!window) createWindow();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  let closed = false;
  let closing: Promise<void> | null = null;
  app.on('will-quit', (event) => {
    if (closed) return;
    event.preventDefault();
    closing ??= (async () => {
      stopAttention();
      unsubscribe();
      unbind();
      try {
        await core.close();
      } catch (error) {
        console.error('[warden] closing the core failed', error);
      } finally {
        closed = true;
        app.quit();
      }
    })();
  });

  createWindow();
  return { core, window: () => window };
}
