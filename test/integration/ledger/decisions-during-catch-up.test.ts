/**
 * A decision never waits for the index. After a start without a current index (every install
 * once, after an upgrade that changes the index's schema) the index catches up in the background;
 * a tool call made meanwhile is decided and sent from what is known without it: the operation ids
 * the gate itself handed out, and the records this run appended (the log's tail).
 *
 * Each test holds back every read of the earlier segments (the file-system port the ledger is
 * given), so the catch-up cannot finish while the test runs: anything that waited for it would
 * hang, and the test would time out.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../electron/core/ledger/ledger';
import { nodeLedgerFs, type LedgerFs } from '../../../electron/core/ledger/ledger-fs';
import { LedgerService } from '../../../electron/core/ledger/service';
import { segmentName, segmentNumbers } from '../../../electron/core/ledger/segments';
import type { Conversation } from '../../../shared/contract/chat';
import { startAnthropicFixture, type ModelFixture } from '../../fixtures/models';
import { tempDir } from '../../unit/ledger/helpers';
import { call, callsOf, settled, startChatCore, until, type ChatCore } from '../chat/helpers';
import { allowingGate, callEntries, callTemplates } from './call-records';

type Shapes = Awaited<ReturnType<typeof callTemplates>>;
let shapes: Shapes;
const cleanups: Array<() => Promise<void> | void> = [];
/** Lets every held catch-up finish (first, so that closing does not wait for it forever). */
const releases: Array<() => void> = [];

beforeAll(async () => {
  shapes = await callTemplates();
});

afterEach(async () => {
  for (const r of releases.splice(0)) r();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `count` finished calls in a ledger of 64 KiB segments, without its index. */
async function historyWithoutIndex(dir: string, count: number): Promise<void> {
  const ledger = await Ledger.open({ dir, rotateBytes: 64 * 1024 });
  for (let i = 0; i < count; i += 50) {
    const entries = [];
    for (let k = i; k < Math.min(count, i + 50); k++) entries.push(...callEntries(shapes, `op-${k}`));
    await ledger.append(entries, { durable: true });
  }
  await ledger.close();
  for (const name of readdirSync(dir)) if (name.startsWith('index.sqlite')) rmSync(join(dir, name));
}

/** The file-system port, with every read of a segment before the last (whole, or opened to read) held until `release`. */
function holdingEarlierSegments(dir: string): { fs: LedgerFs; release: () => void } {
  const last = segmentName(segmentNumbers(readdirSync(dir)).at(-1)!);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const fs: LedgerFs = {
    ...nodeLedgerFs,
    readFile: async (path) => {
      if (/ledger\.\d+\.log$/.test(path) && !path.endsWith(last)) await released;
      return nodeLedgerFs.readFile(path);
    },
    open: async (path, mode) => {
      if (mode === 'r' && /ledger\.\d+\.log$/.test(path) && !path.endsWith(last)) await released;
      return nodeLedgerFs.open(path, mode);
    },
  };
  return { fs, release };
}

/** A ledger of `count` calls opened without its index, its catch-up held until `release`. */
async function openCatchingUp(count: number): Promise<{ dir: string; service: LedgerService; release: () => void }> {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const dir = join(t.dir, 'ledger');
  await historyWithoutIndex(dir, count);
  expect(segmentNumbers(readdirSync(dir)).length).toBeGreaterThan(5);
  const hold = holdingEarlierSegments(dir);
  const service = await LedgerService.open({ dir, fs: hold.fs, verifyInBackground: false });
  releases.push(hold.release);
  cleanups.push(() => service.close());
  expect(service.indexing).not.toBeNull();
  return { dir, service, release: hold.release };
}

describe('a decision never waits for the index', () => {
  it("a model's tool calls are decided, sent and answered while the index is still catching up", async () => {
    const { service } = await openCatchingUp(600);
    const fixture: ModelFixture = await startAnthropicFixture({ apiKey: 'sk-catch-up-fixture-0123', models: [{ id: 'fixture-model' }] });
    cleanups.push(() => fixture.close());
    const t: ChatCore = await startChatCore({ ledger: service, models: { adapter: { maxRetries: 0, retryBaseDelayMs: 5, connectTimeoutMs: 5000, idleTimeoutMs: 5000 } } });
    cleanups.push(() => t.core.close());
    await call(t.core, 'connections:connect', t.demo);
    const { provider } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind: 'anthropic', label: 'Fixture', baseUrl: fixture.baseUrl, apiKey: 'sk-catch-up-fixture-0123' });
    const c = await call<Conversation>(t.core, 'chat:create', { providerId: provider.providerId, model: 'fixture-model' });
    // Two calls in one reply: the second may finish before the chat looks at it again, and is
    // then read back from the records this run appended.
    fixture.enqueue({ kind: 'reply', text: ['Reading.'], toolCalls: [{ id: 'call_inbox', name: 'Warden_demo_built-in__read_inbox', argumentsJson: '{}' }, { id: 'call_list', name: 'Warden_demo_built-in__notes_list', argumentsJson: '{}' }] });
    fixture.enqueue({ kind: 'reply', text: ['Done.'] });
    await call(t.core, 'chat:send-message', { conversationId: c.id, text: 'Summarise my inbox' });
    const done = await settled(t.core, c.id);
    expect(callsOf(done).map((x) => [x.callId, x.status])).toEqual([
      ['call_inbox', 'succeeded'],
      ['call_list', 'succeeded'],
    ]);
    expect(t.demos.flatMap((d) => d.calls.map((x) => x.tool)).sort()).toEqual(['notes_list', 'read_inbox']);
    // Still catching up: none of this waited for it.
    expect(service.indexing).not.toBeNull();
    // The finished call is read back by its id, from what this run appended.
    const op = await call<{ state: string }>(t.core, 'operations:get', { operationId: callsOf(done)[0]!.operationId! });
    expect(op.state).toBe('succeeded');
    expect(service.indexing).not.toBeNull();
  }, 40_000);

  it('an id the gate made is decided at once; asked again after it finished, it is answered from what this run appended and never sent twice; an id only older records hold still waits for the index and is answered exactly', async () => {
    const { service, release } = await openCatchingUp(600);
    const sent: string[] = [];
    const gate = allowingGate(service.ledger, service.history, sent);
    cleanups.push(() => gate.close());
    await service.recoverOperations(gate);
    const request = (id: string) => gate.request({ source: 'user', serverId: 'effects', accountId: 'work', toolName: 'perform', arguments: { n: 1 }, operationId: id });
    const id = gate.newOperationId();
    expect((await request(id)).state).toBe('succeeded');
    // Finished, so the gate no longer holds it: the same id again is the recorded call.
    await until(() => gate.getLive(id) === undefined, 'the finished call to leave the gate');
    expect((await request(id)).state).toBe('succeeded');
    expect((await gate.get(id))?.state).toBe('succeeded');
    expect((await service.history.history(id))?.events.map((e) => e.to)).toEqual(['proposed', 'approved', 'executing', 'succeeded']);
    expect(sent).toEqual([id]);
    expect(service.indexing).not.toBeNull();
    // An id whose records are all older than what start read: only the whole index can say.
    let answered = false;
    const old = request('op-3').then((op) => ((answered = true), op.state));
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);
    release();
    expect(await old).toBe('succeeded');
    expect(sent).toEqual([id]);
  }, 40_000);
});
