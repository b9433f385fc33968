/**
 * Entry point of Warden's main process (built to out/main/index.js by electron-vite).
 *
 * All logic lives in app.ts so it can be tested with a mocked `electron`; this file only starts it.
 */
import { app } from 'electron';
import { startWarden } from './app';

startWarden().catch((error: unknown) => {
  console.error('[warden] failed to start', error);
  app.exit(1);
});
