/**
 * Draws Warden's application icon and writes every file the installers need into build/:
 *
 *   build/icons/<n>x<n>.png   Linux (AppImage, deb): 16–1024 px, named by size as electron-builder wants
 *   build/icon.ico            Windows (app, taskbar, NSIS installer): 16, 24, 32, 48, 64, 128, 256 px
 *   build/icon.icns           macOS (app, dmg): 16–1024 px including the @2x variants
 *   build/icon.png            1024 px master
 *
 * Run with `npm run icons`. Pure TypeScript and node:zlib (no image tools), and deterministic:
 * test/unit/shell/installers.test.ts regenerates the files and compares them byte for byte.
 *
 * The mark: a white shield with a keyhole on Warden's blue-to-green tile (the sidebar's brand
 * mark), drawn as vector shapes and rasterised per size with anti-aliasing, so 16 px is drawn for
 * 16 px rather than scaled down from 1024.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodePng } from '../electron/main/png';

type Point = readonly [number, number];
/** A closed outline in unit coordinates (0..1 of the icon's side). */
type Outline = Point[];

/** Sizes of the Linux icon set (build/icons). */
export const LINUX_SIZES = [16, 24, 32, 48, 64, 128, 256, 512, 1024] as const;
/** Sizes inside build/icon.ico (256 is the largest Windows uses). */
export const ICO_SIZES = [16, 24, 32, 48, 64, 128, 256] as const;
/** ICNS entry types and their pixel sizes (ic11–ic14 are the @2x variants of 16–256 pt). */
export const ICNS_ENTRIES = [
  ['icp4', 16],
  ['icp5', 32],
  ['icp6', 64],
  ['ic07', 128],
  ['ic08', 256],
  ['ic09', 512],
  ['ic10', 1024],
  ['ic11', 32],
  ['ic12', 64],
  ['ic13', 256],
  ['ic14', 512],
] as const;

// ---- shapes -------------------------------------------------------------------------------------

function cubic(from: Point, c1: Point, c2: Point, to: Point, steps = 48): Point[] {
  const out: Point[] = [];
  for (let i = 1; i <= steps; i++) {
    const t = i / steps;
    const u = 1 - t;
    out.push([
      u * u * u * from[0] + 3 * u * u * t * c1[0] + 3 * u * t * t * c2[0] + t * t * t * to[0],
      u * u * u * from[1] + 3 * u * u * t * c1[1] + 3 * u * t * t * c2[1] + t * t * t * to[1],
    ]);
  }
  return out;
}

function roundedSquare(inset: number, radius: number): Outline {
  const a = inset;
  const b = 1 - inset;
  const r = radius;
  const k = 0.5523 * r; // circle approximation with cubics
  return [
    [a + r, a],
    [b - r, a],
    ...cubic([b - r, a], [b - r + k, a], [b, a + r - k], [b, a + r]),
    [b, b - r],
    ...cubic([b, b - r], [b, b - r + k], [b - r + k, b], [b - r, b]),
    [a + r, b],
    ...cubic([a + r, b], [a + r - k, b], [a, b - r + k], [a, b - r]),
    [a, a + r],
    ...cubic([a, a + r], [a, a + r - k], [a + r - k, a], [a + r, a]),
  ];
}

/** The shield: a gently dipped top, straight sides, curving to a point. */
const SHIELD: Outline = [
  [0.5, 0.19],
  ...cubic([0.5, 0.19], [0.59, 0.245], [0.68, 0.265], [0.77, 0.265]),
  [0.77, 0.5],
  ...cubic([0.77, 0.5], [0.77, 0.67], [0.66, 0.78], [0.5, 0.85]),
  ...cubic([0.5, 0.85], [0.34, 0.78], [0.23, 0.67], [0.23, 0.5]),
  [0.23, 0.265],
  ...cubic([0.23, 0.265], [0.32, 0.265], [0.41, 0.245], [0.5, 0.19]),
];

function circle(cx: number, cy: number, r: number, steps = 96): Outline {
  return Array.from({ length: steps }, (_, i) => [cx + r * Math.cos((2 * Math.PI * i) / steps), cy + r * Math.sin((2 * Math.PI * i) / steps)] as const);
}

/** The keyhole cut out of the shield: a round head over a tapering slot. */
const KEYHOLE: Outline[] = [circle(0.5, 0.46, 0.072), [[0.468, 0.49], [0.532, 0.49], [0.552, 0.665], [0.448, 0.665]]];

// ---- rasteriser ---------------------------------------------------------------------------------

/**
 * Coverage (0..1) of the union of `outlines` (non-zero winding) for each pixel of a size×size
 * image: `rows` sample lines per pixel row, exact horizontal coverage along each line.
 */
function coverage(outlines: readonly Outline[], size: number, rows = 8): Float32Array {
  const cover = new Float32Array(size * size);
  const edges: Array<[number, number, number, number]> = [];
  for (const outline of outlines) {
    for (let i = 0; i < outline.length; i++) {
      const [x0, y0] = outline[i]!;
      const [x1, y1] = outline[(i + 1) % outline.length]!;
      if (y0 !== y1) edges.push([x0 * size, y0 * size, x1 * size, y1 * size]);
    }
  }
  const weight = 1 / rows;
  for (let py = 0; py < size; py++) {
    for (let s = 0; s < rows; s++) {
      const y = py + (s + 0.5) / rows;
      const crossings: Array<[number, number]> = [];
      for (const [x0, y0, x1, y1] of edges) {
        if ((y0 <= y && y1 > y) || (y1 <= y && y0 > y)) {
          crossings.push([x0 + ((y - y0) / (y1 - y0)) * (x1 - x0), y1 > y0 ? 1 : -1]);
        }
      }
      crossings.sort((p, q) => p[0] - q[0]);
      let winding = 0;
      for (let i = 0; i < crossings.length - 1; i++) {
        winding += crossings[i]![1];
        if (winding === 0) continue;
        addSpan(cover, size, py, crossings[i]![0], crossings[i + 1]![0], weight);
      }
    }
  }
  return cover;
}

function addSpan(cover: Float32Array, size: number, py: number, from: number, to: number, weight: number): void {
  const a = Math.max(0, from);
  const b = Math.min(size, to);
  if (b <= a) return;
  const first = Math.floor(a);
  const last = Math.min(size - 1, Math.floor(b - 1e-9));
  const row = py * size;
  if (first === last) {
    cover[row + first]! += (b - a) * weight;
    return;
  }
  cover[row + first]! += (first + 1 - a) * weight;
  for (let x = first + 1; x < last; x++) cover[row + x]! += weight;
  cover[row + last]! += (b - last) * weight;
}

const TILE_FROM = [0x4c, 0x8d, 0xff] as const; // top left
const TILE_TO = [0x1f, 0x9d, 0x55] as const; // bottom right

/** The icon at `size` pixels, as straight-alpha RGBA. */
export function renderIcon(size: number): Uint8Array {
  // Small icons use the whole square; large ones keep the margin desktop icon grids expect.
  const inset = size <= 32 ? 0.02 : 0.08;
  const tile = coverage([roundedSquare(inset, 0.2)], size);
  const shield = coverage([SHIELD], size);
  const hole = coverage(KEYHOLE, size);
  const out = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const p = y * size + x;
      const t = (x + y + 1) / (2 * size);
      const white = Math.min(1, Math.max(0, shield[p]! - hole[p]!));
      for (let c = 0; c < 3; c++) {
        const base = TILE_FROM[c]! + (TILE_TO[c]! - TILE_FROM[c]!) * t;
        out[p * 4 + c] = Math.round(base + (255 - base) * white);
      }
      out[p * 4 + 3] = Math.round(Math.min(1, tile[p]!) * 255);
    }
  }
  return out;
}

// ---- containers ---------------------------------------------------------------------------------

/** A 32-bit BMP icon image (BITMAPINFOHEADER, bottom-up BGRA, then the 1-bit AND mask). */
function icoBitmap(size: number, rgba: Uint8Array): Buffer {
  const header = Buffer.alloc(40);
  const maskStride = Math.ceil(size / 32) * 4;
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8); // colour + mask
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  header.writeUInt32LE(size * size * 4 + maskStride * size, 20);
  const pixels = Buffer.alloc(size * size * 4);
  const mask = Buffer.alloc(maskStride * size);
  for (let y = 0; y < size; y++) {
    const row = size - 1 - y;
    for (let x = 0; x < size; x++) {
      const src = (y * size + x) * 4;
      const dst = (row * size + x) * 4;
      pixels[dst] = rgba[src + 2]!;
      pixels[dst + 1] = rgba[src + 1]!;
      pixels[dst + 2] = rgba[src]!;
      pixels[dst + 3] = rgba[src + 3]!;
      if (rgba[src + 3] === 0) mask[row * maskStride + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  return Buffer.concat([header, pixels, mask]);
}

/** A Windows .ico: BMP entries for small sizes (every Windows tool reads them), PNG for 256. */
export function buildIco(images: ReadonlyArray<{ size: number; rgba: Uint8Array; png: Buffer }>): Buffer {
  const dir = Buffer.alloc(6 + 16 * images.length);
  dir.writeUInt16LE(0, 0);
  dir.writeUInt16LE(1, 2);
  dir.writeUInt16LE(images.length, 4);
  let offset = dir.length;
  const bodies = images.map(({ size, rgba, png }, i) => {
    const body = size >= 256 ? png : icoBitmap(size, rgba);
    const e = 6 + 16 * i;
    dir[e] = size >= 256 ? 0 : size;
    dir[e + 1] = size >= 256 ? 0 : size;
    dir.writeUInt16LE(1, e + 4);
    dir.writeUInt16LE(32, e + 6);
    dir.writeUInt32LE(body.length, e + 8);
    dir.writeUInt32LE(offset, e + 12);
    offset += body.length;
    return body;
  });
  return Buffer.concat([dir, ...bodies]);
}

/** A macOS .icns of PNG entries. */
export function buildIcns(entries: ReadonlyArray<{ type: string; png: Buffer }>): Buffer {
  const parts = entries.map(({ type, png }) => {
    const head = Buffer.alloc(8);
    head.write(type, 0, 'latin1');
    head.writeUInt32BE(png.length + 8, 4);
    return Buffer.concat([head, png]);
  });
  const head = Buffer.alloc(8);
  head.write('icns', 0, 'latin1');
  head.writeUInt32BE(8 + parts.reduce((n, p) => n + p.length, 0), 4);
  return Buffer.concat([head, ...parts]);
}

/** Every icon file, by path relative to the repository root. */
export function iconFiles(): Map<string, Buffer> {
  const sizes = [...new Set<number>([...LINUX_SIZES, ...ICO_SIZES, ...ICNS_ENTRIES.map(([, s]) => s)])].sort((a, b) => a - b);
  const drawn = new Map(
    sizes.map((size) => {
      const rgba = renderIcon(size);
      return [size, { size, rgba, png: encodePng(size, size, rgba) }] as const;
    }),
  );
  const files = new Map<string, Buffer>();
  for (const size of LINUX_SIZES) files.set(`build/icons/${size}x${size}.png`, drawn.get(size)!.png);
  files.set('build/icon.png', drawn.get(1024)!.png);
  files.set('build/icon.ico', buildIco(ICO_SIZES.map((s) => drawn.get(s)!)));
  files.set('build/icon.icns', buildIcns(ICNS_ENTRIES.map(([type, s]) => ({ type, png: drawn.get(s)!.png }))));
  return files;
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  for (const [path, bytes] of iconFiles()) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
    console.log(`wrote ${path} (${bytes.length} bytes)`);
  }
}
