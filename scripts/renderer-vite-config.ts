/**
 * The renderer's Vite settings, shared by electron.vite.config.ts (dev, build) and the test that
 * runs the dev server under the production CSP — one definition, so the two cannot drift.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { licensesPlugin } from './licenses';
import { externalizeInlineScriptsInDev } from './vite-csp-dev';

// import.meta.url, not import.meta.dirname: Vite rewrites the former per file when it bundles the config.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const rendererConfig = {
  root: resolve(root, 'renderer'),
  // Dev keeps the production CSP: inline scripts the dev tooling injects become same-origin files.
  // The build also writes licenses.json (what Warden ships and under which licence) for About.
  plugins: [react(), externalizeInlineScriptsInDev(), licensesPlugin(root)],
  build: {
    outDir: resolve(root, 'out/renderer'),
    rollupOptions: { input: { index: resolve(root, 'renderer/index.html') } },
  },
};
