/**
 * The main window's options and where its built preload and renderer live.
 *
 * `windowOptions` is pure so every security-relevant web preference is asserted by a test; a
 * preference removed or loosened here fails that test.
 */
import { join } from 'node:path';
import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The window's own colour, shown before the page paints and behind it while it resizes: the
 * page background of the light and dark themes, so opening Warden in dark mode never flashes white.
 */
export const WINDOW_BACKGROUND = { light: '#f5f6f8', dark: '#0f1317' } as const;

/** The window background for the theme Warden is drawn in now. */
export function windowBackground(dark: boolean): string {
  return dark ? WINDOW_BACKGROUND.dark : WINDOW_BACKGROUND.light;
}

/** What the window options depend on besides the preload. */
export interface WindowLook {
  /** An installed app: DevTools cannot be opened at all. */
  isPackaged: boolean;
  /** Drawn dark right now (nativeTheme, after the theme preference was applied). */
  dark: boolean;
}

/**
 * Options for Warden's one BrowserWindow (Electron security checklist).
 *
 * The renderer runs sandboxed with context isolation and no Node; it reaches main only through
 * the preload's `window.warden`. Web security stays on, insecure content and experimental or
 * Blink features stay off, `<webview>` is disabled, and dropping a file on the window cannot
 * navigate it away from our origin. An installed app has no DevTools (`devTools: false`, so
 * neither a shortcut nor `openDevTools()` can open them); a developer run keeps them. Without a
 * `look`, the installed app's options are returned.
 */
export function windowOptions(preloadPath: string, look: WindowLook = { isPackaged: true, dark: false }): BrowserWindowConstructorOptions {
  return {
    width: 1200,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: 'Warden',
    show: false,
    backgroundColor: windowBackground(look.dark),
    webPreferences: {
      preload: preloadPath,
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: !look.isPackaged,
    },
  };
}

/** Where electron-vite puts the built targets, relative to the built main bundle's folder. */
export interface BuiltPaths {
  /** The CommonJS preload (sandboxed preloads cannot be ES modules). */
  preload: string;
  /** The folder served on app://warden/. */
  rendererDir: string;
}

/**
 * Paths of the built preload and renderer, given the folder of the built main bundle
 * (`out/main`): `out/preload/index.cjs` and `out/renderer` (see electron.vite.config.ts).
 */
export function builtPaths(mainDir: string): BuiltPaths {
  return {
    preload: join(mainDir, '..', 'preload', 'index.cjs'),
    rendererDir: join(mainDir, '..', 'renderer'),
  };
}
