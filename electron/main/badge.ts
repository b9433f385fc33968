/**
 * The pending-approval count on the dock or taskbar: `app.setBadgeCount` where Electron supports
 * it (macOS dock; Linux docks that speak the LauncherEntry D-Bus API, matched through the
 * `desktopName` in package.json), and a 16×16 overlay icon on the Windows taskbar button, whose
 * description is what a screen reader says.
 */
import { app, nativeImage, type BrowserWindow, type NativeImage } from 'electron';
import { encodePng } from './png';

/** Overlay size Windows shows (it scales anything else to this). */
export const OVERLAY_SIZE = 16;
/** Overlay disc colour: Warden's warning amber, dark enough for white digits (contrast ≈ 5:1). */
const DISC = [0xb4, 0x53, 0x09] as const;

// 3×5 digit glyphs, rows top to bottom, '1' = lit. Drawn at twice the size.
const GLYPHS: Record<string, string[]> = {
  '0': ['111', '101', '101', '101', '111'],
  '1': ['010', '110', '010', '010', '111'],
  '2': ['111', '001', '111', '100', '111'],
  '3': ['111', '001', '111', '001', '111'],
  '4': ['101', '101', '111', '001', '001'],
  '5': ['111', '100', '111', '001', '111'],
  '6': ['111', '100', '111', '101', '111'],
  '7': ['111', '001', '010', '010', '010'],
  '8': ['111', '101', '111', '101', '111'],
  '9': ['111', '101', '111', '001', '111'],
  '+': ['000', '010', '111', '010', '000'],
};

/** What the overlay shows for a count: the digit, or "9+" from ten on. */
export function overlayText(count: number): string {
  return count > 9 ? '9+' : String(Math.max(0, Math.floor(count)));
}

/** The words a screen reader says for the badge. */
export function badgeDescription(count: number): string {
  if (count <= 0) return '';
  return count === 1 ? '1 tool call is waiting for your approval' : `${count} tool calls are waiting for your approval`;
}

/**
 * RGBA pixels of the overlay: an anti-aliased amber disc with the count in white, clipped to the
 * disc. Pure, so a test can read the pixels.
 */
export function overlayPixels(count: number): Uint8Array {
  const size = OVERLAY_SIZE;
  const out = new Uint8Array(size * size * 4);
  const coverage = new Float32Array(size * size);
  const centre = size / 2;
  const radius = size / 2 - 0.5;
  const samples = 4;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let inside = 0;
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          const dx = x + (sx + 0.5) / samples - centre;
          const dy = y + (sy + 0.5) / samples - centre;
          if (dx * dx + dy * dy <= radius * radius) inside++;
        }
      }
      coverage[y * size + x] = inside / (samples * samples);
    }
  }
  const lit = new Uint8Array(size * size);
  const text = overlayText(count);
  const scale = 2;
  const glyphWidth = 3 * scale;
  const width = text.length * glyphWidth + (text.length - 1);
  const left = Math.floor((size - width) / 2);
  const top = Math.floor((size - 5 * scale) / 2);
  [...text].forEach((ch, i) => {
    const rows = GLYPHS[ch] ?? GLYPHS['0']!;
    rows.forEach((row, ry) => {
      [...row].forEach((bit, rx) => {
        if (bit !== '1') return;
        for (let py = 0; py < scale; py++) {
          for (let px = 0; px < scale; px++) {
            const x = left + i * (glyphWidth + 1) + rx * scale + px;
            const y = top + ry * scale + py;
            if (x >= 0 && x < size && y >= 0 && y < size) lit[y * size + x] = 1;
          }
        }
      });
    });
  });
  for (let p = 0; p < size * size; p++) {
    const colour = lit[p] ? [255, 255, 255] : DISC;
    out[p * 4] = colour[0]!;
    out[p * 4 + 1] = colour[1]!;
    out[p * 4 + 2] = colour[2]!;
    out[p * 4 + 3] = Math.round(coverage[p]! * 255);
  }
  return out;
}

/** Sets the pending count on the dock or taskbar; remembers it for a window created later. */
export interface PendingBadge {
  set(count: number): void;
  /** Re-applies the current count (a new window on Windows starts without an overlay). */
  refresh(): void;
}

/** The badge for this platform. */
export function createPendingBadge(options: { platform: NodeJS.Platform; getWindow: () => BrowserWindow | null }): PendingBadge {
  const images = new Map<string, NativeImage>();
  const overlay = (count: number): NativeImage => {
    const text = overlayText(count);
    let image = images.get(text);
    if (!image) {
      image = nativeImage.createFromBuffer(encodePng(OVERLAY_SIZE, OVERLAY_SIZE, overlayPixels(count)));
      images.set(text, image);
    }
    return image;
  };
  let current = 0;
  const apply = () => {
    try {
      if (options.platform === 'win32') {
        const window = options.getWindow();
        if (!window || window.isDestroyed()) return;
        window.setOverlayIcon(current > 0 ? overlay(current) : null, badgeDescription(current));
      } else if (options.platform === 'darwin' || options.platform === 'linux') {
        // false on a Linux desktop without a LauncherEntry dock: nothing else to do there.
        app.setBadgeCount(current);
      }
    } catch (error) {
      console.warn('[warden] could not set the pending-approval badge', error);
    }
  };
  return {
    set(count) {
      const next = Math.max(0, Math.floor(count));
      if (next === current) return;
      current = next;
      apply();
    },
    refresh: apply,
  };
}
