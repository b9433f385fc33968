import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import { rendererConfig } from './scripts/renderer-vite-config';

// electron-vite builds the three Electron targets from their own folders (docs/ARCHITECTURE.md, "Processes and folders").
export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      rollupOptions: {
        input: {
          index: resolve(__dirname, 'electron/main/index.ts'),
          // The activity-log check runs in a worker thread; the core starts it from this file
          // next to the main bundle (electron/core/ledger/verify-in-worker.ts).
          'ledger-verify-worker': resolve(__dirname, 'electron/core/ledger/verify-worker.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // A sandboxed preload can require only `electron`: bundle zod and the contract into it.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve(__dirname, 'electron/preload/index.ts') },
        // Sandboxed preloads cannot be ES modules: emit CommonJS.
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: rendererConfig,
});
