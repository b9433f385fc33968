/**
 * The licence list Settings → About shows is built at build time from the installed packages:
 * exactly the packages bundled into the window (from the bundle's module ids) plus every
 * production dependency shipped with the app, each with the licence its package.json declares.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectLicenses, declaredLicense, packageDirOf, productionPackages } from '../../../scripts/licenses';

const root = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

describe('licences of what Warden ships', () => {
  it('reads the declared licence in each of its package.json forms', () => {
    expect(declaredLicense({ license: 'MIT' })).toBe('MIT');
    expect(declaredLicense({ license: { type: 'ISC' } })).toBe('ISC');
    expect(declaredLicense({ licenses: [{ type: 'MIT' }, { type: 'Apache-2.0' }] })).toBe('(MIT OR Apache-2.0)');
    expect(declaredLicense({})).toBe('No licence declared in package.json');
  });

  it('finds the package a bundled module comes from, scoped or nested', () => {
    expect(packageDirOf('/app/node_modules/react/cjs/react.production.js')).toBe('/app/node_modules/react');
    expect(packageDirOf('/app/node_modules/@tanstack/react-virtual/dist/esm/index.js')).toBe('/app/node_modules/@tanstack/react-virtual');
    expect(packageDirOf('/app/node_modules/a/node_modules/b/index.js?commonjs-proxy')).toBe('/app/node_modules/a/node_modules/b');
    expect(packageDirOf('\0/app/renderer/src/main.tsx')).toBeNull();
  });

  it('ships the production dependencies and everything they need, and no dev-only tool', () => {
    const names = new Set([...productionPackages(root).values()].map((p) => p.name));
    for (const dep of ['@modelcontextprotocol/sdk', 'keytar', 'zod', 'electron-store', 'ajv']) expect(names.has(dep)).toBe(true);
    // Transitive: the MCP SDK's own dependencies are shipped too.
    expect(names.has('zod-to-json-schema') || names.has('express') || names.has('cross-spawn')).toBe(true);
    for (const dev of ['vitest', 'playwright-core', 'typescript', 'eslint', 'axe-core']) expect(names.has(dev)).toBe(false);
  });

  it('lists the window bundle’s packages as "window", the runtime, and the app’s packages, sorted by name', () => {
    const list = collectLicenses(root, [path.join(root, 'node_modules/react/index.js'), path.join(root, 'renderer/src/main.tsx')]);
    expect(list.find((e) => e.name === 'react')).toMatchObject({ license: 'MIT', where: 'window' });
    expect(list.find((e) => e.name === 'electron')).toMatchObject({ license: 'MIT', where: 'runtime' });
    expect(list.find((e) => e.name === 'keytar')).toMatchObject({ where: 'app' });
    expect(list.some((e) => e.name === 'react-dom')).toBe(false);
    const sorted = [...list].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
    expect(list).toEqual(sorted);
  });
});
