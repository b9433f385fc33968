/**
 * A newcomer can read any file of the core in one sitting: a file longer than about 450 lines says
 * at its top why it is (in its first comment, "Why this file is long…" or "Longer than…"), so the
 * length is a decision someone made and can be questioned, not an accident.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CORE = join(ROOT, 'electron/core');
const MAX_LINES = 450;
const REASON = /\bwhy this file is long|\blonger than\b/i;

/**
 * Files excused while a split is under way. An entry for a file that is short enough, or that has
 * its reason, fails, so the list only shrinks. Empty: keep it so.
 */
const KNOWN_EXCEPTIONS: readonly string[] = [];

async function* tsFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* tsFiles(full);
    else if (entry.name.endsWith('.ts')) yield full;
  }
}

/** The file's first block comment (its head), or '' when it opens with none. */
export function headOf(text: string): string {
  const match = /^\s*\/\*\*?([\s\S]*?)\*\//.exec(text);
  return match ? match[1]! : '';
}

/** Core files over the limit whose head gives no reason, with their line counts. */
export async function longFilesWithoutReason(): Promise<Array<{ file: string; lines: number }>> {
  const out: Array<{ file: string; lines: number }> = [];
  for await (const file of tsFiles(CORE)) {
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES && !REASON.test(headOf(text))) out.push({ file: relative(ROOT, file).split(sep).join('/'), lines });
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

describe('long files in the core', () => {
  it(`every file of electron/core longer than ${MAX_LINES} lines says at its top why`, async () => {
    const missing = await longFilesWithoutReason();
    expect(missing.filter((m) => !KNOWN_EXCEPTIONS.includes(m.file))).toEqual([]);
    // An exception no file needs any more is deleted, so none can hide a new long file later.
    expect(KNOWN_EXCEPTIONS.filter((e) => !missing.some((m) => m.file === e))).toEqual([]);
  });

  it('reads the reason only from the head comment', () => {
    expect(REASON.test(headOf('/**\n * The gate.\n *\n * Why this file is long: one flow.\n */\nexport {};'))).toBe(true);
    expect(REASON.test(headOf('/** The gate. */\n// Why this file is long: said too late.\nexport {};'))).toBe(false);
    expect(REASON.test(headOf('export const a = 1;\n/** Longer than it should be. */'))).toBe(false);
  });
});
