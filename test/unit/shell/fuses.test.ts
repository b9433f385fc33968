import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import * as realFuses from '@electron/fuses';
import { FuseV1Options, FuseVersion } from '@electron/fuses';

const require = createRequire(import.meta.url);
type Fuses = typeof realFuses;
type Hook = ((context: unknown, fuses?: Fuses) => Promise<void>) & {
  wardenFuseConfig: (fuses: Fuses, target: { electronPlatformName: string; arch: number }) => Record<string, unknown>;
  electronBinaryPath: (context: unknown) => string;
};
const afterPack = require('../../../build/after-pack.cjs') as Hook;

const ARM64 = 3;
const X64 = 1;
function context(platform: string, arch = X64, appOutDir = '/dist/linux-unpacked') {
  return {
    appOutDir,
    electronPlatformName: platform,
    arch,
    packager: { appInfo: { productFilename: 'Warden' }, executableName: 'warden' },
  };
}

/** The fuses Warden ships with: exactly these, no more, no fewer. */
const expectedFuses = {
  [FuseV1Options.RunAsNode]: false,
  [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
  [FuseV1Options.EnableNodeCliInspectArguments]: false,
  [FuseV1Options.EnableCookieEncryption]: true,
  [FuseV1Options.OnlyLoadAppFromAsar]: true,
  [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
  [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
};

const silence = () => vi.spyOn(console, 'log').mockImplementation(() => undefined);
afterEach(() => vi.restoreAllMocks());

describe('the afterPack fuse hook', () => {
  it('calls flipFuses with exactly the hardened fuse values', async () => {
    silence();
    const flipFuses = vi.fn(async () => 1);
    const fuses = { ...realFuses, flipFuses } as unknown as Fuses;
    await afterPack(context('linux'), fuses);
    expect(flipFuses).toHaveBeenCalledExactlyOnceWith('/dist/linux-unpacked/warden', {
      version: FuseVersion.V1,
      resetAdHocDarwinSignature: false,
      ...expectedFuses,
    });
  });

  it('targets the right binary on each platform and resets the ad-hoc signature only on Apple Silicon', async () => {
    expect(afterPack.electronBinaryPath(context('darwin', ARM64, '/d/mac'))).toBe('/d/mac/Warden.app');
    expect(afterPack.electronBinaryPath(context('win32', X64, '/d/win'))).toBe(join('/d/win', 'Warden.exe'));
    expect(afterPack.electronBinaryPath(context('linux', X64, '/d/lin'))).toBe('/d/lin/warden');
    expect(() => afterPack.electronBinaryPath(context('plan9'))).toThrow(/refusing to ship unfused/);
    expect(afterPack.wardenFuseConfig(realFuses, { electronPlatformName: 'darwin', arch: ARM64 }).resetAdHocDarwinSignature).toBe(true);
    expect(afterPack.wardenFuseConfig(realFuses, { electronPlatformName: 'darwin', arch: X64 }).resetAdHocDarwinSignature).toBe(false);
  });

  it('really flips the fuse wire of a binary (real @electron/fuses on a stand-in executable)', async () => {
    silence();
    const dir = await mkdtemp(join(tmpdir(), 'warden-fuses-'));
    try {
      // A stand-in for Electron's binary: junk, the fuse sentinel, wire version 1, 9 fuses in
      // Electron's default state (RunAsNode, NODE_OPTIONS, inspect and file:// privileges on).
      const wire = Buffer.from('101100011', 'ascii');
      const binary = Buffer.concat([
        Buffer.alloc(64, 7),
        Buffer.from('dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX', 'ascii'),
        Buffer.from([1, wire.length]),
        wire,
        Buffer.alloc(64, 7),
      ]);
      await writeFile(join(dir, 'warden'), binary);
      await afterPack(context('linux', X64, dir));
      const current = await realFuses.getCurrentFuseWire(join(dir, 'warden'));
      const ON = 49;
      const OFF = 48;
      for (const [fuse, on] of Object.entries(expectedFuses)) {
        expect(current[Number(fuse) as FuseV1Options], FuseV1Options[Number(fuse)]).toBe(on ? ON : OFF);
      }
      // Fuses Warden does not configure keep Electron's value.
      expect(current[FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]).toBe(OFF);
      expect((await readFile(join(dir, 'warden'))).length).toBe(binary.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('electron-builder.yml', () => {
  it('packs an asar from out/** with the fuse hook and per-OS targets', async () => {
    const config = parse(await readFile(new URL('../../../electron-builder.yml', import.meta.url), 'utf8'));
    expect(config).toMatchObject({
      appId: expect.stringMatching(/^[a-z0-9.-]+$/),
      productName: 'Warden',
      asar: true,
      files: ['out/**', 'package.json'],
      directories: { buildResources: 'build' },
      afterPack: 'build/after-pack.cjs',
      mac: { hardenedRuntime: true, entitlements: 'build/entitlements.mac.plist' },
      win: { target: ['nsis'] },
      linux: { target: ['AppImage', 'deb'] },
    });
  });

  it('grants the macOS hardened runtime nothing but JIT', async () => {
    const plist = await readFile(new URL('../../../build/entitlements.mac.plist', import.meta.url), 'utf8');
    const keys = [...plist.matchAll(/<key>([^<]+)<\/key>/g)].map((m) => m[1]);
    expect(keys).toEqual(['com.apple.security.cs.allow-jit']);
  });
});
