/**
 * Layer boundaries (docs/ARCHITECTURE.md), enforced by walking every import in the source tree.
 *
 * Lint (eslint.config.js, no-restricted-imports) catches most of these while editing; this test is
 * the authority because it resolves relative paths to the folder they land in and also sees
 * dynamic `import()`, `require()` and `export … from`.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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

/**
 * The floors of the core, top to bottom: every folder (or file directly under electron/core) stands
 * on one floor and imports only from the floors below its own, never from its own floor or one
 * above. So no import runs back up and no two parts import each other, even through others. A new
 * folder gets a floor here before anything imports it or it imports anything (the test says so).
 */
export const CORE_FLOORS: ReadonlyArray<readonly string[]> = [
  // The assembly.
  ['app-core'],
  // What a person works with: conversations, permission management, Run, servers using the person's
  // model; and the settings seen through the connection layer's ports (wired by the assembly).
  ['chat', 'permissions', 'run', 'sampling', 'server-ports'],
  // The connection layer, model providers, import from other apps, the demo, the preferences, and
  // the observers that read what a call really did.
  ['mcp', 'models', 'import', 'demo', 'appearance', 'preferences', 'observe'],
  // The gate, the stored servers and accounts, the ledger, elicitation: none knows the others.
  ['gate', 'settings', 'ledger', 'elicitation', 'memory-journal', 'safe-mode-confirmation'],
  // The policy engine, the words Warden writes itself, network failures, the keychain.
  ['policy', 'preview', 'net', 'secrets'],
  // The ground: imports nothing of the core.
  ['canonical', 'validation', 'text', 'ports', 'events', 'dispatch', 'turns', 'storage', 'redact', 'local-path', 'paths'],
];

const floorOf = new Map(CORE_FLOORS.flatMap((units, i) => units.map((unit) => [unit, CORE_FLOORS.length - i] as const)));

/** The part of the core a path lies in: its folder under electron/core, or the file's name without extension. */
function coreUnitOf(path: string): string | null {
  if (!path.startsWith('electron/core/')) return null;
  const first = path.slice('electron/core/'.length).split('/')[0]!;
  return first.replace(/\.(ts|tsx|js|cjs|mjs)$/, '') || null;
}

/** What the policy engine may import inside the core (besides itself): the ground it decides with. */
const POLICY_USES = ['policy', 'canonical', 'validation', 'local-path', 'paths', 'ports'];
/** What the gate may import inside the core (besides itself): the policy engine, the ports, and leaves. */
const GATE_USES = ['gate', 'policy', 'paths', 'ports', 'canonical', 'validation', 'preview', 'text', 'events'];

const MCP_NOT_SETTINGS = 'mcp reaches server definitions through a port, never settings/';

/** An import that breaks a rule today, excused by file and rule until the change that removes it lands. */
export interface KnownException {
  file: string;
  rule: string;
}

/**
 * Imports excused by file and rule while a change that removes them is under way; an entry no
 * import needs any more fails the test, so the list only shrinks. Empty: keep it so.
 */
const KNOWN_EXCEPTIONS: readonly KnownException[] = [];

/** The rule an import from one part of the core to another breaks, or null. */
function brokenCoreRule(fromPath: string, targetPath: string): string | null {
  const from = coreUnitOf(fromPath);
  const to = coreUnitOf(`${targetPath}/`);
  if (from === null || to === null || from === to) return null;
  // Operation history has one owner, the ledger; the gate reaches it through a port.
  if (from === 'ledger' && to === 'gate') return 'the ledger never imports the gate';
  if (from === 'gate' && to === 'ledger') return 'the gate reaches the ledger through ports only';
  // The inner layers: canonical forms and the policy engine are leaves everything may use.
  if (from === 'canonical') return 'canonical is a leaf: it imports nothing else of the core';
  if (from === 'policy' && !POLICY_USES.includes(to)) return 'policy is a leaf: it imports only canonical forms, validation, local paths, path arguments and the ports';
  if (from === 'gate' && !GATE_USES.includes(to)) return 'the gate uses only the policy engine, the ports and the leaves below them: everything else reaches it through its ports';
  if (from === 'mcp' && to === 'settings') return MCP_NOT_SETTINGS;
  // A server's sampling request can only ever become a model's reply to that server: sampling
  // cannot reach the gate, a connection or the chat loop, so it cannot call a tool.
  if (from === 'sampling' && ['gate', 'mcp', 'chat', 'app-core'].includes(to)) return 'sampling never imports the gate, the MCP connections, the chat or the app assembly: it cannot call a tool';
  if (from === 'settings' && to === 'import') return 'settings never imports import: import builds on settings';
  const a = floorOf.get(from);
  const b = floorOf.get(to);
  if (a === undefined) return `${from} has no floor in the core's declared order (CORE_FLOORS)`;
  if (b === undefined) return `${to} has no floor in the core's declared order (CORE_FLOORS)`;
  if (b >= a) return `imports point down the floors: ${from} (floor ${a}) may not import ${to} (floor ${b})`;
  return null;
}

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
      if (targetPath !== null && into('electron/core/')) return brokenCoreRule(fromPath, targetPath);
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
 * nothing can be told apart from a clean one). An import that `exceptions` excuses (its file and
 * rule) is left out; the exceptions that excused nothing are returned.
 */
export async function checkBoundaries(
  root: string,
  exceptions: readonly KnownException[] = [],
): Promise<{ files: number; violations: Violation[]; unusedExceptions: KnownException[] }> {
  const violations: Violation[] = [];
  const used = new Set<KnownException>();
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
        if (!rule) continue;
        const excused = exceptions.find((e) => e.file === rel && e.rule === rule);
        if (excused) used.add(excused);
        else violations.push({ file: `${rel}:${found.line}`, specifier: found.specifier, kind: found.kind, rule });
      }
    }
  }
  return { files, violations, unusedExceptions: exceptions.filter((e) => !used.has(e)) };
}

/** The file a relative import of the core lands on, or null when it names none (a folder without an index, a missing file). */
async function resolveCoreFile(fromFile: string, specifier: string): Promise<string | null> {
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    try {
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // Not this one.
    }
  }
  return null;
}

/**
 * Every circle of files inside electron/core of `root`: files that import each other, directly or
 * through others, type-only imports included (the floors check folders; this sees the files inside
 * one folder too). Each circle is its files, sorted.
 */
export async function coreCircles(root: string): Promise<string[][]> {
  const edges = new Map<string, string[]>();
  for await (const file of sourceFiles(join(root, 'electron/core'))) {
    const targets: string[] = [];
    for (const found of findImports(file, await readFile(file, 'utf8'))) {
      if (found.specifier === null || !found.specifier.startsWith('.')) continue;
      const target = await resolveCoreFile(file, found.specifier);
      if (target) targets.push(target);
    }
    edges.set(file, targets);
  }
  // Tarjan's strongly connected components: a component of two or more files (or a file that
  // imports itself) is a circle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) circles.push(component.map((f) => relative(root, f).split(sep).join('/')).sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return circles;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('layer boundaries', () => {
  it('no file under electron/, shared/ or renderer/ imports across a boundary', async () => {
    const { files, violations, unusedExceptions } = await checkBoundaries(repoRoot, KNOWN_EXCEPTIONS);
    expect(files).toBeGreaterThan(10);
    expect(violations).toEqual([]);
    // An exception whose import is gone is deleted, so none can hide a new one later.
    expect(unusedExceptions).toEqual([]);
  }, 60_000);

  it('no files of the core import each other in a circle, not even inside one folder', async () => {
    expect(await coreCircles(repoRoot)).toEqual([]);
  }, 60_000);

  it('every folder and top-level file of the core stands on exactly one floor', async () => {
    const entries = await readdir(join(repoRoot, 'electron/core'), { withFileTypes: true });
    const units = entries.filter((e) => e.isDirectory() || EXTENSIONS.test(e.name)).map((e) => e.name.replace(EXTENSIONS, ''));
    const placed = CORE_FLOORS.flat();
    expect(units.filter((u) => !placed.includes(u)).sort()).toEqual([]);
    expect(placed.filter((u) => !units.includes(u)).sort()).toEqual([]);
    expect(new Set(placed).size).toBe(placed.length);
  });
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
    'electron/core/sampling/x.ts': "import type { ToolExecutor } from '../gate/gate';",
    'electron/core/sampling/y.ts': "import { ConnectionManager } from '../mcp/connection-manager';",
    'electron/core/gate/z.ts': "import { createOperationPresenter } from '../mcp/result-display';",
    'electron/core/gate/w.ts': "import { changeConfirmation } from '../permissions/confirmations';",
    'electron/core/mcp/x.ts': "import type { ServerService } from '../settings/server-service';",
    'electron/core/settings/x.ts': "import type { ImportService } from '../import/import-service';",
    // The floors: an import back up, one across a floor, one from the ground, a folder with no floor.
    'electron/core/models/x.ts': "import type { ChatService } from '../chat/chat-service';",
    'electron/core/elicitation/x.ts': "import type { ConnectionManager } from '../mcp/connection-manager';",
    'electron/core/permissions/x.ts': "export * from '../app-core';",
    'electron/core/mcp/y.ts': "import { createModelsModule } from '../models/models-module';",
    'electron/core/text/x.ts': "import { describeIssues } from '../dispatch';",
    'electron/core/unplaced/x.ts': "import { canonicalJson } from '../canonical';",
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
    'electron/core/gate/ok.ts': "import { decide } from '../policy/engine';\nimport type { Clock } from '../ports';\nimport { claimsOf } from '../preview/trusted-preview';\nimport { sanitizeServerText } from '../text/sanitize';\nimport { Gate } from './gate';\nexport { decide, claimsOf, sanitizeServerText, Gate };\nexport type { Clock };",
    'electron/core/chat/ok.ts': "import type { ConnectionManager } from '../mcp/connection-manager';\nimport type { Gate } from '../gate/gate';\nimport { canonicalJson } from '../canonical';\nimport { ChatService } from './chat-service';\nexport { canonicalJson, ChatService };\nexport type { ConnectionManager, Gate };",
    'electron/core/import/ok.ts': "import type { ServerService } from '../settings/server-service';\nexport type { ServerService };",
    'electron/core/app-core.ts': "import { createChatModule } from './chat/chat-module';\nimport { canonicalJson } from './canonical';\nexport { createChatModule, canonicalJson };",
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
    expect(byFile.get('electron/core/gate/z.ts')?.rule).toMatch(/^the gate uses only the policy engine, the ports/);
    expect(byFile.get('electron/core/mcp/x.ts')?.rule).toBe(MCP_NOT_SETTINGS);
    expect(byFile.get('electron/core/settings/x.ts')?.rule).toBe('settings never imports import: import builds on settings');
    expect(byFile.get('electron/core/models/x.ts')?.rule).toBe('imports point down the floors: models (floor 4) may not import chat (floor 5)');
    expect(byFile.get('electron/core/mcp/y.ts')?.rule).toBe('imports point down the floors: mcp (floor 4) may not import models (floor 4)');
    expect(byFile.get('electron/core/text/x.ts')?.rule).toBe('imports point down the floors: text (floor 1) may not import dispatch (floor 1)');
    expect(byFile.get('electron/core/unplaced/x.ts')?.rule).toBe("unplaced has no floor in the core's declared order (CORE_FLOORS)");
  }, 30_000);

  it('a known exception excuses only its own file and rule, and one that excuses nothing is reported', async () => {
    const mcp = { file: 'electron/core/mcp/x.ts', rule: MCP_NOT_SETTINGS };
    const wrongRule = { file: 'electron/core/mcp/y.ts', rule: MCP_NOT_SETTINGS };
    const gone = { file: 'electron/core/mcp/gone.ts', rule: MCP_NOT_SETTINGS };
    const { violations, unusedExceptions } = await checkBoundaries(root, [mcp, wrongRule, gone]);
    const offending = new Set(violations.map((v) => v.file.replace(/:\d+$/, '')));
    expect(offending.has('electron/core/mcp/x.ts')).toBe(false);
    expect(offending.has('electron/core/mcp/y.ts')).toBe(true);
    expect(violations).toHaveLength(Object.keys(bad).length - 1);
    expect(unusedExceptions).toEqual([wrongRule, gone]);
  }, 30_000);
});

describe('the circle finder itself', () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'warden-circles-'));
    const files: Record<string, string> = {
      // A circle inside one folder, through a type-only import.
      'electron/core/chat/a.ts': "import { b } from './b';\nexport const a = b;",
      'electron/core/chat/b.ts': "import type { C } from './c';\nexport const b = 1 as unknown as C;",
      'electron/core/chat/c.ts': "import { a } from './a';\nexport type C = typeof a;",
      // A circle across folders through a folder's index.
      'electron/core/one/index.ts': "export { two } from '../two';\nexport const one = 1;",
      'electron/core/two/index.ts': "import { one } from '../one';\nexport const two = one;",
      // One way only: no circle.
      'electron/core/gate/x.ts': "import { y } from './y';\nexport const x = y;",
      'electron/core/gate/y.ts': "import { z } from 'zod';\nexport const y = z;",
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('finds every circle of files, and only those', async () => {
    const circles = await coreCircles(root);
    expect(circles.sort((a, b) => a[0]!.localeCompare(b[0]!))).toEqual([
      ['electron/core/chat/a.ts', 'electron/core/chat/b.ts', 'electron/core/chat/c.ts'],
      ['electron/core/one/index.ts', 'electron/core/two/index.ts'],
    ]);
  }, 30_000);
});
