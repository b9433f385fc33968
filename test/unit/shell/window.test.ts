import { describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { builtPaths, windowOptions } from '../../../electron/main/window';

describe('the main window', () => {
  it('runs the renderer sandboxed, isolated, without Node, with every checklist preference pinned', () => {
    const options = windowOptions('/app/out/preload/index.cjs');
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
    });
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
