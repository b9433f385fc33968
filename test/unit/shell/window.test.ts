import { describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { builtPaths, WINDOW_BACKGROUND, windowOptions } from '../../../electron/main/window';

describe('the main window', () => {
  it('runs the renderer sandboxed, isolated, without Node, with every checklist preference pinned', () => {
    const options = windowOptions('/app/out/preload/index.cjs', { isPackaged: true, dark: false });
    // Exact equality: removing, loosening or adding a web preference fails this test.
    expect(options.webPreferences).toStrictEqual({
      preload: '/app/out/preload/index.cjs',
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
      devTools: false,
    });
    // Only a developer run may open DevTools; nothing else differs.
    expect(windowOptions('/app/out/preload/index.cjs', { isPackaged: false, dark: false }).webPreferences).toStrictEqual({
      ...options.webPreferences,
      devTools: true,
    });
    // Without a look, the safe (installed) options.
    expect(windowOptions('/app/out/preload/index.cjs')).toStrictEqual(options);
  });

  it('is created in the colour of the theme it will be drawn in, so dark mode never flashes white', () => {
    expect(windowOptions('/p', { isPackaged: true, dark: true }).backgroundColor).toBe(WINDOW_BACKGROUND.dark);
    expect(windowOptions('/p', { isPackaged: true, dark: false }).backgroundColor).toBe(WINDOW_BACKGROUND.light);
  });

  it.each([
    ['sandbox', true],
    ['contextIsolation', true],
    ['nodeIntegration', false],
    ['nodeIntegrationInSubFrames', false],
    ['webSecurity', true],
    ['allowRunningInsecureContent', false],
    ['experimentalFeatures', false],
    ['webviewTag', false],
    ['navigateOnDragDrop', false],
    ['spellcheck', false],
  ] as const)('pins %s to %s', (key, value) => {
    expect(windowOptions('/p').webPreferences?.[key]).toBe(value);
  });

  it('enables no Blink features and no extra preload-level escape hatches', () => {
    const prefs = windowOptions('/p').webPreferences ?? {};
    expect(prefs).not.toHaveProperty('enableBlinkFeatures');
    expect(prefs).not.toHaveProperty('additionalArguments');
    expect(prefs).not.toHaveProperty('disableBlinkFeatures');
  });

  it('stays hidden until ready so no unstyled or half-loaded page is shown', () => {
    expect(windowOptions('/p').show).toBe(false);
  });

  it('points at the CommonJS preload and the renderer that electron-vite builds', () => {
    const paths = builtPaths('/app/out/main');
    expect(paths.preload).toBe('/app/out/preload/index.cjs');
    expect(paths.rendererDir).toBe('/app/out/renderer');
  });
});
