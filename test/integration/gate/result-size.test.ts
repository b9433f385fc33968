/**
 * A hostile server cannot make Warden hold, journal or show its results whole: a result larger
 * than the cap enters the gate's record and the ledger cut to 256 KiB, with the whole result's
 * length and sha256 and a visible "truncated: N of M bytes" marker, and the renderer's payloads
 * stay capped too. Everything runs through the real core on the real durable ledger against a real
 * stdio server (test/fixtures/servers/flood.ts), the way the app runs.
 */
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { canonicalJson } from '../../../electron/core/canonical/canonical-json';
import { dispatch } from '../../../electron/core/dispatch';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { OperationSnapshot } from '../../../electron/core/gate/gate';
import type { ChannelName } from '../../../shared/ipc';
import type { ServerView } from '../../../shared/domain/servers';
import { floodText } from '../../fixtures/servers/flood';
import { recordsOf, tempDir } from '../../unit/ledger/helpers';
import { stdioFixture } from '../mcp/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

const KIB = 1024;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Started {
  core: WardenCore;
  service: LedgerService;
  serverId: string;
  accountId: string;
  /** Events the renderer was sent, as the JSON that crosses the bridge. */
  sent: Array<{ event: string; json: string }>;
  call: <T>(channel: ChannelName, request: unknown) => Promise<T>;
  /** A model's call through the gate, to the end. */
  run: (toolName: 'flood' | 'small', args: Record<string, unknown>) => Promise<OperationSnapshot>;
}

async function start(): Promise<Started> {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const service = await LedgerService.open({ dir: t.dir });
  const core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', ledger: service, gate: { prompter: { prompt: async () => 'approve' } }, connections: { reconnect: { maxAttempts: 0 } } });
  cleanups.push(() => core.close());
  await core.recovered;
  const sent: Started['sent'] = [];
  core.events.subscribe((event, payload) => void sent.push({ event, json: JSON.stringify(payload) }));
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await dispatch(core.handlers, channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  const def = stdioFixture('ignored', 'flood');
  const added = await call<ServerView>('servers:add', { definition: { name: 'Flood', transport: 'stdio', command: def.command, args: def.args, env: [] } });
  const serverId = added.definition.id;
  const accountId = added.accounts[0]!.id;
  await call('connections:connect', { serverId, accountId });
  await call('permissions:set', { scope: 'server', serverId, accountId, mode: 'allow' });
  const run: Started['run'] = (toolName, args) => core.gate.gate.request({ source: 'model', conversationId: 'c1', serverId, accountId, toolName, arguments: args });
  return { core, service, serverId, accountId, sent, call, run };
}

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('result size', () => {
  it('an 8 MB result is journaled as 256 KiB with the whole result’s length and sha256, and a visible truncated marker', async () => {
    const s = await start();
    const op = await s.run('flood', { mb: 8, seed: 'a' });
    expect(op.state).toBe('succeeded');
    const whole = canonicalJson({ content: [{ type: 'text', text: floodText('a', 8 * KIB * KIB) }], isError: false });
    expect(op.result!.truncated).toEqual({ totalBytes: Buffer.byteLength(whole), sha256: sha256(whole), keptBytes: expect.any(Number) });
    expect(op.result!.truncated!.keptBytes).toBeLessThanOrEqual(256 * KIB);
    expect(bytes(op.result)).toBeLessThanOrEqual(256 * KIB + 1024);
    const marker = op.result!.content.at(-1)!;
    expect(marker).toMatchObject({ type: 'text', text: expect.stringMatching(new RegExp(`truncated: ${op.result!.truncated!.keptBytes} of ${Buffer.byteLength(whole)} bytes`)) });
    // The ledger never got more than the cap: no record anywhere holds the whole result.
    const largest = Math.max(...(await recordsOf(s.service.ledger)).map((r) => bytes(r.payload)));
    expect(largest).toBeLessThanOrEqual(256 * KIB + 4 * KIB);
  });

  it('binary and structured results over the cap are cut too, never kept whole', async () => {
    const s = await start();
    for (const kind of ['image', 'structured'] as const) {
      const op = await s.run('flood', { mb: 2, seed: 'b', kind });
      expect(op.state).toBe('succeeded');
      expect(op.result!.truncated, kind).toBeDefined();
      expect(bytes(op.result), kind).toBeLessThanOrEqual(256 * KIB + 1024);
      expect(op.result!.content.at(-1)!.text).toMatch(/truncated: \d+ of \d+ bytes/);
    }
  });

  it('the renderer’s payloads stay capped: operations:get/list/updated and tools:run carry at most 64 KiB of a result, marked as truncated', async () => {
    const s = await start();
    const op = await s.run('flood', { mb: 8, seed: 'c' });
    const got = await s.call<{ result: { content: Array<{ text: string }>; truncated: { shownBytes: number; totalBytes: number } | null } }>('operations:get', { operationId: op.operationId });
    expect(bytes(got)).toBeLessThan(80 * KIB);
    expect(got.result.truncated).toMatchObject({ totalBytes: op.result!.truncated!.totalBytes });
    expect(got.result.content.at(-1)!.text).toMatch(/truncated: \d+ of \d+ bytes/);
    const listed = await s.call<{ operations: unknown[] }>('operations:list', {});
    expect(bytes(listed)).toBeLessThan(80 * KIB);
    const updates = s.sent.filter((e) => e.event === 'operations:updated');
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) expect(u.json.length).toBeLessThan(80 * KIB);
    const ran = await s.call<{ operationId: string }>('tools:run', { serverId: s.serverId, accountId: s.accountId, toolName: 'flood', arguments: { mb: 8, seed: 'd' } });
    await s.core.gate.gate.settled(ran.operationId);
    for (const u of s.sent.filter((e) => e.event === 'operations:updated')) expect(u.json.length).toBeLessThan(80 * KIB);
  });

  it('a call’s cost must not grow with the size of earlier results (25 results of 8 MB, then a small call against an early one)', async () => {
    const s = await start();
    const gc = collector();
    const written = (): number => s.service.ledger.stats.recordBytes;
    const time = async (toolName: 'flood' | 'small', args: Record<string, unknown>): Promise<{ ms: number; bytes: number }> => {
      const before = written();
      const t0 = performance.now();
      const op = await s.run(toolName, args);
      const ms = performance.now() - t0;
      expect(op.state).toBe('succeeded');
      return { ms, bytes: written() - before };
    };
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (let i = 0; i < 5; i++) await time('small', { n: i }); // warm-up
    const early: Array<{ ms: number; bytes: number }> = [];
    for (let i = 0; i < 15; i++) early.push(await time('small', { n: i }));
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const big: Array<{ ms: number; bytes: number }> = [];
    for (let i = 0; i < 25; i++) big.push(await time('flood', { mb: 8, seed: `big-${i}` }));
    const late: Array<{ ms: number; bytes: number }> = [];
    for (let i = 0; i < 15; i++) late.push(await time('small', { n: 100 + i }));
    gc();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

    const smallRatio = median(late.map((x) => x.ms)) / median(early.map((x) => x.ms));
    const bigRatio = median(big.slice(-5).map((x) => x.ms)) / median(big.slice(0, 5).map((x) => x.ms));
    const sum = (xs: Array<{ bytes: number }>): number => xs.reduce((n, x) => n + x.bytes, 0);
    const bigBytesRatio = sum(big.slice(-5)) / sum(big.slice(0, 5));
    console.log(
      `small call after 25 × 8 MB: ${median(late.map((x) => x.ms)).toFixed(2)} ms vs ${median(early.map((x) => x.ms)).toFixed(2)} ms before (×${smallRatio.toFixed(2)}); ` +
        `8 MB calls 21–25 vs 1–5: ×${bigRatio.toFixed(2)} time, ×${bigBytesRatio.toFixed(2)} ledger bytes (${(sum(big.slice(-5)) / 5 / KIB).toFixed(0)} KiB per call); ` +
        `heap held after them: ${(heapGrowth / KIB / KIB).toFixed(1)} MB`,
    );
    // What a person notices: later calls are no slower, and memory does not fill with old results.
    expect(smallRatio).toBeLessThan(3);
    expect(bigRatio).toBeLessThan(2);
    // Deterministic: the ledger writes the same per call however large earlier results were,
    // and nothing keeps the 200 MB those calls returned.
    expect(bigBytesRatio).toBeLessThan(1.5);
    expect(sum(big) / 25).toBeLessThan(300 * KIB);
    expect(heapGrowth).toBeLessThan(48 * KIB * KIB);
  }, 300_000);
});

/** A function that runs a full garbage collection (so heap figures count only what is still held). */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
}
