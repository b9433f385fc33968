/**
 * Makes sure a built renderer exists for the test host (test code only).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Returns `<root>/out/renderer`, running `npx electron-vite build` first if its index.html is missing.
 *
 * Why only when missing: `npm test` builds before the tests run; rebuilding in every test file
 * would waste the shared CI cores. Run `npm run build` after changing the renderer.
 */
export async function ensureRendererBuilt(root: string): Promise<string> {
  const dir = join(root, 'out', 'renderer');
  if (existsSync(join(dir, 'index.html'))) return dir;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('npx', ['electron-vite', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`electron-vite build failed (code ${code}, signal ${signal})`)),
    );
  });
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`electron-vite build did not produce ${dir}/index.html`);
  return dir;
}
