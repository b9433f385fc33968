/**
 * The installer configuration, checked statically (Electron cannot be downloaded here, so no
 * installer is built in tests): electron-builder's own loader and schema accept
 * electron-builder.yml, every file it names exists, the icons have the sizes each platform needs
 * and are exactly what scripts/make-icons.ts draws, native modules are unpacked from the asar, and
 * the targets, artifact names and fuses are the ones the README tells users about.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as fuses from '@electron/fuses';
import { compileGlob } from '../../../electron/core/policy/glob';
import { describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { ICNS_ENTRIES, ICO_SIZES, iconFiles, LINUX_SIZES } from '../../../scripts/make-icons';
import { pngSize } from '../../../electron/main/png';
import { APP_ID } from '../../../electron/main/app';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const require = createRequire(import.meta.url);
const read = (path: string) => readFileSync(join(root, path));
const config = parse(read('electron-builder.yml').toString('utf8')) as Record<string, Record<string, unknown>> & Record<string, unknown>;
const pkg = JSON.parse(read('package.json').toString('utf8')) as Record<string, unknown>;
const readme = read('README.md').toString('utf8');
type FuseHook = { wardenFuseConfig: (f: typeof fuses, target: { electronPlatformName: string; arch: number }) => Record<string, unknown> };
const afterPack = require(join(root, 'build/after-pack.cjs')) as FuseHook;

/** The README section a user reads to install Warden. */
function installSection(): string {
  const start = readme.indexOf('\n## Installing Warden');
  expect(start, 'README has an "Installing Warden" section').toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** Every entry of an .ico: its declared size and the size its image data really has. */
function icoEntries(bytes: Buffer): Array<{ declared: number; actual: number; format: 'png' | 'bmp' }> {
  expect(bytes.readUInt16LE(0)).toBe(0);
  expect(bytes.readUInt16LE(2)).toBe(1);
  return Array.from({ length: bytes.readUInt16LE(4) }, (_, i) => {
    const e = 6 + 16 * i;
    const declared = bytes[e] || 256;
    const data = bytes.subarray(bytes.readUInt32LE(e + 12), bytes.readUInt32LE(e + 12) + bytes.readUInt32LE(e + 8));
    const png = pngSize(data);
    if (png) return { declared, actual: png.width, format: 'png' as const };
    expect(data.readUInt32LE(0)).toBe(40); // BITMAPINFOHEADER
    expect(data.readInt32LE(8)).toBe(2 * data.readInt32LE(4)); // colour + mask
    expect(data.readUInt16LE(14)).toBe(32);
    return { declared, actual: data.readInt32LE(4), format: 'bmp' as const };
  });
}

/** Every entry of an .icns: its type and the size of its PNG. */
function icnsEntries(bytes: Buffer): Array<{ type: string; size: number | null }> {
  expect(bytes.toString('latin1', 0, 4)).toBe('icns');
  expect(bytes.readUInt32BE(4)).toBe(bytes.length);
  const out: Array<{ type: string; size: number | null }> = [];
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at + 4);
    expect(length).toBeGreaterThan(8);
    out.push({ type: bytes.toString('latin1', at, at + 4), size: pngSize(bytes.subarray(at + 8, at + length))?.width ?? null });
    at += length;
  }
  return out;
}

describe('electron-builder.yml', () => {
  it('is accepted by electron-builder itself (its loader and its configuration schema)', async () => {
    const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config') as {
      getConfig: (projectDir: string, configPath: string, fromOptions: null) => Promise<Record<string, unknown>>;
      validateConfiguration: (config: Record<string, unknown>, logger: unknown) => Promise<void>;
    };
    const { DebugLogger } = require('builder-util/out/DebugLogger') as { DebugLogger: new (enabled: boolean) => unknown };
    const loaded = await getConfig(root, join(root, 'electron-builder.yml'), null);
    await expect(validateConfiguration(loaded, new DebugLogger(false))).resolves.toBeUndefined();
    // And the schema is really checked: a misspelt key is refused.
    await expect(validateConfiguration({ ...loaded, linux: { ...(loaded.linux as object), executableNmae: 'x' } }, new DebugLogger(false))).rejects.toThrow(
      /Invalid configuration object[\s\S]*configuration\.linux/,
    );
  }, 60_000);

  it('builds AppImage and deb for Linux, dmg with the hardened runtime for macOS, NSIS for Windows', () => {
    expect(config.linux!.target).toEqual(['AppImage', 'deb']);
    expect(config.mac!.target).toEqual(['dmg']);
    expect(config.mac).toMatchObject({ hardenedRuntime: true, entitlements: 'build/entitlements.mac.plist', entitlementsInherit: 'build/entitlements.mac.plist' });
    expect(config.win!.target).toEqual(['nsis']);
    // An assisted, per-user install: no administrator rights, the person chooses the folder.
    expect(config.nsis).toMatchObject({ oneClick: false, perMachine: false, allowToChangeInstallationDirectory: true });
  });

  it('names the app once: appId is the Windows AppUserModelID main sets, productName is Warden', () => {
    expect(config.appId).toBe(APP_ID);
    expect(config.productName).toBe('Warden');
    expect(pkg.productName).toBe('Warden');
  });

  it('every file and folder it refers to exists', () => {
    const referenced = [
      config.afterPack,
      config.mac!.icon,
      config.mac!.entitlements,
      config.mac!.entitlementsInherit,
      config.win!.icon,
      config.nsis!.installerIcon,
      config.nsis!.uninstallerIcon,
      config.nsis!.installerHeaderIcon,
      config.linux!.icon,
      (config.directories as Record<string, string>).buildResources,
    ];
    for (const path of referenced) {
      expect(typeof path, String(path)).toBe('string');
      expect(existsSync(join(root, path as string)), `${path} exists`).toBe(true);
    }
    expect(statSync(join(root, config.linux!.icon as string)).isDirectory()).toBe(true);
  });

  it('unpacks every native module from the asar (keytar today), so the OS can load its .node file', () => {
    const lock = JSON.parse(read('package-lock.json').toString('utf8')) as { packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }> };
    const native = Object.entries(lock.packages)
      .filter(([path, info]) => path.startsWith('node_modules/') && !info.dev && (info.hasInstallScript || existsSync(join(root, path, 'binding.gyp'))))
      .map(([path]) => path);
    expect(native).toContain('node_modules/keytar');
    const globs = (config.asarUnpack as unknown as string[]).map(compileGlob);
    const unpacked = (file: string) => globs.some((g) => g.test(file));
    for (const path of native) expect(unpacked(`${path}/build/Release/module.node`), `${path} is unpacked`).toBe(true);
  });

  it('the Linux .desktop file is the desktopName Electron looks for (the dock badge depends on it)', () => {
    expect(config.linux).toMatchObject({ syncDesktopName: true, executableName: 'warden' });
    expect(pkg.desktopName).toBe(`${config.linux!.executableName}.desktop`);
  });
});

describe('the icons in build/', () => {
  it('Linux: one PNG per size from 16 to 1024, each really that size and named for it', () => {
    const dir = join(root, config.linux!.icon as string);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(LINUX_SIZES.map((s) => `${s}x${s}.png`).sort());
    for (const file of files) {
      const size = Number(file.split('x')[0]);
      expect(pngSize(readFileSync(join(dir, file))), file).toEqual({ width: size, height: size });
    }
  });

  it('Windows: icon.ico holds 16, 24, 32, 48, 64, 128 and 256 px images, each the size it declares', () => {
    const entries = icoEntries(read(config.win!.icon as string));
    expect(entries.map((e) => e.declared)).toEqual([...ICO_SIZES]);
    for (const e of entries) expect(e.actual).toBe(e.declared);
    // 256 as PNG, the rest as BMP, which every Windows tool (and NSIS) reads.
    expect(entries.map((e) => e.format)).toEqual(['bmp', 'bmp', 'bmp', 'bmp', 'bmp', 'bmp', 'png']);
  });

  it('macOS: icon.icns holds every size from 16 pt to 512 pt @2x (1024 px), each entry the size its type means', () => {
    const entries = icnsEntries(read(config.mac!.icon as string));
    expect(entries).toEqual(ICNS_ENTRIES.map(([type, size]) => ({ type, size })));
    expect(entries.find((e) => e.type === 'ic10')?.size).toBe(1024);
  });

  it('are exactly what scripts/make-icons.ts draws (regenerate with `npm run icons`)', () => {
    const files = iconFiles();
    expect(files.size).toBeGreaterThan(10);
    for (const [path, bytes] of files) expect(read(path).equals(bytes), `${path} is up to date`).toBe(true);
  }, 60_000);
});

describe('what the README tells users', () => {
  /** Artifact file names from the configured patterns, with `<version>` left for the reader. */
  function artifactNames(): string[] {
    const expand = (pattern: string, arch: string, ext: string) =>
      pattern
        .replaceAll('${productName}', String(pkg.productName))
        .replaceAll('${name}', String(pkg.name))
        .replaceAll('${version}', '<version>')
        .replaceAll('${arch}', arch)
        .replaceAll('${ext}', ext);
    return [
      expand(config.appImage!.artifactName as string, 'x86_64', 'AppImage'),
      expand(config.deb!.artifactName as string, 'amd64', 'deb'),
      expand(config.dmg!.artifactName as string, 'arm64', 'dmg'),
      expand(config.dmg!.artifactName as string, 'x64', 'dmg'),
      expand(config.nsis!.artifactName as string, 'x64', 'exe'),
    ];
  }

  it('names exactly the installers the configuration builds', () => {
    const section = installSection();
    const named = [...section.matchAll(/`([^`\s]+\.(?:AppImage|deb|dmg|exe))`/g)].map((m) => m[1]!);
    expect(new Set(named)).toEqual(new Set(artifactNames()));
  });

  it('lists exactly the fuses build/after-pack.cjs flips, with the same values', () => {
    const section = installSection();
    const listed = Object.fromEntries([...section.matchAll(/`(\w+)` (on|off)/g)].map((m) => [m[1]!, m[2] === 'on']));
    const configured = afterPack.wardenFuseConfig(fuses, { electronPlatformName: 'linux', arch: 1 });
    const expected = Object.fromEntries(
      Object.entries(configured)
        .filter(([key]) => /^\d+$/.test(key))
        .map(([key, on]) => [fuses.FuseV1Options[Number(key)]!, on]),
    );
    expect(Object.keys(expected).length).toBe(7);
    expect(listed).toEqual(expected);
  });
});
