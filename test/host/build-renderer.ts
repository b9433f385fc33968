/**
 * Makes sure a current built renderer exists for the test host (test code only).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Newest modification time (ms) of any file under `dir`. */
async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  }
  return newest;
}

/**
 * Returns `<root>/out/renderer`, running `npx electron-vite build` first if its index.html is
 * missing or older than a file under renderer/.
 *
 * Why the staleness check: `npm test` builds before the tests run, but an e2e run on its own after
 * a renderer edit would otherwise test the previous build and pass or fail for the wrong reason.
 */
export async function ensureRendererBuilt(root: string): Promise<string> {
  const dir = join(root, 'out', 'renderer');
  const index = join(dir, 'index.html');
  if (existsSync(index) && (await stat(index)).mtimeMs >= (await newestMtime(join(root, 'renderer')))) return dir;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('npx', ['electron-vite', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`electron-vite build failed (code ${code}, signal ${signal})`)),
    );
  });
  if (!existsSync(index)) throw new Error(`electron-vite build did not produce ${index}`);
  return dir;
}
