/**
 * The Electron app lifecycle: single instance, secure sessions, the renderer's origin, the core,
 * the IPC binding, the window, and a clean shutdown that closes the core.
 *
 * Kept separate from index.ts (which only calls `startWarden`) so tests can drive the lifecycle
 * with a mocked `electron` module.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, ipcMain, session } from 'electron';
import { eventWireChannel } from '../../shared/ipc';
import { createCore, type WardenCore } from '../core/app-core';
import { openLedgerForApp } from '../core/ledger';
import { loadOrganizationPolicy } from '../core/policy/organization';
import { loadPolicyFile, savePolicyFile } from '../core/settings/policy-file';
import { createDialogPrompter, createServerChangeConfirmer } from './dialogs';
import { createDialogElicitor } from './elicitor';
import { openElectronSettingsStore } from './electron-settings-store';
import { bindContract, createSenderCheck } from './ipc';
import { registerAppScheme, rendererEntry, serveRenderer } from './protocol';
import { hardenWebContents, isSameOrigin, secureAllSessions, systemBrowser } from './security';
import { builtPaths, windowOptions } from './window';

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
}

/**
 * Where an administrator puts the managed (organization) policy: a machine-wide file a normal
 * user cannot edit. Read-only in the app.
 */
export function organizationPolicyPath(platform: NodeJS.Platform, env: Record<string, string | undefined>): string {
  if (platform === 'win32') return join(env.ProgramData ?? 'C:\\ProgramData', 'Warden', 'policy.json');
  if (platform === 'darwin') return '/Library/Application Support/Warden/policy.json';
  return '/etc/warden/policy.json';
}

/**
 * Opens everything durable the core needs, in the user-data folder: the hash-chained ledger
 * (recovering what the last exit interrupted), settings in electron-store, the person's rules,
 * and the organization policy. One redactor is shared by the keychain and the ledger so no
 * secret value is ever written to disk.
 */
export async function openDurableState(): Promise<Partial<Parameters<typeof createCore>[0]>> {
  const userData = app.getPath('userData');
  const { ledger, onSecretValue } = await openLedgerForApp(userData);
  const rulesStore = openElectronSettingsStore('policy');
  const rules = loadPolicyFile(rulesStore);
  if (rules.problem) {
    console.error(`[warden] ${rules.problem}`);
    // Keep the unusable file for the person; new rule changes are saved to a fresh one.
    if (existsSync(rulesStore.path)) copyFileSync(rulesStore.path, `${rulesStore.path}.invalid-${Date.now()}`);
  }
  const org = loadOrganizationPolicy(organizationPolicyPath(process.platform, process.env));
  for (const e of org.errors) console.error(`[warden] organization policy: ${e}`);
  return {
    ledger,
    servers: { settingsStore: openElectronSettingsStore(), onSecretValue },
    // Model providers in their own file (`models.json`); their keys only in the keychain.
    models: { settingsStore: openElectronSettingsStore('models') },
    gate: {
      initialPolicy: { user: rules.user, conversation: rules.conversation, organization: org.rules },
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
 * Starts Warden's main process. Resolves null (after asking the app to quit) when another
 * instance already holds the single-instance lock; that instance is focused instead.
 */
export async function startWarden(options: StartOptions = {}): Promise<RunningWarden | null> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  // Every renderer sandboxed, whatever options a future window passes (checklist: sandbox all).
  app.enableSandbox();
  registerAppScheme();

  const mainDir = options.mainDir ?? dirname(fileURLToPath(import.meta.url));
  const paths = builtPaths(mainDir);
  const entry = rendererEntry(app.isPackaged, options.env ?? process.env);
  let window: BrowserWindow | null = null;

  app.on('second-instance', () => {
    if (!window || window.isDestroyed()) return;
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, entry.origin));

  await app.whenReady();
  secureAllSessions(app, session.defaultSession, entry.origin);
  if (entry.servesAppScheme) serveRenderer(paths.rendererDir);

  const durable = await (options.openState ?? openDurableState)();
  // The native dialog is the core's only approver: the renderer has no approve channel.
  const core = (options.makeCore ?? createCore)({
    ...durable,
    version: app.getVersion(),
    platform: process.platform,
    browser: systemBrowser,
    elicitor: createDialogElicitor(() => window),
    // Saving a server decides what runs on this machine: a person confirms it natively.
    confirmServerChange: createServerChangeConfirmer(() => window),
    // First run with no servers: add the in-process demo server (README: useful offline, no keys).
    offerDemoServer: true,
    gate: { ...durable.gate, prompter: createDialogPrompter(() => window) },
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
    if (!isSameOrigin(window.webContents.mainFrame.url, entry.origin)) return;
    window.webContents.send(eventWireChannel(event), payload);
  });

  const createWindow = (): BrowserWindow => {
    const win = new BrowserWindow(windowOptions(paths.preload));
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
    return win;
  };

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
