/**
 * The main window's options and where its built preload and renderer live.
 *
 * `windowOptions` is pure so every security-relevant web preference is asserted by a test; a
 * preference removed or loosened here fails that test.
 */
import { join } from 'node:path';
import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * Options for Warden's one BrowserWindow (Electron security checklist).
 *
 * The renderer runs sandboxed with context isolation and no Node; it reaches main only through
 * the preload's `window.warden`. Web security stays on, insecure content and experimental or
 * Blink features stay off, `<webview>` is disabled, and dropping a file on the window cannot
 * navigate it away from our origin.
 */
export function windowOptions(preloadPath: string): BrowserWindowConstructorOptions {
  return {
    width: 1200,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: 'Warden',
    show: false,
    backgroundColor: '#111318',
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
