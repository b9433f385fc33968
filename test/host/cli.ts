/**
 * `npm run host`: serves the built renderer with a demo core so people can look at the UI in a
 * normal browser (test code only, never shipped). Builds the renderer first if it is missing.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createCore } from '../../electron/core/app-core';
import { ensureRendererBuilt } from './build-renderer';
import { acceptDefaultFileDialogs } from './standin-file-dialogs';
import { startTestHost } from './test-host';
import { confirmEveryServerChange } from './standin-server-confirmer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };

const rendererDir = await ensureRendererBuilt(root);
// No native dialogs in a browser: import opens the offered default location, as a person pressing Open would,
// and server changes are confirmed as a person pressing Save would.
const core = createCore({ confirmServerChange: confirmEveryServerChange, version: `${version}-host`, offerDemoServer: true, autoConnect: true, fileDialogs: acceptDefaultFileDialogs });
const host = await startTestHost({ core, rendererDir });
console.log(`Warden test host (demo core, loopback only): ${host.url}`);
console.log('Open it in a browser. Ctrl+C stops it.');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await host.close();
  await core.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
