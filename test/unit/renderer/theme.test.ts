/**
 * The two themes, checked from their source (renderer/src/theme.css): every text colour meets
 * WCAG AA against every background it is used on (4.5:1; 3:1 for control outlines and the focus
 * ring), in light and in dark, and the window's own background (electron/main/window.ts) is the
 * page's, so opening or resizing Warden never flashes the other theme's colour.
 *
 * axe checks what a screen renders; this checks every pairing the stylesheets allow, including
 * states no e2e screen happens to show.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WINDOW_BACKGROUND } from '../../../electron/main/window';

const css = readFileSync(fileURLToPath(new URL('../../../renderer/src/theme.css', import.meta.url)), 'utf8');

/** The custom properties of a block of theme.css. */
function tokens(block: string): Record<string, string> {
  return Object.fromEntries([...block.matchAll(/--([\w-]+):\s*([^;]+);/g)].map((m) => [m[1]!, m[2]!.trim()]));
}
const light = tokens(css.slice(0, css.indexOf('@media')));
const dark = { ...light, ...tokens(css.slice(css.indexOf('@media'))) };

function luminance(hex: string): number {
  const h = hex.replace('#', '');
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

/** [text, backgrounds it sits on] as the stylesheets use them. */
const TEXT_ON: Array<[string, string[]]> = [
  ['text', ['bg', 'surface', 'surface-2', 'surface-hover', 'neutral-bg']],
  ['text-muted', ['bg', 'surface', 'surface-2', 'surface-hover', 'neutral-bg']],
  ['accent', ['surface', 'surface-2', 'bg']],
  ['on-accent', ['accent-bg', 'accent-bg-hover']],
  ['ok-text', ['ok-bg', 'surface']],
  ['warn-text', ['warn-bg', 'surface']],
  ['danger-text', ['danger-bg', 'surface']],
  ['danger-strong', ['surface']],
  ['info-text', ['info-bg']],
  ['auth-text', ['auth-bg']],
  ['on-warn-strong', ['warn-strong']],
  ['claim-label', ['surface', 'surface-2']],
  ['claim-text', ['surface', 'surface-hover']],
  ['log-text', ['log-bg']],
  ['sidebar-text', ['sidebar-bg', 'sidebar-hover']],
  ['sidebar-muted', ['sidebar-bg']],
  ['sidebar-active-text', ['sidebar-active']],
];
/** Non-text parts that must stand out 3:1 (WCAG 1.4.11). */
const OUTLINES: Array<[string, string[]]> = [
  ['border-control', ['surface', 'surface-2']],
  ['focus', ['surface', 'bg']],
  ['sidebar-focus', ['sidebar-bg']],
];

describe('theme colours', () => {
  for (const [name, theme] of [
    ['light', light],
    ['dark', dark],
  ] as const) {
    it(`${name}: every text colour meets 4.5:1 on every background it is used on, and outlines 3:1`, () => {
      const failures: string[] = [];
      for (const [fg, bgs] of TEXT_ON) for (const bg of bgs) if (contrast(theme[fg]!, theme[bg]!) < 4.5) failures.push(`${fg} on ${bg}: ${contrast(theme[fg]!, theme[bg]!).toFixed(2)}`);
      for (const [fg, bgs] of OUTLINES) for (const bg of bgs) if (contrast(theme[fg]!, theme[bg]!) < 3) failures.push(`${fg} on ${bg}: ${contrast(theme[fg]!, theme[bg]!).toFixed(2)}`);
      expect(failures).toEqual([]);
    });
  }

  it('the dark theme overrides every colour the light theme defines that text sits on', () => {
    for (const key of ['bg', 'surface', 'surface-2', 'text', 'text-muted', 'accent']) expect(dark[key]).not.toBe(light[key]);
  });

  it('the window background before the page paints is the page background of each theme', () => {
    expect(WINDOW_BACKGROUND).toEqual({ light: light.bg, dark: dark.bg });
  });
});
