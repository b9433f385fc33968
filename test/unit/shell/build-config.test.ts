import { describe, expect, it } from 'vitest';
import config from '../../../electron.vite.config';
import { builtPaths } from '../../../electron/main/window';

type TargetConfig = { build?: Record<string, unknown> & { rollupOptions?: { output?: Record<string, unknown> } } };
const targets = config as unknown as { main: TargetConfig; preload: TargetConfig; renderer: TargetConfig };

describe('electron-vite build layout', () => {
  it('builds the preload as a self-contained CommonJS file where main looks for it', () => {
    const preload = targets.preload.build!;
    expect(preload.outDir).toBe('out/preload');
    expect(preload.rollupOptions?.output).toMatchObject({ format: 'cjs', entryFileNames: '[name].cjs' });
    // A sandboxed preload can only require `electron`: dependencies must be bundled, not external.
    expect(preload.externalizeDeps).toBe(false);
    expect(builtPaths('out/main').preload.replaceAll('\\', '/')).toBe('out/preload/index.cjs');
  });

  it('puts the renderer where the app:// protocol serves it from', () => {
    expect(String(targets.renderer.build!.outDir).replaceAll('\\', '/')).toMatch(/\/out\/renderer$/);
    expect(targets.main.build!.outDir).toBe('out/main');
  });
});
