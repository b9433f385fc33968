/**
 * How every e2e suite looks at a screen: screenshots at 1280×800 and 800×600, in the light and the
 * dark theme (Playwright's `prefers-color-scheme` emulation, which is what Electron's
 * `nativeTheme` drives in the app), saved to test-results/, plus checks a person would make:
 *
 * - axe-core finds no moderate, serious or critical violation (colour contrast included) in either theme;
 * - nothing is cut off: no text ends in an ellipsis or a clamp the person cannot expand, no
 *   element sticks out past the right edge of the window unless it sits in a scrolling box, no
 *   control runs over the edge of its box, and no box's content spills over the boxes after it
 *   (a header overflowing into rows);
 * - the page itself never scrolls sideways.
 *
 * Why one helper: a screen is only judged the same way everywhere if every suite calls the same
 * code; a failure names the screen, the size, the theme and the element, so it can be fixed.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Where screenshots go (the guide's test-results/). */
export const RESULTS_DIR = path.join(root, 'test-results');
/** The two window sizes every screen is judged at. */
export const SIZES = [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
] as const;
/** Both themes. */
export const SCHEMES = ['light', 'dark'] as const;
export type Scheme = (typeof SCHEMES)[number];

/** One axe violation, reduced to what a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** What `look` found; it throws when any list is non-empty unless `expectProblems` is set. */
export interface LookReport {
  screenshots: string[];
  /** Moderate, serious or critical axe violations, per size and theme. */
  axe: Array<{ size: string; scheme: Scheme; violations: AxeViolation[] }>;
  /** Clipping and overflow found by `layoutProblems`, per size and theme. */
  layout: Array<{ size: string; scheme: Scheme; problems: string[] }>;
}

export interface LookOptions {
  /** A test id (or locator) to scroll into the window before each screenshot; default: the top of the view. */
  focus?: string | Locator;
  /** Arranges the screen before each shot instead of `focus` (e.g. scroll a message list to its end). */
  arrange?: (page: Page) => Promise<void>;
  /** CSS selector axe and the layout checks cover; default: the whole document. */
  scope?: string;
  /** Return the problems instead of throwing (for a test that proves the checks catch something). */
  expectProblems?: boolean;
}

let axeSource: string | null = null;

/** Runs axe-core in the page (injected once per document) and returns moderate, serious and critical violations. */
export async function axeViolations(page: Page, scope?: string): Promise<AxeViolation[]> {
  axeSource ??= await readFile(path.join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(`typeof window.axe !== 'undefined'`))) await page.evaluate(axeSource);
  const context = scope ? `document.querySelector(${JSON.stringify(scope)})` : 'document';
  const all = (await page.evaluate(
    `axe.run(${context}, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 6).map((n) => n.target.join(' ') + (n.failureSummary ? ' — ' + n.failureSummary.split('\\n').slice(1, 2).join(' ').trim() : '')) })))`,
  )) as AxeViolation[];
  return all.filter((v) => v.impact === 'moderate' || v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Finds what a person would see as cut off or spilling over, inside `scope` (default: the whole
 * frame). Runs in the page; returns one sentence per problem naming the element and its text.
 */
export async function layoutProblems(page: Page, scope?: string): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const scope = ${scope ? `document.querySelector(${JSON.stringify(scope)})` : 'document.body'};
    if (!scope) return ['the scope ${scope ?? 'body'} is not on the page'];
    const out = [];
    const name = (el) => {
      const id = el.getAttribute('data-testid');
      const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
      const text = (el.innerText || el.getAttribute('aria-label') || '').replace(/\\s+/g, ' ').trim().slice(0, 60);
      return el.tagName.toLowerCase() + (id ? '[data-testid=' + id + ']' : cls) + (text ? ' "' + text + '"' : '');
    };
    const visible = (el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return false;
      const s = getComputedStyle(el);
      return s.visibility !== 'hidden' && s.display !== 'none';
    };
    const scrolls = (s) => s === 'auto' || s === 'scroll';
    const content = document.querySelector('.content');
    if (content && content.scrollWidth > content.clientWidth + 1) out.push('the view area scrolls sideways (' + content.scrollWidth + ' px of content in ' + content.clientWidth + ' px)');
    if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push('the page scrolls sideways');
    for (const el of scope.querySelectorAll('*')) {
      if (!visible(el) || el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
      const s = getComputedStyle(el);
      // Text hidden on purpose for assistive technology only (clipped to nothing, or a 1 px box) is not "cut off".
      const hiddenForScreenReaders = (x) => { const c = getComputedStyle(x); const r = x.getBoundingClientRect(); return c.clipPath !== 'none' || c.clip !== 'auto' || (r.width <= 1 && r.height <= 1); };
      if (el.closest('.visually-hidden') || hiddenForScreenReaders(el) || el.parentElement && hiddenForScreenReaders(el.parentElement)) continue;
      // Text cut by an ellipsis or a line clamp: the rest cannot be read without hovering.
      if (s.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) out.push('text cut off with an ellipsis: ' + name(el));
      if (s.webkitLineClamp && s.webkitLineClamp !== 'none' && el.scrollHeight > el.clientHeight + 1) out.push('text clamped (lines hidden): ' + name(el));
      // Sticking out past the right edge of the window, unless a scrolling box holds it.
      const r = el.getBoundingClientRect();
      if (r.right > window.innerWidth + 1) {
        let held = false;
        for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
          if (p === content) break;
          if (scrolls(getComputedStyle(p).overflowX)) { held = true; break; }
        }
        if (!held) out.push('sticks out past the right edge of the window by ' + Math.round(r.right - window.innerWidth) + ' px: ' + name(el));
      }
      // A control wider than the box it sits in (a button running over the edge of its card).
      if (['button', 'select', 'input', 'textarea'].includes(el.tagName.toLowerCase()) && el.parentElement) {
        const box = el.parentElement.getBoundingClientRect();
        if (r.right > box.right + 1 && !scrolls(getComputedStyle(el.parentElement).overflowX)) out.push('a control runs over the edge of its box by ' + Math.round(r.right - box.right) + ' px: ' + name(el));
      }
      // A box whose content spills out over what follows it (e.g. a fixed-height header).
      const tag = el.tagName.toLowerCase();
      if (!['html', 'body', 'pre', 'textarea', 'select', 'option', 'svg'].includes(tag) && !scrolls(s.overflowY) && s.overflowY !== 'hidden' && s.overflowY !== 'clip'
          && el.scrollHeight > el.clientHeight + 2 && el.clientHeight > 0 && s.display !== 'inline') {
        out.push('content spills out of its box (' + el.scrollHeight + ' px in ' + el.clientHeight + ' px): ' + name(el));
      }
      // Text hidden by overflow: hidden in a box too small for it.
      if ((s.overflowX === 'hidden' || s.overflowX === 'clip') && el.scrollWidth > el.clientWidth + 1 && el.children.length === 0 && (el.textContent || '').trim()) {
        out.push('text cut off at the edge of its box: ' + name(el));
      }
    }
    // One report per element is enough; nested duplicates add nothing.
    return [...new Set(out)].slice(0, 25);
  })()`)) as string[];
}

/** Waits two frames so a layout change (viewport, theme) has been painted. */
async function settle(page: Page): Promise<void> {
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
}

/**
 * Screenshots `name` at both sizes in both themes and checks each one (see the file comment).
 * Restores the viewport and the colour scheme afterwards. Throws one error listing every problem.
 */
export async function look(page: Page, name: string, options: LookOptions = {}): Promise<LookReport> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const original = page.viewportSize();
  const report: LookReport = { screenshots: [], axe: [], layout: [] };
  try {
    for (const size of SIZES) {
      await page.setViewportSize(size);
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await settle(page);
        const focus = typeof options.focus === 'string' ? page.getByTestId(options.focus) : options.focus;
        if (options.arrange) await options.arrange(page);
        else if (focus) await focus.first().scrollIntoViewIfNeeded();
        else await page.evaluate(`document.querySelector('.content')?.scrollTo(0, 0)`);
        await settle(page);
        const file = path.join(RESULTS_DIR, `${name}-${size.width}x${size.height}-${scheme}.png`);
        await page.screenshot({ path: file });
        report.screenshots.push(file);
        const label = `${size.width}x${size.height}`;
        const violations = await axeViolations(page, options.scope);
        if (violations.length) report.axe.push({ size: label, scheme, violations });
        const problems = await layoutProblems(page, options.scope);
        if (problems.length) report.layout.push({ size: label, scheme, problems });
      }
    }
  } finally {
    if (original) await page.setViewportSize(original);
    await page.emulateMedia({ colorScheme: 'light' });
  }
  if (!options.expectProblems && (report.axe.length || report.layout.length)) {
    const lines = [
      ...report.axe.flatMap((a) => a.violations.map((v) => `${name} ${a.size} ${a.scheme}: axe ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join('; ')}`)),
      ...report.layout.flatMap((l) => l.problems.map((p) => `${name} ${l.size} ${l.scheme}: ${p}`)),
    ];
    throw new Error(`What a person would see as wrong on "${name}":\n${lines.join('\n')}`);
  }
  return report;
}
