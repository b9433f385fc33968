/**
 * The licences of what Warden ships, generated at build time from the installed packages'
 * package.json `license` fields, for Settings → About.
 *
 * Three groups: the Electron runtime; every package bundled into the window (read from the
 * renderer build's own module graph, so it is exactly what the bundle contains); and every
 * production dependency electron-builder copies into the app (the `dependencies` of package.json
 * and everything they depend on, found the way Node resolves them).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import type { Plugin } from 'vite';

/** One shipped package and the licence it declares. */
export interface LicenseEntry {
  name: string;
  version: string;
  /** The SPDX expression the package declares, or a sentence when it declares none. */
  license: string;
  /** Where it is in Warden: the runtime itself, bundled into the window, or shipped with the app. */
  where: 'runtime' | 'window' | 'app';
}

interface PackageJson {
  name?: string;
  version?: string;
  license?: string | { type?: string };
  licenses?: Array<{ type?: string }>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function readJson(file: string): PackageJson {
  return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
}

/** The licence a package.json declares, in its own words (SPDX), or says that it declares none. */
export function declaredLicense(pkg: PackageJson): string {
  if (typeof pkg.license === 'string' && pkg.license.trim()) return pkg.license.trim();
  if (pkg.license && typeof pkg.license === 'object' && pkg.license.type) return pkg.license.type;
  const legacy = (pkg.licenses ?? []).map((l) => l.type).filter((t): t is string => typeof t === 'string' && t.length > 0);
  if (legacy.length) return legacy.length === 1 ? legacy[0]! : `(${legacy.join(' OR ')})`;
  return 'No licence declared in package.json';
}

/**
 * The package folder a bundled module comes from (the deepest `node_modules/<name>` or
 * `node_modules/@scope/<name>` in its path), or null for the app's own files.
 */
export function packageDirOf(moduleId: string): string | null {
  const path = moduleId.replace(/\0/g, '').split('?')[0]!.split(sep).join('/');
  const at = path.lastIndexOf('/node_modules/');
  if (at < 0) return null;
  const rest = path.slice(at + '/node_modules/'.length).split('/');
  const nameParts = rest[0]?.startsWith('@') ? rest.slice(0, 2) : rest.slice(0, 1);
  if (nameParts.length === 0 || nameParts.some((p) => !p)) return null;
  return `${path.slice(0, at)}/node_modules/${nameParts.join('/')}`;
}

/** Finds `name` the way Node does from `fromDir`: its node_modules, then each parent's, up to `root`. */
function resolvePackage(name: string, fromDir: string, root: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return null;
  }
}

/** Every production dependency of the app at `root`, transitively: package folder → package.json. */
export function productionPackages(root: string): Map<string, PackageJson> {
  const found = new Map<string, PackageJson>();
  const visit = (dir: string, deps: Record<string, string>, optional: Record<string, string>) => {
    for (const name of [...Object.keys(deps), ...Object.keys(optional)]) {
      const pkgDir = resolvePackage(name, dir, root);
      // A missing optional dependency (another platform's) is simply not shipped.
      if (!pkgDir || found.has(pkgDir)) continue;
      const pkg = readJson(join(pkgDir, 'package.json'));
      found.set(pkgDir, pkg);
      visit(pkgDir, pkg.dependencies ?? {}, pkg.optionalDependencies ?? {});
    }
  };
  const app = readJson(join(root, 'package.json'));
  visit(root, app.dependencies ?? {}, app.optionalDependencies ?? {});
  return found;
}

/** The licence list for the app at `root` whose window bundle is made of `windowModuleIds`. */
export function collectLicenses(root: string, windowModuleIds: Iterable<string>): LicenseEntry[] {
  const entries = new Map<string, LicenseEntry>();
  const add = (pkg: PackageJson, where: LicenseEntry['where']) => {
    if (!pkg.name) return;
    const key = `${pkg.name}@${pkg.version ?? ''}`;
    if (entries.has(key)) return;
    entries.set(key, { name: pkg.name, version: pkg.version ?? 'unknown', license: declaredLicense(pkg), where });
  };
  const electron = join(root, 'node_modules', 'electron', 'package.json');
  if (existsSync(electron)) add(readJson(electron), 'runtime');
  const windowDirs = new Set<string>();
  for (const id of windowModuleIds) {
    const dir = packageDirOf(id);
    if (dir) windowDirs.add(dir);
  }
  for (const dir of [...windowDirs].sort()) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) add(readJson(file), 'window');
  }
  for (const pkg of productionPackages(root).values()) add(pkg, 'app');
  return [...entries.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/** The file the window fetches in Settings → About. */
export const LICENSES_FILE = 'licenses.json';

/** Vite plugin (build only): writes `licenses.json` next to the built window. */
export function licensesPlugin(root: string): Plugin {
  return {
    name: 'warden-licenses',
    apply: 'build',
    generateBundle() {
      const entries = collectLicenses(root, this.getModuleIds());
      this.emitFile({ type: 'asset', fileName: LICENSES_FILE, source: `${JSON.stringify(entries, null, 1)}\n` });
    },
  };
}
