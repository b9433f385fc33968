/**
 * Comments say why the code is as it is. They never tell the history of the work (which issue
 * asked for it, which review found it, who wrote it, what was on which branch) and never send a
 * reader outside the repository (the design notes that lived next to the checkout): a newcomer
 * has only this tree, and docs/ARCHITECTURE.md is where the design lives now.
 *
 * Checked in every comment and every test title of every source file in the repository, found
 * with the TypeScript parser, so strings and data (a tool call's arguments in a test) are not
 * comments.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SKIP_DIRS = new Set(['node_modules', 'out', 'dist', 'test-results', '.git', 'coverage']);
const SCRIPT = /\.(ts|tsx|js|cjs|mjs)$/;
const SHELL = /\.sh$/;

/** What a comment must not say, and why a reader would be lost by it. */
const HISTORY: ReadonlyArray<{ pattern: RegExp; why: string; quotedIsExample?: true }> = [
  // Quoted text in a comment is an example of what the code shows (a preview "Close issue #42").
  { pattern: /\bissues?\s*#?\s*\d+/i, why: 'cites an issue number (say why instead)', quotedIsExample: true },
  { pattern: /\b(?:review|reviewer|design|decision)s?\s+rounds?\b/i, why: 'tells the review history' },
  { pattern: /\b(?:in|from|since|after|before|of)\s+round[- ]?(?:1|2|3|one|two|three)\b/i, why: 'tells the review history' },
  { pattern: /\bwave\s+\d\b/i, why: 'tells the history of the work' },
  { pattern: /\b(?:landed|merged)\s+on\s+main\b|\bnot\s+(?:yet\s+)?on\s+main\b|\bwhen\s+this\s+was\s+written\b/i, why: 'tells the history of the work' },
  { pattern: /\b(?:written|added|fixed|reported|found)\s+by\s+(?:the\s+)?(?:reviewer|team lead|[\w-]+\s+engineer)\b/i, why: 'says who wrote it' },
  { pattern: /\bDESIGN\.md\b|\bCONVENTIONS\.md\b|\.\.\/shared\//, why: 'points outside the repository (the design is docs/ARCHITECTURE.md)' },
  { pattern: /\bseeds?\s+0\d\d\b/i, why: 'points at a reference article outside the repository' },
];

/** Files left out, each with the reason. Missing files are ignored, so an entry never breaks a build. */
const EXCEPTIONS: Readonly<Record<string, string>> = {};

export interface HistoryHit {
  file: string;
  line: number;
  text: string;
  why: string;
}

/** Every comment (and test title) of a script, with its line. */
export function commentsOf(fileName: string, text: string): Array<{ line: number; text: string }> {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : /\.[cm]?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const seen = new Set<number>();
  const out: Array<{ line: number; text: string }> = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const collect = (pos: number): void => {
    for (const r of [...(ts.getLeadingCommentRanges(text, pos) ?? []), ...(ts.getTrailingCommentRanges(text, pos) ?? [])]) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push({ line: lineOf(r.pos), text: text.slice(r.pos, r.end) });
    }
  };
  const TITLED = new Set(['describe', 'it', 'test']);
  const visit = (node: ts.Node): void => {
    collect(node.getFullStart());
    collect(node.getEnd());
    if (ts.isCallExpression(node)) {
      let callee: ts.Expression = node.expression;
      while (ts.isPropertyAccessExpression(callee) || ts.isCallExpression(callee)) callee = ts.isCallExpression(callee) ? callee.expression : callee.expression;
      const title = node.arguments[0];
      if (ts.isIdentifier(callee) && TITLED.has(callee.text) && title && (ts.isStringLiteral(title) || ts.isNoSubstitutionTemplateLiteral(title))) {
        out.push({ line: lineOf(title.getStart(source)), text: title.text });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.sort((a, b) => a.line - b.line);
}

/** The comments of a shell script (`#` to the end of a line, outside the `#!` line). */
function shellComments(text: string): Array<{ line: number; text: string }> {
  return text
    .split('\n')
    .map((l, i) => ({ line: i + 1, text: l }))
    .filter((l) => l.line > 1 || !l.text.startsWith('#!'))
    .flatMap((l) => {
      const at = l.text.search(/(^|\s)#/);
      return at < 0 ? [] : [{ line: l.line, text: l.text.slice(at) }];
    });
}

/** What in one file's comments tells history or points outside the repository. */
export function historyIn(file: string, text: string): HistoryHit[] {
  const comments = SCRIPT.test(file) ? commentsOf(file, text) : shellComments(text);
  const hits: HistoryHit[] = [];
  for (const c of comments) {
    const unquoted = c.text.replace(/"[^"]{0,300}"|“[^”]{0,300}”|`[^`]{0,300}`/g, '""');
    for (const { pattern, why, quotedIsExample } of HISTORY) {
      const m = pattern.exec(quotedIsExample ? unquoted : c.text);
      if (m) hits.push({ file, line: c.line, text: m[0], why });
    }
  }
  return hits;
}

async function sourceFiles(dir: string, out: string[] = []): Promise<string[]> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (dir === ROOT && entry.name.startsWith('.') && entry.name !== '.ci') continue;
      await sourceFiles(full, out);
    } else if (SCRIPT.test(entry.name) || SHELL.test(entry.name) || relative(ROOT, full) === join('.ci', 'run')) {
      out.push(full);
    }
  }
  return out;
}

describe('comments say why, not the history of the work', () => {
  it('finds history in comments and test titles, never in strings or code', () => {
    const text = [
      '// See issue 12 for why.',
      "const title = 'Close issue #42 in acme/mobile';",
      '/** Added in round 2 of the review. Reported by the sec-mcp engineer. */',
      "it('fixes issue #7', () => {});",
      'const design = "DESIGN.md";',
      '/* as DESIGN.md §2 says */',
      '/** A preview reads "Close issue #42 in acme/mobile". */',
    ].join('\n');
    const hits = historyIn('x.test.ts', text);
    expect(hits.map((h) => [h.line, h.text])).toEqual([
      [1, 'issue 12'],
      [3, 'in round 2'],
      [3, 'Reported by the sec-mcp engineer'],
      [4, 'issue #7'],
      [6, 'DESIGN.md'],
    ]);
    expect(historyIn('run.sh', '#!/bin/bash\n# keeps issue 3 fixed\necho "issue 4"\n').map((h) => h.line)).toEqual([2]);
  });

  it('no comment or test title in the repository tells the history of the work or points outside the repository', { timeout: 60_000 }, async () => {
    const hits: HistoryHit[] = [];
    for (const full of await sourceFiles(ROOT)) {
      const file = relative(ROOT, full).split(sep).join('/');
      if (file in EXCEPTIONS) continue;
      hits.push(...historyIn(file, await readFile(full, 'utf8')));
    }
    expect(hits.map((h) => `${h.file}:${h.line}: "${h.text}" ${h.why}`)).toEqual([]);
  });
});
