/**
 * Runs `verifyLedger` in a worker thread, so checking the activity log from Settings never
 * blocks the main process.
 *
 * In the app the worker is its own file next to the main bundle (electron.vite.config.ts builds
 * `ledger-verify-worker.js` from verify-worker.ts). Run from source (tests, tsx) there is no
 * bundle: the TypeScript entry is loaded through tsx's loader inside the worker.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { LedgerVerifyResult } from '../../../shared/domain/ledger';
import type { VerifyOptions } from './verify';

/** The worker's file name next to the built main bundle. */
export const VERIFY_WORKER_BUNDLE = 'ledger-verify-worker.js';
const VERIFY_WORKER_SOURCE = 'verify-worker.ts';

/**
 * The file URL of tsx's ESM API (`tsImport`), read from its package exports. Its CommonJS build
 * cannot load the ESM part inside a worker, so the `import` entry is used.
 */
function tsxEsmApi(from: string): string {
  const packageJson = createRequire(from).resolve('tsx/package.json');
  const exported = (JSON.parse(readFileSync(packageJson, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!;
  return pathToFileURL(join(dirname(packageJson), exported.import.default)).href;
}

/** Starts the verify worker for `dir`, from the bundle or (running from source) through tsx. */
function startWorker(dir: string, options: VerifyOptions): Worker {
  // The key goes to the worker as its secret's hex, in this process's memory only.
  const workerData = { dir, keyHex: options.key?.secretHex() ?? null, anchor: options.anchor ?? null };
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const entry = new URL(VERIFY_WORKER_SOURCE, here).href;
    const tsx = tsxEsmApi(here);
    const boot = `import(${JSON.stringify(tsx)}).then((m) => m.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`;
    return new Worker(boot, { eval: true, workerData });
  }
  return new Worker(new URL(VERIFY_WORKER_BUNDLE, here), { workerData });
}

/**
 * Verifies the ledger in `dir` off the main thread. Rejects with the worker's message when the
 * folder cannot be read or the worker dies; resolves with `verifyLedger`'s result otherwise.
 */
export function verifyLedgerInWorker(dir: string, options: VerifyOptions = {}): Promise<LedgerVerifyResult> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const worker = startWorker(dir, options);
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
      void worker.terminate();
    };
    worker.once('message', (message: { ok: true; result: LedgerVerifyResult } | { ok: false; message: string }) =>
      finish(() => (message.ok ? resolve(message.result) : reject(new Error(message.message)))),
    );
    worker.once('error', (error) => finish(() => reject(error)));
    worker.once('exit', (code) => finish(() => reject(new Error(`the ledger check stopped before it finished (exit code ${code})`))));
  });
}
