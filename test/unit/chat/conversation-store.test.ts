/**
 * The conversation store's group commit: saves asked for within the window share one write, a
 * save that must be sooner moves the shared write earlier (never later), every save resolves
 * only once a write holding its changes is on disk, and shutdown writes what is still waiting.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConversationStore } from '../../../electron/core/chat/conversation-store';
import type { Conversation } from '../../../shared/contract/chat';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

async function storeWithOne(): Promise<{ dir: string; store: ConversationStore; c: Conversation }> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-conversations-'));
  dirs.push(dir);
  const store = new ConversationStore(dir);
  const c: Conversation = { id: store.newId(), title: 'New conversation', providerId: 'demo', model: null, createdAt: 1, updatedAt: 1, state: 'idle', messages: [] };
  await store.put(c);
  return { dir, store, c };
}
const onDisk = (dir: string, id: string) => JSON.parse(readFileSync(join(dir, `${id}.json`), 'utf8')) as Conversation;

describe('conversation saves are group-committed', () => {
  it('ten saves within the window make one write, and each resolves with its change on disk', async () => {
    const { dir, store, c } = await storeWithOne();
    const before = store.writes;
    const saves: Array<Promise<void>> = [];
    for (let i = 0; i < 10; i++) {
      c.title = `title ${i}`;
      saves.push(store.save(c.id, 50));
    }
    await Promise.all(saves);
    expect(store.writes - before).toBe(1);
    expect(onDisk(dir, c.id).title).toBe('title 9');
  });

  it('a save that must be sooner moves the shared write earlier instead of waiting out the window', async () => {
    const { dir, store, c } = await storeWithOne();
    c.title = 'late';
    const late = store.save(c.id, 60_000);
    c.title = 'now';
    const started = Date.now();
    await store.save(c.id, 0);
    await late;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(onDisk(dir, c.id).title).toBe('now');
  });

  it('shutdown writes a save still waiting for its window', async () => {
    const { dir, store, c } = await storeWithOne();
    c.title = 'waiting';
    void store.save(c.id, 60_000);
    await store.flush();
    expect(onDisk(dir, c.id).title).toBe('waiting');
  });
});
