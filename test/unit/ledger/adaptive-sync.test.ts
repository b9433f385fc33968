/**
 * The durable append's fdatasync runs on the calling thread only while flushes are fast: a slow
 * disk must never keep blocking the event loop, and a failure never hides behind a fast path.
 */
import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adaptiveSync, INLINE_SYNC_LIMIT_MS, type SyncCalls } from '../../../electron/core/ledger/ledger-fs';
import { tempDir } from './helpers';

/** Sync calls that record where each ran and take as long as the script says (on a fake clock). */
function scripted(durations: number[], failAt: number | null = null) {
  let t = 0;
  const used: Array<'inline' | 'pooled'> = [];
  const take = (): number => durations[used.length - 1] ?? 0;
  const calls: SyncCalls = {
    inline: () => {
      used.push('inline');
      t += take();
      if (failAt === used.length) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    },
    pooled: (_fd, done) => {
      used.push('pooled');
      t += take();
      setImmediate(() => done(failAt === used.length ? Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }) : null));
    },
  };
  return { calls, used, now: () => t };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('adaptive fdatasync', () => {
  it('the first sync goes to the thread pool; fast ones then run inline; one slow sync sends the next ones back to the pool until one is fast again', async () => {
    const slow = INLINE_SYNC_LIMIT_MS + 5;
    const s = scripted([0.2, 0.2, 0.3, slow, 0.2, slow, slow, 0.1, 0.1]);
    const sync = adaptiveSync(s.calls, INLINE_SYNC_LIMIT_MS, s.now);
    for (let i = 0; i < 9; i++) await sync(3);
    expect(s.used).toEqual(['pooled', 'inline', 'inline', 'inline', 'pooled', 'inline', 'pooled', 'pooled', 'inline']);
  });

  it('a failing sync rejects (never reported as durable) and the next one goes to the thread pool', async () => {
    const s = scripted([0.1, 0.1, 0.1, 0.1], 3);
    const sync = adaptiveSync(s.calls, INLINE_SYNC_LIMIT_MS, s.now);
    await sync(3);
    await sync(3);
    await expect(sync(3)).rejects.toThrow(/EIO/);
    await sync(3);
    expect(s.used).toEqual(['pooled', 'inline', 'inline', 'pooled']);
  });

  it('with the real calls it makes a real file durable on either path, and a closed descriptor is an error, not a silent success', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const fd = openSync(join(dir, 'f'), 'w');
    const sync = adaptiveSync();
    for (let i = 0; i < 5; i++) {
      writeSync(fd, Buffer.from(`record ${i}\n`));
      await sync(fd);
    }
    expect(fstatSync(fd).size).toBe(5 * 'record 0\n'.length);
    closeSync(fd);
    await expect(sync(fd)).rejects.toMatchObject({ code: 'EBADF' });
  });
});
