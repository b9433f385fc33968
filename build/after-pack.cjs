/**
 * electron-builder afterPack hook: flips Electron's fuses in the packaged binary before it is
 * signed, switching off the ways a local attacker (or malware) could run arbitrary code with
 * Warden's identity and keychain access:
 *
 * - RunAsNode off: `ELECTRON_RUN_AS_NODE=1 Warden` cannot turn the app into a plain Node.
 * - EnableNodeOptionsEnvironmentVariable off: NODE_OPTIONS cannot inject `--require`.
 * - EnableNodeCliInspectArguments off: no `--inspect` debugger attach.
 * - EnableCookieEncryption on: cookies are encrypted at rest with an OS-protected key.
 * - OnlyLoadAppFromAsar on + EnableEmbeddedAsarIntegrityValidation on: only the shipped,
 *   integrity-checked app.asar is loaded (no app/ folder next to it, no edited archive).
 *   (Integrity is enforced by Electron on macOS and Windows.)
 * - GrantFileProtocolExtraPrivileges off: file:// gets no special powers (we load app://).
 *
 * CommonJS because electron-builder `require`s hooks. `fuses` is injectable for tests.
 */
'use strict';

const path = require('node:path');

/** electron-builder's Arch.arm64. */
const ARCH_ARM64 = 3;

/**
 * The fuse configuration Warden ships with.
 * @param {typeof import('@electron/fuses')} fuses
 * @param {{ electronPlatformName: string, arch: number }} target
 */
function wardenFuseConfig(fuses, target) {
  const { FuseV1Options, FuseVersion } = fuses;
  return {
    version: FuseVersion.V1,
    // Flipping fuses invalidates an ad-hoc signature; Apple Silicon refuses to run unsigned code.
    resetAdHocDarwinSignature: target.electronPlatformName === 'darwin' && target.arch === ARCH_ARM64,
    [FuseV1Options.RunAsNode]: false,
    [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
    [FuseV1Options.EnableNodeCliInspectArguments]: false,
    [FuseV1Options.EnableCookieEncryption]: true,
    [FuseV1Options.OnlyLoadAppFromAsar]: true,
    [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
    [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
  };
}

/**
 * Path of the Electron executable inside the packed app, per platform.
 * @param {{ appOutDir: string, electronPlatformName: string, packager: { appInfo: { productFilename: string }, executableName?: string } }} context
 */
function electronBinaryPath(context) {
  const { appOutDir, electronPlatformName, packager } = context;
  const name = packager.appInfo.productFilename;
  switch (electronPlatformName) {
    case 'darwin':
    case 'mas':
      return path.join(appOutDir, `${name}.app`);
    case 'win32':
      return path.join(appOutDir, `${name}.exe`);
    case 'linux':
      return path.join(appOutDir, packager.executableName || name.toLowerCase());
    default:
      throw new Error(`after-pack: unknown electronPlatformName ${JSON.stringify(electronPlatformName)}; refusing to ship unfused`);
  }
}

/**
 * The hook electron-builder calls after packing each platform/arch.
 * @param {import('app-builder-lib').AfterPackContext} context
 * @param {typeof import('@electron/fuses')} [fuses]
 */
async function afterPack(context, fuses = require('@electron/fuses')) {
  const target = electronBinaryPath(context);
  const config = wardenFuseConfig(fuses, context);
  const flipped = await fuses.flipFuses(target, config);
  console.log(`after-pack: flipped Electron fuses in ${target} (${flipped} fuse wire(s))`);
}

module.exports = afterPack;
module.exports.default = afterPack;
module.exports.afterPack = afterPack;
module.exports.wardenFuseConfig = wardenFuseConfig;
module.exports.electronBinaryPath = electronBinaryPath;
