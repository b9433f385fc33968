/**
 * The real gate on the durable ledger, against a real MCP server (SDK McpServer over the SDK's
 * in-memory transport) that counts the calls it receives: idempotency across restarts, recovery
 * of an interrupted call, and secrets never reaching the data folder.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { contractHash, endpointHash } from '../../../electron/core/canonical';
import { Gate } from '../../../electron/core/gate/gate';
import type { ToolCallResult, ToolDescriptor, ToolExecutor, ToolRegistry } from '../../../electron/core/gate/ports';
import { LedgerService } from '../../../electron/core/ledger/service';
import { verifyLedger } from '../../../electron/core/ledger/verify';
import { countingFs, type LedgerFs } from '../../../electron/core/ledger/ledger-fs';
import { CHECKPOINT_TYPE, Ledger, segmentName } from '../../../electron/core/ledger/ledger';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redactor } from '../../../electron/core/redact/redactor';
import { openSqlite } from '../../../electron/core/ledger/sqlite';
import { PolicyState } from '../../../shared/domain/policy';
import { allFiles, projectionsOf, recordsIn, recordsOf, tempDir } from '../../unit/ledger/helpers';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Fixture {
  gate: Gate;
  service: LedgerService;
  received: Array<Record<string, unknown>>;
  /** Holds calls open until released (to stop the world while a call is executing). */
  hold: { on: boolean; release: () => void };
  close: () => Promise<void>;
}

async function start(dir: string, options: { redactor?: Redactor; reply?: (args: Record<string, unknown>) => string; fail?: string; fs?: LedgerFs } = {}): Promise<Fixture> {
  const received: Array<Record<string, unknown>> = [];
  const held: Array<() => void> = [];
  const hold = {
    on: false,
    release: () => {
      for (const r of held.splice(0)) r();
    },
  };
  const server = new McpServer({ name: 'effects', version: '1.0.0' });
  server.registerTool('perform', { description: 'records a call', inputSchema: { operationId: z.string(), token: z.string().optional() } }, async (args) => {
    received.push(structuredClone(args));
    if (hold.on) await new Promise<void>((r) => held.push(r));
    if (options.fail) throw new Error(options.fail);
    return { content: [{ type: 'text' as const, text: options.reply ? options.reply(args) : 'done' }] };
  });
  const client = new Client({ name: 'warden-test', version: '1.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  const { tools } = await client.listTools();
  const t = tools[0]!;
  const descriptor: ToolDescriptor = {
    serverId: 'effects',
    accountId: 'work',
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema as Record<string, unknown>,
    contractHash: contractHash(t),
    endpointHash: endpointHash({ kind: 'stdio', command: 'node', args: ['effects'] }),
  };
  const registry: ToolRegistry = { getTool: (s, acc, name) => (s === 'effects' && acc === 'work' && name === 'perform' ? descriptor : undefined), listTools: () => [descriptor] };
  const executor: ToolExecutor = { call: async (target, args, { signal }) => (await client.callTool({ name: target.toolName, arguments: { ...args } }, undefined, { signal })) as ToolCallResult };
  const policy = PolicyState.parse({
    user: [{ id: 'allow', scope: { kind: 'tool', serverId: 'effects', accountId: 'work', toolName: 'perform' }, mode: 'allow', pin: { contractHash: descriptor.contractHash, endpointHash: descriptor.endpointHash } }],
  });
  const service = await LedgerService.open({ dir, ...(options.redactor ? { redactor: options.redactor } : {}), ...(options.fs ? { fs: options.fs } : {}) });
  // The ledger's safe mode holds every tool at ask (what the core's gate module does).
  const gate = new Gate({ journal: service.ledger, history: service.history, executor, registry, policy: { current: () => (service.ledger.safeMode ? { ...policy, safeMode: true } : policy) }, scheduleExpiry: false });
  await service.recoverOperations(gate);
  const close = async (): Promise<void> => {
    hold.release();
    gate.close();
    await service.close();
    await client.close();
    await server.close();
  };
  return { gate, service, received, hold, close };
}

const req = (operationId: string, extra: Record<string, unknown> = {}) => ({
  source: 'user' as const,
  serverId: 'effects',
  accountId: 'work',
  toolName: 'perform',
  arguments: { operationId, ...extra },
  operationId,
});

describe('gate on the durable ledger', () => {
  it('an operation id that already executed returns its recorded result after a restart, never a second call', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const first = await start(t.dir);
    const done = await first.gate.request(req('op-1'));
    expect(done.state).toBe('succeeded');
    expect(first.received).toHaveLength(1);
    await first.close();

    const second = await start(t.dir);
    cleanups.push(second.close);
    const again = await second.gate.submit(req('op-1'));
    expect(again.state).toBe('succeeded');
    expect(again.result?.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(second.received).toHaveLength(0);
    expect((await projectionsOf(second.service).history('op-1'))!.approval?.by).toBe('policy (Always Allow)');
  });

  it('operations an older ledger kept only in its checkpoints are in the history: by id, in lists and the audit view, for idempotency and for recovery', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const first = await start(t.dir);
    for (const id of ['old-a', 'old-b', 'old-c']) expect((await first.gate.request(req(id))).state).toBe('succeeded');
    await first.close();
    // What an older ledger left behind: the segment holding these calls deleted by retention, and
    // the checkpoint starting the next one carrying every operation (its facts as it wrote them).
    // old-b's last record came after that checkpoint; old-c was executing at the checkpoint and
    // nothing more was recorded about it (the app crashed).
    const records = await recordsIn(t.dir);
    const facts = (id: string, upTo?: string) => {
      const mine = records.filter((r) => r.payload.operationId === id);
      const proposed = mine.find((r) => r.type === 'op.proposed')!;
      const transitions = mine.filter((r) => r.type === 'op.transition').map((r) => ({ seq: r.seq, time: r.time, t: r.payload }));
      const kept = upTo === undefined ? transitions : transitions.slice(0, transitions.findIndex((x) => x.t.to === upTo) + 1);
      return { proposed: proposed.payload, transitions: kept, reconciled: null, retryOf: null, proposedSeq: proposed.seq, proposedTime: proposed.time };
    };
    const bLast = records.filter((r) => r.payload.operationId === 'old-b' && r.type === 'op.transition').at(-1)!;
    expect(bLast.payload.to).toBe('succeeded');
    const old = await Ledger.open({ dir: t.dir });
    await old.rotate();
    const state = { version: 1, operations: [facts('old-a'), facts('old-b', 'executing'), facts('old-c', 'executing')] };
    await old.append([{ type: CHECKPOINT_TYPE, payload: { segment: segmentName(2), previousSegment: segmentName(1), state } }], { durable: true });
    await old.append([{ type: bLast.type, payload: bLast.payload }], { durable: true });
    await old.close();
    for (const name of readdirSync(t.dir)) if (name === segmentName(1) || name.startsWith('index.sqlite')) rmSync(join(t.dir, name));

    const second = await start(t.dir);
    cleanups.push(second.close);
    expect(second.service.ledger.safeMode).toBe(false);
    expect(second.service.lastRecoveryReport?.outcomeUnknown).toEqual(['old-c']);
    const history = second.service.history;
    expect((await history.operation('old-a'))?.state).toBe('succeeded');
    expect((await history.operation('old-b'))?.state).toBe('succeeded');
    expect((await history.operation('old-c'))?.state).toBe('outcome_unknown');
    expect((await history.operations()).map((o) => o.operationId).sort()).toEqual(['old-a', 'old-b', 'old-c']);
    expect((await history.history('old-a'))?.approval?.by).toBe('policy (Always Allow)');
    const audit = await history.audit({ operationId: 'old-a' }, { limit: 10, offset: 0 });
    expect(audit.rows.map((r) => [r.operationId, r.to, r.toolName])).toEqual([['old-a', 'succeeded', 'perform']]);
    expect(audit.rows[0]!.reason).toMatch(/older ledger's checkpoint/);
    // Idempotency holds for them too: the id that ran long ago is never sent again.
    const again = await second.gate.submit(req('old-a'));
    expect(again.state).toBe('succeeded');
    expect(second.received).toHaveLength(0);
  });

  it('an index of the version before is rebuilt from the ledger at start (it lacks what Activity pages by)', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const first = await start(t.dir);
    expect((await first.gate.request(req('kept'))).state).toBe('succeeded');
    await first.close();
    // The index as the version before wrote it, with a mark a rebuild drops.
    const db = await openSqlite(join(t.dir, 'index.sqlite'));
    await db.run("UPDATE meta SET v = '1' WHERE k = 'schema'");
    await db.run("INSERT OR REPLACE INTO meta(k, v) VALUES ('mark', 'x')");
    await db.close();
    const second = await start(t.dir);
    cleanups.push(second.close);
    await second.service.index.flush();
    expect((await second.service.history.operation('kept'))?.state).toBe('succeeded');
    const check = await openSqlite(join(t.dir, 'index.sqlite'));
    const mark = await check.get<{ v: string }>("SELECT v FROM meta WHERE k = 'mark'").catch(() => undefined);
    await check.close();
    expect(mark, 'the old index was started over').toBeUndefined();
  });

  it('a call interrupted while executing becomes outcome_unknown on restart and re-submitting its id sends nothing', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const first = await start(t.dir);
    first.hold.on = true;
    const snap = await first.gate.submit(req('op-2'));
    expect(snap.state).toBe('executing');
    // The executing record is durable before the request left: the "crash" happens now.
    await first.service.ledger.flush();
    await vi.waitFor(() => expect(first.received).toHaveLength(1));
    const records = (await recordsOf(first.service.ledger)).map((r) => r.payload.to).filter(Boolean);
    expect(records).toEqual(['approved', 'executing']);
    // Abandon the process state without letting the call finish (as a crash would): the held
    // call is never released and the in-memory client is left as is.
    first.gate.close();
    await first.service.ledger.close();
    // A crashed process writes nothing more. This one still holds its index connection, whose
    // timed commit could otherwise land after the restart below has opened the same index (a
    // late writer no crash leaves behind) and set op-2 back to executing: close it now, leaving
    // the index as a crash just after its last commit would.
    await first.service.index.close();

    const second = await start(t.dir);
    cleanups.push(second.close);
    expect(second.service.lastRecoveryReport?.outcomeUnknown).toEqual(['op-2']);
    expect((await projectionsOf(second.service).operation('op-2'))!.state).toBe('outcome_unknown');
    const again = await second.gate.submit(req('op-2'));
    expect(again.state).toBe('outcome_unknown');
    expect(second.received).toHaveLength(0);
    expect((await projectionsOf(second.service).unreconciled()).map((o) => o.operationId)).toEqual(['op-2']);

    // Retry is a NEW operation with its own decision, and it does reach the server once.
    const { retryOperationId } = await second.service.reconcile({ operationId: 'op-2', outcome: 'retry', reason: 'the server restarted', by: 'user' }, second.gate);
    expect(retryOperationId).not.toBe('op-2');
    await second.gate.settled(retryOperationId!);
    expect(second.received).toHaveLength(1);
    expect((await projectionsOf(second.service).operation(retryOperationId!))).toMatchObject({ state: 'succeeded', retryOf: 'op-2' });
    expect((await verifyLedger(t.dir)).ok).toBe(true);
  });

  it('an Always-Allow call is journaled approved + executing with ONE fsync before the request leaves', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { fs, counts } = countingFs();
    const fx = await start(t.dir, { fs });
    cleanups.push(fx.close);
    fx.hold.on = true;
    const before = { fdatasync: counts.fdatasync, fsync: counts.fsync };
    const snap = await fx.gate.submit(req('one-fsync'));
    expect(snap.state).toBe('executing');
    // Resolved once executing was durable: exactly one sync (an fdatasync: records overwrite
    // preallocated space) covered proposed+approved+executing, and no full fsync on top.
    expect(counts.fdatasync - before.fdatasync).toBe(1);
    expect(counts.fsync - before.fsync).toBe(0);
    await vi.waitFor(() => expect(fx.received).toHaveLength(1));
    const types = (await recordsOf(fx.service.ledger)).slice(-3).map((r) => `${r.type}:${String(r.payload.to ?? '')}`);
    expect(types).toEqual(['op.proposed:', 'op.transition:approved', 'op.transition:executing']);
    fx.hold.release();
    expect((await fx.gate.settled('one-fsync')).state).toBe('succeeded');
  });

  it('after tampering is detected every tool asks, even Always Allow, until the person acknowledges it', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const first = await start(t.dir);
    for (let i = 0; i < 3; i++) expect((await first.gate.request(req(`before-${i}`))).state).toBe('succeeded');
    await first.close();
    const seg = join(t.dir, segmentName(1));
    const bytes = readFileSync(seg);
    const at = bytes.indexOf('before-1');
    bytes[at] = 'B'.charCodeAt(0);
    writeFileSync(seg, bytes);

    const second = await start(t.dir);
    cleanups.push(second.close);
    // Found by the full verification that runs beside the app (the index already had those records).
    await second.service.verification;
    expect(second.service.ledger.safeMode).toBe(true);
    const held = await second.gate.submit(req('after-1'));
    expect(held.state).toBe('awaiting_approval');
    expect(held.decision?.layer).toBe('safe-mode');
    expect(second.received).toHaveLength(0);
    await second.service.acknowledgeSafeMode('user', 'looked at the preserved copy');
    expect((await second.gate.request(req('after-2'))).state).toBe('succeeded');
    expect(second.received).toHaveLength(1);
  });

  it('planted secrets used by a workload through the gate never appear in any file under the data folder', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const API_KEY = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
    const BEARER = 'eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LWJlYXJlcg.Zm9vYmFy';
    const REFRESH = 'rt_1//04refresh-Token_QWERTYUIOP';
    const ENV_SECRET = 'pg-pass-Xy7!q9#Zr';
    const redactor = new Redactor();
    for (const s of [API_KEY, BEARER, REFRESH, ENV_SECRET]) redactor.register(s);
    const fx = await start(t.dir, { redactor, reply: (args) => `used key ${API_KEY} and Authorization: Bearer ${BEARER} for ${String(args.operationId)}` });
    cleanups.push(fx.close);
    for (let i = 0; i < 10; i++) {
      const done = await fx.gate.request(req(`s-${i}`, { token: i % 2 ? REFRESH : `DATABASE_URL=postgres://u:${ENV_SECRET}@db` }));
      expect(done.state).toBe('succeeded');
    }
    // The server really got the secrets (the redactor touches only what is written).
    expect(JSON.stringify(fx.received)).toContain(REFRESH);
    await fx.service.ledger.rotate();
    const exported = join(t.dir, 'audit.csv');
    await fx.service.exportAudit('csv', {}, exported);
    const csv = { content: readFileSync(exported, 'utf8') };
    expect(csv.content).toContain('[REDACTED]');
    await fx.service.ledger.flush();
    const files = allFiles(t.dir);
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const { path, bytes } of files) {
      for (const s of [API_KEY, BEARER, REFRESH, ENV_SECRET]) {
        for (const form of [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s), Buffer.from(s).toString('base64').replace(/=+$/, '')]) {
          expect(bytes.includes(Buffer.from(form)), `${s} in ${path}`).toBe(false);
        }
      }
    }
    for (const s of [API_KEY, BEARER, REFRESH, ENV_SECRET]) expect(csv.content).not.toContain(s);
  });
});
