/**
 * Every file and folder the core creates is the person's alone, and only the storage helper
 * creates them: the helper gives the mode at creation even under a permissive umask, and no core
 * file outside `electron/core/storage/` calls a node:fs function that creates a file or folder.
 */
import { chmodSync, closeSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyPrivate, createPrivateWriteStream, ensurePrivateFile, makePrivateFolder, openPrivate, openPrivateFd } from '../../../electron/core/storage/private-files';
import { openSqlite } from '../../../electron/core/ledger/sqlite';
import { LedgerService } from '../../../electron/core/ledger/service';

const dirs: string[] = [];
const umask = process.umask();
afterEach(() => {
  process.umask(umask);
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

const modeOf = (p: string) => statSync(p).mode & 0o777;

describe('the storage helper', () => {
  it('creates files 0600 and folders 0700 even when the umask would allow everyone in', async () => {
    if (process.platform === 'win32') return;
    process.umask(0);
    const root = mkdtempSync(join(tmpdir(), 'warden-private-'));
    dirs.push(root);
    await makePrivateFolder(join(root, 'a', 'b'));
    expect([modeOf(join(root, 'a')), modeOf(join(root, 'a', 'b'))]).toEqual([0o700, 0o700]);
    const handle = await openPrivate(join(root, 'a', 'f.json'), 'w');
    await handle.close();
    await ensurePrivateFile(join(root, 'a', 'db.sqlite'));
    const fd = await openPrivateFd(join(root, 'a', 'seg'), 'wx');
    closeSync(fd);
    // A copy is private even when its source is not.
    writeFileSync(join(root, 'open.txt'), 'x');
    chmodSync(join(root, 'open.txt'), 0o644);
    await copyPrivate(join(root, 'open.txt'), join(root, 'a', 'copy.txt'));
    const stream = createPrivateWriteStream(join(root, 'a', 'export.jsonl'));
    await new Promise<void>((resolve) => stream.end('x', () => resolve()));
    for (const name of ['f.json', 'db.sqlite', 'seg', 'copy.txt', 'export.jsonl']) expect(modeOf(join(root, 'a', name)), name).toBe(0o600);
  });

  it("SQLite's journal and WAL files take the database file's private mode", async () => {
    if (process.platform === 'win32') return;
    process.umask(0);
    const root = mkdtempSync(join(tmpdir(), 'warden-private-sqlite-'));
    dirs.push(root);
    const path = join(root, 'index.sqlite');
    await ensurePrivateFile(path);
    const db = await openSqlite(path);
    await db.exec('PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1);');
    const companions = readdirSync(root);
    expect(companions).toContain('index.sqlite-wal');
    for (const name of companions) expect(modeOf(join(root, name)), name).toBe(0o600);
    await db.close();
  });

  it('the ledger folder, its segments and its index are private under a permissive umask', async () => {
    if (process.platform === 'win32') return;
    process.umask(0);
    const root = mkdtempSync(join(tmpdir(), 'warden-private-ledger-'));
    dirs.push(root);
    const ledger = await LedgerService.open({ dir: join(root, 'ledger') });
    await ledger.close();
    expect(modeOf(join(root, 'ledger'))).toBe(0o700);
    const files = readdirSync(join(root, 'ledger'));
    expect(files).toContain('index.sqlite');
    for (const name of files) expect(modeOf(join(root, 'ledger', name)), name).toBe(0o600);
  });
});

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** node:fs functions that create a file or a folder. */
const CREATING = ['open', 'openSync', 'mkdir', 'mkdirSync', 'mkdtemp', 'mkdtempSync', 'writeFile', 'writeFileSync', 'appendFile', 'appendFileSync', 'createWriteStream', 'copyFile', 'copyFileSync', 'cp', 'cpSync', 'symlink', 'link'];

/** Where a core file creates a file or folder through node:fs itself (named import or namespace use). */
function directCreations(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/import\s+(?:type\s+)?([^;]*?)\s+from\s+['"](?:node:)?fs(?:\/promises)?['"]/g)) {
    const clause = m[1]!;
    const named = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
    for (const part of named.split(',')) {
      const name = part.trim().split(/\s+as\s+/)[0]!.replace(/^type\s+/, '');
      if (CREATING.includes(name)) found.push(name);
    }
    const namespace = /\*\s+as\s+(\w+)/.exec(clause)?.[1] ?? /^(\w+)$/.exec(clause.trim())?.[1];
    if (namespace) {
      const use = new RegExp(`\\b${namespace}\\.(?:promises\\.)?(${CREATING.join('|')})\\s*\\(`, 'g');
      for (const u of text.matchAll(use)) found.push(`${namespace}.${u[1]}`);
    }
  }
  return found;
}

describe('only the storage helper creates files', () => {
  it('no core file outside electron/core/storage/ creates a file or folder through node:fs', () => {
    const core = join(__dirname, '../../../electron/core');
    const offenders = sources(core)
      .filter((p) => !relative(core, p).startsWith('storage'))
      .flatMap((p) => directCreations(readFileSync(p, 'utf8')).map((what) => `${relative(core, p)}: ${what}`));
    expect(offenders).toEqual([]);
  });

  it('the check sees named imports, renamed imports and namespace calls', () => {
    expect(directCreations("import { mkdir, readFile } from 'node:fs/promises';")).toEqual(['mkdir']);
    expect(directCreations("import { writeFile as put } from 'fs';")).toEqual(['writeFile']);
    expect(directCreations("import * as fs from 'node:fs';\nfs.promises.mkdir(d);\nfs.readFile(x);")).toEqual(['fs.mkdir']);
    expect(directCreations("import fs from 'node:fs';\nfs.open(p, 'w', cb);")).toEqual(['fs.open']);
  });
});
