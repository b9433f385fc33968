/**
 * The documentation describes the code as it is. README.md, CONTRIBUTING.md and everything in
 * docs/ are read for the claims a newcomer acts on, and each is checked against the repository:
 *
 * - every repository path (in a code span, a code block or a link) exists;
 * - every source file named alone (`chat-service.ts`, `gate/call-outcome.ts`) is one in the tree;
 * - every `npm run <script>` is a script of package.json;
 * - every contract channel or event (`tools:run`) is one of shared/ipc.ts;
 * - every name of code (`createCore`, `Gate.approve`, `decide()`) is defined in the sources;
 * - no link or path leads outside the repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { channelNames, eventNames } from '../../../shared/ipc';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
// Files git tracks or would track (a new file counts before its first commit).
const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
const TOP_LEVEL = new Set(tracked.map((f) => f.split('/')[0]!));
const SOURCE_FILE = /\.(ts|tsx|js|cjs|mjs|sh|md)$/;
const CONTRACT_NAMES = new Set<string>([...channelNames, ...eventNames]);
const SCRIPTS = new Set(Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts));

/** The documents whose claims are checked. */
function documents(): string[] {
  return ['README.md', 'CONTRIBUTING.md', ...tracked.filter((f) => f.startsWith('docs/') && f.endsWith('.md'))].filter((f) => existsSync(join(ROOT, f)));
}

/**
 * Names the documents take from a dependency, with the file of that dependency that declares them
 * (checked there, so a name the dependency drops fails too).
 */
const DEPENDENCY_NAMES: Readonly<Record<string, string>> = {
  clientMetadataUrl: 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.d.ts',
};

/** MCP method names look like paths (`tools/call`); they are the protocol's, not the repository's. */
const MCP_METHOD = /^(?:tools|resources|prompts|notifications|sampling|elicitation|roots)\/[a-z_/]+$/;

/** Every identifier declared in the sources (functions, classes, methods, properties, types, …) and every identifier-like string value (`'pathUnder'`). */
function declaredNames(): Set<string> {
  const names = new Set<string>();
  for (const file of tracked) {
    if (!/^(electron|shared|renderer|scripts|test|build)\//.test(file) || !/\.(ts|tsx|js|cjs|mjs)$/.test(file)) continue;
    const text = readFileSync(join(ROOT, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      const name = (node as { name?: ts.Node }).name;
      if (name && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name))) names.add(name.text);
      if (ts.isStringLiteral(node) && /^[A-Za-z_$][\w$]*$/.test(node.text)) names.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return names;
}

export interface Claim {
  doc: string;
  line: number;
  text: string;
  problem: string;
}

interface Span {
  line: number;
  text: string;
  kind: 'code' | 'block' | 'link';
}

/** Code spans, words of code blocks, and link targets of a Markdown text, with their lines. */
export function spansOf(markdown: string): Span[] {
  const out: Span[] = [];
  let inBlock = false;
  markdown.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (/^\s*```/.test(raw)) {
      inBlock = !inBlock;
      return;
    }
    if (inBlock) {
      // The whole line (for commands such as `npm run …`) and each word (for paths).
      out.push({ line, text: raw.trim(), kind: 'block' });
      for (const word of raw.trim().split(/\s+/)) if (word && word !== raw.trim()) out.push({ line, text: word, kind: 'block' });
      return;
    }
    for (const m of raw.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line, text: m[1]!, kind: 'link' });
    for (const m of raw.replace(/\]\([^)]*\)/g, ']').matchAll(/`([^`]+)`/g)) out.push({ line, text: m[1]!, kind: 'code' });
  });
  return out;
}

const isInside = (path: string) => !relative(ROOT, path).startsWith('..') && !normalize(path).startsWith(sep + 'work' + sep + 'shared');

/** What is wrong with one span of a document, or null. */
export function problemOf(doc: string, span: Span, names: ReadonlySet<string>): string | null {
  const t = span.text;
  if (span.kind === 'link') {
    if (/^(https?|mailto):/.test(t)) return null;
    const target = join(ROOT, dirname(doc), t.split('#')[0]!);
    if (!isInside(target)) return 'links outside the repository';
    return existsSync(target) ? null : 'links to a path that does not exist';
  }
  if (t.startsWith('../') || /(^|\s)\.\.\/shared\b/.test(t) || t.startsWith('/work/')) return 'points outside the repository';
  for (const m of t.matchAll(/\bnpm run (?:--silent )?([\w:.-]+)/g)) if (!SCRIPTS.has(m[1]!)) return `npm run ${m[1]}: no such script in package.json`;
  if (span.kind === 'block') {
    // Only words that are plainly repository paths: a top-level folder and something below it.
    if (/^[\w.-]+\/[\w./-]*$/.test(t) && TOP_LEVEL.has(t.split('/')[0]!) && !t.includes('..') && !existsSync(join(ROOT, t))) return 'names a repository path that does not exist';
    return null;
  }
  if (/[\s*<>{}|]|:\/\/|\.\./.test(t)) return null; // a command, a glob, a placeholder, a URL, an example path
  if (t.startsWith('node:') || (MCP_METHOD.test(t) && !existsSync(join(ROOT, t)))) return null;
  // A data or user file (`settings.json`, `ledger/index.sqlite`): where it lives is told in words.
  if (/\.(json|jsonl|ya?ml|sqlite|log|html|css|png|ico|icns|txt|csv|exe|dmg|deb|AppImage|plist)$/.test(t) && !TOP_LEVEL.has(t.split('/')[0]!)) return null;
  if (/^[a-z][a-z0-9]*:[a-z][a-z0-9-]*$/.test(t)) return CONTRACT_NAMES.has(t) || SCRIPTS.has(t) ? null : 'names a contract channel or event that does not exist';
  const path = t.replace(/\/$/, '');
  if (path.includes('/') || TOP_LEVEL.has(path)) {
    if (TOP_LEVEL.has(path.split('/')[0]!)) return existsSync(join(ROOT, path)) ? null : 'names a repository path that does not exist';
    if (SOURCE_FILE.test(path)) return tracked.some((f) => f.endsWith('/' + path)) ? null : 'names a source file that is not in the tree';
    return null;
  }
  if (SOURCE_FILE.test(path) && /^[\w.-]+$/.test(path)) return tracked.some((f) => f === path || f.endsWith('/' + path)) ? null : 'names a source file that is not in the tree';
  const code = /^([A-Za-z_$][\w$]*)((?:\.[A-Za-z_$][\w$]*)*)(\(\))?$/.exec(t);
  if (code && (code[2] || code[3] || /[a-z][A-Z]|^[A-Z][a-z]+[A-Z]/.test(code[1]!))) {
    for (const part of [code[1]!, ...code[2]!.split('.').filter(Boolean)]) {
      const from = DEPENDENCY_NAMES[part];
      if (from !== undefined && existsSync(join(ROOT, from)) && new RegExp(`\\b${part}\\b`).test(readFileSync(join(ROOT, from), 'utf8'))) continue;
      if (!names.has(part)) return `names \`${part}\`, which nothing in the sources declares`;
    }
  }
  return null;
}

function claims(): Claim[] {
  const names = declaredNames();
  const out: Claim[] = [];
  for (const doc of documents()) {
    for (const span of spansOf(readFileSync(join(ROOT, doc), 'utf8'))) {
      const problem = problemOf(doc, span, names);
      if (problem) out.push({ doc, line: span.line, text: span.text, problem });
    }
  }
  return out;
}

describe('the documentation describes the repository as it is', () => {
  it('catches a path, a script, a channel and a name that do not exist, and a link outside the repository', () => {
    const names = new Set(['createCore', 'Gate', 'approve']);
    const bad = [
      '`electron/core/gate/replay.ts` and `electron/core/app-core.ts`',
      'Run `npm run bench` or `npm run nope`.',
      'The `tools:run` and `tools:approve` channels.',
      '`createCore`, `Gate.approve`, `Gate.replay`, `decide()`.',
      'See [design](../shared/DESIGN.md) and [the guide](CONTRIBUTING.md).',
      '`gate.ts`, `gate/call-outcome.ts`, `mcp/replay.ts`.',
      '```\nelectron/core/      the core\nelectron/nowhere/   gone\n```',
    ].join('\n');
    const found = spansOf(bad)
      .map((s) => [s.text, problemOf('README.md', s, names)] as const)
      .filter(([, p]) => p !== null)
      .map(([t]) => t);
    expect(found).toEqual(['electron/core/gate/replay.ts', 'npm run nope', 'tools:approve', 'Gate.replay', 'decide()', '../shared/DESIGN.md', 'mcp/replay.ts', 'electron/nowhere/']);
  });

  it('every path, script, channel and name in README.md, CONTRIBUTING.md and docs/ exists, and nothing points outside the repository', { timeout: 60_000 }, () => {
    expect(documents()).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/ARCHITECTURE.md']));
    expect(claims().map((c) => `${c.doc}:${c.line}: \`${c.text}\` ${c.problem}`)).toEqual([]);
  });

  it('the README has no link or path outside the repository', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const outside = spansOf(readme).filter((s) => (s.kind === 'link' ? !/^(https?|mailto):/.test(s.text) && !isInside(join(ROOT, s.text)) : s.text.startsWith('../') || s.text.startsWith('/work/')));
    expect(outside).toEqual([]);
    expect(readme).not.toMatch(/\.\.\/shared|steering checkout/);
  });
});
