/**
 * The folder of JSON files that conversations and tool listings are kept in: the last state always
 * reaches the disk, a removed object is not brought back by a write that was in flight, and a file
 * that cannot be read is reported and left as it was.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonFileFolder, keepAsIs } from '../../../electron/core/storage/json-file-folder';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});
function folder() {
  const dir = mkdtempSync(join(tmpdir(), 'warden-json-folder-'));
  dirs.push(dir);
  const memory = new Map<string, unknown>();
  return { dir, memory, files: new JsonFileFolder(dir, (id) => memory.get(id), keepAsIs) };
}

describe('a folder of JSON files mirroring memory', () => {
  it('saves made while a write is in flight end with the latest state on disk, and no temporary file is left', async () => {
    const { dir, memory, files } = folder();
    const saves: Array<Promise<void>> = [];
    for (let i = 0; i < 20; i++) {
      memory.set('a', { i });
      saves.push(files.save('a'));
    }
    await Promise.all(saves);
    expect(JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8'))).toEqual({ i: 19 });
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('flush (shutdown) waits for a save that was queued behind a write in flight, not only for that write', async () => {
    const { dir, memory, files } = folder();
    memory.set('a', { i: 1 });
    void files.save('a');
    memory.set('a', { i: 2 });
    void files.save('a');
    await files.flush();
    expect(JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8'))).toEqual({ i: 2 });
  });

  it('an object removed while its write is in flight is not written back', async () => {
    const { dir, memory, files } = folder();
    memory.set('gone', { x: 1 });
    const write = files.save('gone');
    memory.delete('gone');
    await files.remove('gone');
    await write;
    expect(readdirSync(dir)).toEqual([]);
  });

  it('reads every matching file; one that cannot be read is reported and left untouched', async () => {
    const { dir, files } = folder();
    writeFileSync(join(dir, 'good.json'), '{"ok":true}');
    writeFileSync(join(dir, 'bad.json'), '{not json');
    writeFileSync(join(dir, 'other.txt'), 'ignored');
    const seen: Record<string, unknown> = {};
    const problems: string[] = [];
    await files.readAll(/^([a-z]+)\.json$/, (id, value) => void (seen[id] = value), problems);
    expect(seen).toEqual({ good: { ok: true } });
    expect(problems).toEqual([expect.stringMatching(/^bad\.json: /)]);
    expect(readFileSync(join(dir, 'bad.json'), 'utf8')).toBe('{not json');
  });
});
