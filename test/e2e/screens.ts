/**
 * Screenshots of one screen at 1280×800 and 800×600 in the light and dark colour schemes, with
 * axe-core's moderate, serious and critical findings for each (test code only).
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const RESULTS_DIR = path.join(root, 'test-results');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
] as const;
let axeSource: string | null = null;

/**
 * Saves `<name>-<w>x<h>-<scheme>.png` for both sizes and schemes, scrolled to `focus` (a test id)
 * when given, and returns axe's moderate, serious and critical violations found on the way (empty: none) in the
 * parts these screens are about: the view with its banners (`main`) and the navigation.
 */
export async function screens(page: Page, name: string, focus?: string): Promise<string[]> {
  await mkdir(RESULTS_DIR, { recursive: true });
  axeSource ??= await readFile(path.join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');
  const original = page.viewportSize();
  const found: string[] = [];
  try {
    for (const size of SIZES) {
      await page.setViewportSize(size);
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        if (focus) await page.getByTestId(focus).first().scrollIntoViewIfNeeded();
        await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
        await page.screenshot({ path: path.join(RESULTS_DIR, `${name}-${size.width}x${size.height}-${scheme}.png`) });
        if (!(await page.evaluate(`typeof window.axe !== 'undefined'`))) await page.evaluate(axeSource);
        const violations = (await page.evaluate(
          `axe.run({ include: [['main'], ['nav']] }, { resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'moderate' || v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`,
        )) as string[];
        found.push(...violations.map((v) => `${name} ${size.width}x${size.height} ${scheme}: ${v}`));
      }
    }
  } finally {
    if (original) await page.setViewportSize(original);
    await page.emulateMedia({ colorScheme: 'light' });
  }
  return found;
}
