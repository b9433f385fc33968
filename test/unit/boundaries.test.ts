/**
 * Layer boundaries (docs/ARCHITECTURE.md), enforced by walking every import in the source tree.
 *
 * Lint (eslint.config.js, no-restricted-imports) catches most of these while editing; this test is
 * the authority because it resolves relative paths to the folder they land in and also sees
 * dynamic `import()`, `require()` and `export … from`.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SOURCE_DIRS = ['electron', 'shared', 'renderer'];
const EXTENSIONS = /\.(ts|tsx|js|cjs|mjs)$/;

type Layer = 'core' | 'main' | 'preload' | 'shared' | 'renderer' | 'other';

/** One import found in a file: its specifier and how it was written. */
interface FoundImport {
  specifier: string | null;
  kind: 'import' | 'export-from' | 'dynamic-import' | 'require' | 'import-type';
  line: number;
}

/** A boundary violation: which file, which import, and which rule it breaks. */
export interface Violation {
  file: string;
  specifier: string;
  kind: FoundImport['kind'];
  rule: string;
}

function layerOf(relPath: string): Layer {
  const p = relPath.split(sep).join('/');
  if (p.startsWith('electron/core/')) return 'core';
  if (p.startsWith('electron/main/')) return 'main';
  if (p.startsWith('electron/preload/')) return 'preload';
  if (p.startsWith('shared/')) return 'shared';
  if (p.startsWith('renderer/')) return 'renderer';
  return 'other';
}

/** Every import-like reference in a file, found with the TypeScript parser (comments and strings are not imports). */
function findImports(fileName: string, text: string): FoundImport[] {
  const kind = fileName.endsWith('x') ? ts.ScriptKind.TSX : fileName.match(/\.[cm]?js$/) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const found: FoundImport[] = [];
  const literal = (node: ts.Node | undefined): string | null =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;
  const add = (specifier: string | null, k: FoundImport['kind'], node: ts.Node) =>
    found.push({ specifier, kind: k, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(literal(node.moduleSpecifier), 'import', node);
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(literal(node.moduleSpecifier), 'export-from', node);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(literal(node.moduleReference.expression), 'require', node);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(literal(node.argument.literal), 'import-type', node);
    } else if (ts.isCallExpression(node)) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(literal(node.arguments[0]), 'dynamic-import', node);
      else if (ts.isIdentifier(node.expression) && node.expression.text === 'require' && node.arguments.length === 1) {
        add(literal(node.arguments[0]), 'require', node);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const builtins = new Set(builtinModules.filter((m) => !m.startsWith('_')));
const isBuiltin = (s: string) => s.startsWith('node:') || builtins.has(s) || builtins.has(s.split('/')[0]!);
const isElectron = (s: string) => s === 'electron' || s.startsWith('electron/');
const isReact = (s: string) => /^(react|react-dom)(\/|$)/.test(s);
const isKeytar = (s: string) => s === 'keytar' || s.startsWith('keytar/');

/** What the policy engine may import inside the core (besides itself). */
const CORE_LEAVES = ['electron/core/policy/', 'electron/core/canonical/', 'electron/core/validation/', 'electron/core/local-path/', 'electron/core/ports/'];
/** Folders above the gate that it never imports. */
const GATE_NEVER = ['electron/core/settings/', 'electron/core/import/', 'electron/core/chat/', 'electron/core/models/', 'electron/core/app-core'];

/** The rule an import breaks, or null. `target` is the layer a relative import lands in. */
function brokenRule(from: Layer, specifier: string, target: Layer | null, targetPath: string | null, fromPath = ''): string | null {
  const bare = target === null;
  const inElectron = targetPath !== null && `${targetPath}/`.startsWith('electron/');
  const into = (folder: string) => targetPath !== null && `${targetPath}/`.startsWith(folder);
  switch (from) {
    case 'core':
      if (bare && isElectron(specifier)) return 'electron/core never imports electron';
      if (target === 'main' || target === 'preload') return 'electron/core never imports the Electron shell';
      if (target === 'renderer') return 'electron/core never imports the renderer';
      // Operation history has one owner, the ledger; the gate reaches it through a port.
      if (fromPath.startsWith('electron/core/ledger/') && into('electron/core/gate/')) return 'the ledger never imports the gate';
      if (fromPath.startsWith('electron/core/gate/') && into('electron/core/ledger/')) return 'the gate reaches the ledger through ports only';
      // The inner layers: canonical forms and the policy engine are leaves everything may use.
      if (fromPath.startsWith('electron/core/canonical/') && into('electron/core/') && !into('electron/core/canonical/')) return 'canonical is a leaf: it imports nothing else of the core';
      if (fromPath.startsWith('electron/core/policy/') && into('electron/core/') && !CORE_LEAVES.some((leaf) => into(leaf))) return 'policy is a leaf: it imports only canonical forms, validation, local paths and the ports';
      if (fromPath.startsWith('electron/core/gate/') && GATE_NEVER.some((folder) => into(folder))) return 'the gate never imports settings, import, chat, models or the app assembly: it is reached through its ports';
      return null;
    case 'preload':
      if (bare && isBuiltin(specifier)) return 'a sandboxed preload has no Node builtins';
      if (target === 'core' || target === 'main') return 'the preload never bundles main-process code';
      if (target === 'renderer') return 'the preload never imports the renderer';
      return null;
    case 'main':
      if (target === 'renderer') return 'main never imports the renderer';
      return null;
    case 'shared':
      if (bare && isBuiltin(specifier)) return 'shared/ imports no Node builtins';
      if (bare && isElectron(specifier)) return 'shared/ never imports electron';
      if (bare && isReact(specifier)) return 'shared/ imports no UI code';
      if (target === 'renderer') return 'shared/ never imports the renderer';
      if (inElectron) return 'shared/ never imports electron/**';
      return null;
    case 'renderer':
      if (bare && isElectron(specifier)) return 'the renderer never imports electron';
      if (bare && isBuiltin(specifier)) return 'the renderer has no Node APIs';
      if (bare && isKeytar(specifier)) return 'the renderer holds no secrets (keytar)';
      if (inElectron) return 'the renderer never imports electron/**';
      return null;
    default:
      return null;
  }
}

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (EXTENSIONS.test(entry.name)) yield full;
  }
}

/**
 * Walks every source file under electron/, shared/ and renderer/ of `root` and returns every
 * import that crosses a layer boundary, plus the number of files checked (so a walk that found
 * nothing can be told apart from a clean one).
 */
export async function checkBoundaries(root: string): Promise<{ files: number; violations: Violation[] }> {
  const violations: Violation[] = [];
  let files = 0;
  for (const top of SOURCE_DIRS) {
    for await (const file of sourceFiles(join(root, top))) {
      files++;
      const rel = relative(root, file).split(sep).join('/');
      const from = layerOf(rel);
      for (const found of findImports(file, await readFile(file, 'utf8'))) {
        if (found.specifier === null) {
          // A computed specifier cannot be checked; the pure and sandboxed layers may not use one.
          if (from === 'shared' || from === 'renderer' || from === 'preload') {
            violations.push({ file: rel, specifier: '<computed>', kind: found.kind, rule: `${from} may not load modules by a computed name` });
          }
          continue;
        }
        let target: Layer | null = null;
        let targetPath: string | null = null;
        if (found.specifier.startsWith('.') || found.specifier.startsWith('/')) {
          targetPath = relative(root, resolve(dirname(file), found.specifier)).split(sep).join('/');
          // Trailing slash so a folder import (`../core`) lands in its folder's layer.
          target = layerOf(`${targetPath}/`);
        }
        const rule = brokenRule(from, found.specifier, target, targetPath, rel);
        if (rule) violations.push({ file: `${rel}:${found.line}`, specifier: found.specifier, kind: found.kind, rule });
      }
    }
  }
  return { files, violations };
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('layer boundaries', () => {
  it('no file under electron/, shared/ or renderer/ imports across a boundary', async () => {
    const { files, violations } = await checkBoundaries(repoRoot);
    expect(files).toBeGreaterThan(10);
    expect(violations).toEqual([]);
  }, 60_000);
});

describe('the boundary checker itself', () => {
  let root: string;

  const bad: Record<string, string> = {
    // electron/core
    'electron/core/a.ts': "import { app } from 'electron';",
    'electron/core/b.ts': "export { ipcMain } from 'electron';",
    'electron/core/c.ts': "export async function f() { return import('electron'); }",
    'electron/core/d.cjs': "const { shell } = require('electron');",
    'electron/core/e.ts': "import { bindContract } from '../main/ipc';",
    'electron/core/deep/f.ts': "import '../../preload/index';",
    'electron/core/i.ts': "export * from '../main';",
    'electron/core/g.ts': "import type { BrowserWindow } from 'electron/main';",
    'electron/core/h.ts': "type W = typeof import('electron');\nexport type { W };",
    'electron/core/ledger/x.ts': "import type { RestoredOperation } from '../gate/gate';",
    'electron/core/gate/x.ts': "import { LedgerProjections } from '../ledger/projections';",
    'electron/core/gate/y.ts': "import type { ServerService } from '../settings/server-service';",
    'electron/core/canonical/x.ts': "import { decide } from '../policy/engine';",
    'electron/core/policy/x.ts': "import type { Gate } from '../gate/gate';",
    // shared
    'shared/a.ts': "import { readFile } from 'node:fs/promises';",
    'shared/b.ts': "import path from 'path';",
    'shared/c.ts': "import { createHash } from 'crypto';",
    'shared/d.ts': "import { app } from 'electron';",
    'shared/e.ts': "import React from 'react';",
    'shared/f.ts': "import { createRoot } from 'react-dom/client';",
    'shared/g.ts': "export * from '../renderer/src/store';",
    'shared/h.ts': "import { dispatch } from '../electron/core/dispatch';",
    'shared/i.mjs': "const m = await import('fs');\nexport default m;",
    'shared/j.ts': "const name = 'fs'; export const m = require(name);",
    // renderer
    'renderer/src/a.tsx': "import { dispatch } from '../../electron/core/dispatch';",
    'renderer/src/b.ts': "import { ipcRenderer } from 'electron';",
    'renderer/src/c.ts': "import { readFileSync } from 'node:fs';",
    'renderer/src/d.ts': "import keytar from 'keytar';",
    'renderer/src/e.ts': "export const lazy = () => import('../../electron/main/app');",
    'renderer/src/f.js': "module.exports = require('child_process');",
    // preload
    'electron/preload/a.ts': "import { createCore } from '../core/app-core';",
    'electron/preload/b.ts': "import { readFile } from 'node:fs';",
    // main
    'electron/main/a.ts': "import App from '../../renderer/src/App';",
  };

  const good: Record<string, string> = {
    'electron/core/ok.ts': "import { z } from 'zod';\nimport { channels } from '../../shared/ipc';\nimport { readFile } from 'node:fs/promises';\n// import { app } from 'electron';\nconst s = \"require('electron')\";\nexport { z, channels, readFile, s };",
    'electron/core/policy/ok.ts': "import { canonicalJson } from '../canonical/canonical-json';\nimport type { Journal } from '../ports';\nexport { canonicalJson };\nexport type { Journal };",
    'electron/main/ok.ts': "import { app } from 'electron';\nimport { createCore } from '../core/app-core';\nexport { app, createCore };",
    'electron/preload/ok.ts': "import { contextBridge } from 'electron';\nimport { createWardenApi } from '../../shared/ipc';\nexport { contextBridge, createWardenApi };",
    'shared/ok.ts': "import { z } from 'zod';\nimport type { Result } from './result';\nexport { z };\nexport type { Result };",
    'renderer/src/ok.tsx': "import React from 'react';\nimport { create } from 'zustand';\nimport { expectedApiPaths } from '../../shared/ipc';\nexport const lazy = () => import('./views/Chat');\nexport { React, create, expectedApiPaths };",
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'warden-boundaries-'));
    for (const [path, text] of Object.entries({ ...bad, ...good })) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reports every deliberately bad file, in every import form, and nothing in the good ones', async () => {
    const { files, violations } = await checkBoundaries(root);
    expect(files).toBe(Object.keys(bad).length + Object.keys(good).length);
    const offending = new Set(violations.map((v) => v.file.replace(/:\d+$/, '')));
    expect([...offending].sort()).toEqual(Object.keys(bad).sort());
    expect(violations).toHaveLength(Object.keys(bad).length);
  }, 30_000);

  it('names the rule and the import form', async () => {
    const { violations } = await checkBoundaries(root);
    const byFile = new Map(violations.map((v) => [v.file.replace(/:\d+$/, ''), v]));
    expect(byFile.get('electron/core/a.ts')).toMatchObject({ specifier: 'electron', kind: 'import', rule: 'electron/core never imports electron' });
    expect(byFile.get('electron/core/b.ts')).toMatchObject({ kind: 'export-from' });
    expect(byFile.get('electron/core/c.ts')).toMatchObject({ kind: 'dynamic-import' });
    expect(byFile.get('electron/core/d.cjs')).toMatchObject({ kind: 'require' });
    expect(byFile.get('electron/core/h.ts')).toMatchObject({ kind: 'import-type' });
    expect(byFile.get('electron/core/e.ts')?.rule).toBe('electron/core never imports the Electron shell');
    expect(byFile.get('shared/a.ts')?.rule).toBe('shared/ imports no Node builtins');
    expect(byFile.get('shared/j.ts')?.specifier).toBe('<computed>');
    expect(byFile.get('renderer/src/a.tsx')?.rule).toBe('the renderer never imports electron/**');
    expect(byFile.get('renderer/src/d.ts')?.rule).toBe('the renderer holds no secrets (keytar)');
  }, 30_000);
});
