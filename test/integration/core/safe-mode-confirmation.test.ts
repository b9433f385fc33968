/**
 * Safe mode (the ledger failed verification at start) holds every tool at ask, even Always Allow.
 * Leaving it loosens every tool at once, so, like every other loosening, it happens only when a
 * person confirms it in main's native dialog: a compromised renderer calling
 * `ledger:acknowledge-safe-mode` on its own changes nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { readLedger, segmentName } from '../../../electron/core/ledger/ledger';
import { LedgerService } from '../../../electron/core/ledger/service';
import type { ApprovalPreview } from '../../../electron/core/ports';
import { tempDir } from '../../unit/ledger/helpers';
import { ROOT, TSX_LOADER, waitUntil } from '../mcp/helpers';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await core?.close();
  core = undefined;
  while (cleanups.length) cleanups.pop()!();
});

/** A ledger with a flipped byte in its middle: recovery opens it in safe mode. */
async function tamperedLedger(): Promise<LedgerService> {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const seed = await LedgerService.open({ dir: t.dir });
  for (let i = 0; i < 4; i++) await seed.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
  await seed.close();
  const seg = join(t.dir, segmentName(1));
  const bytes = readFileSync(seg);
  bytes[bytes.indexOf('"i":1') + 4] = '9'.charCodeAt(0);
  writeFileSync(seg, bytes);
  const service = await LedgerService.open({ dir: t.dir });
  // Tampering in a sealed segment is found by the full verification that starts at open.
  expect((await service.verification)?.safeMode).toBe(true);
  expect(service.ledger.safeMode).toBe(true);
  return service;
}

function start(service: LedgerService, answer: { value: 'approve' | 'deny' }) {
  const shown: ApprovalPreview[] = [];
  core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', ledger: service, gate: { prompter: { prompt: async (p) => (shown.push(p), answer.value) } }, connections: { reconnect: { maxAttempts: 0 } } });
  return shown;
}

const run = (channel: string, request: unknown) => dispatch(core!.handlers, channel, request, () => {});

describe('safe mode in the assembled core', () => {
  it('holds a tool set to Always Allow at ask: a real call waits for approval and reaches the server only after safe mode is left', async () => {
    const service = await tamperedLedger();
    // The dialog stand-in confirms what a person would here: the Always Allow and leaving safe mode.
    start(service, { value: 'approve' });
    await core!.recovered;
    const t = tempDir();
    cleanups.push(t.cleanup);
    const countFile = join(t.dir, 'calls.jsonl');
    const received = () => (existsSync(countFile) ? readFileSync(countFile, 'utf8').trim().split('\n').filter(Boolean) : []);
    const ok = async <T>(channel: string, request: unknown): Promise<T> => {
      const r = await run(channel, request);
      if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
      return r.value as T;
    };
    const added = await ok<{ definition: { id: string }; accounts: Array<{ id: string }> }>('servers:add', {
      definition: { name: 'Counting', transport: 'stdio', command: process.execPath, args: ['--import', TSX_LOADER, join(ROOT, 'test/fixtures/counting-server.ts')], env: [{ name: 'COUNT_FILE', value: countFile }] },
    });
    const serverId = added.definition.id;
    const accountId = added.accounts[0]!.id;
    await ok('connections:connect', { serverId, accountId });
    await ok('permissions:set', { scope: 'tool', serverId, accountId, toolName: 'close_issue', mode: 'allow' });

    const held = await ok<{ operationId: string; state: string; decision: { layer: string } | null }>('tools:run', { serverId, accountId, toolName: 'close_issue', arguments: { n: 1 } });
    expect(held.state).toBe('awaiting_approval');
    expect(held.decision?.layer).toBe('safe-mode');
    expect(received()).toEqual([]);
    // The matrix a person reads decides with the same state: Always Allow shows as asking.
    const matrix = await ok<{ rows: Array<{ toolName: string; effective: string }> }>('permissions:matrix', { conversationId: null });
    expect(matrix.rows.find((r) => r.toolName === 'close_issue')?.effective).toBe('ask');

    await ok('ledger:acknowledge-safe-mode', { reason: 'compared with the preserved copy' });
    const ran = await ok<{ operationId: string; state: string }>('tools:run', { serverId, accountId, toolName: 'close_issue', arguments: { n: 2 } });
    expect(['executing', 'succeeded']).toContain(ran.state);
    const lines = await waitUntil(() => (received().length === 1 ? received() : undefined), 20_000, 'the allowed call to reach the server');
    expect(JSON.parse(lines[0]!)).toMatchObject({ tool: 'close_issue', args: { n: 2 } });
    // The call held in safe mode was never sent: it still waits for a person.
    expect((await ok<{ state: string }>('operations:get', { operationId: held.operationId })).state).toBe('awaiting_approval');
  });
});

describe('leaving safe mode is a loosening and needs the native confirmation', () => {
  it('a renderer alone cannot leave safe mode: a refused dialog changes nothing and records nothing', async () => {
    const service = await tamperedLedger();
    const shown = start(service, { value: 'deny' });
    await core!.recovered;
    const r = await run('ledger:acknowledge-safe-mode', { reason: 'ignore the tampering, trust me' });
    expect(r).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED', message: expect.stringMatching(/not confirmed in the dialog; Warden stays in safe mode/) } });
    expect(service.ledger.safeMode).toBe(true);
    expect(await run('core:status', {})).toMatchObject({ ok: true, value: { safeMode: true } });
    await service.ledger.flush();
    const types: string[] = [];
    for await (const { record } of readLedger(service.ledger.dir)) types.push(record.type);
    expect(types).not.toContain('ledger.safe_mode_acknowledged');
    // The dialog said what leaving does, and whose reason it records.
    expect(shown).toHaveLength(1);
    expect(shown[0]!.title).toMatch(/Leave safe mode/);
    expect(shown[0]!.detail).toMatch(/Always Allow rules run tools without asking again/);
    expect(shown[0]!.argumentsJson).toContain('ignore the tampering, trust me');
  });

  it('confirmed in the dialog, safe mode ends and the acknowledgement is recorded', async () => {
    const service = await tamperedLedger();
    start(service, { value: 'approve' });
    await core!.recovered;
    expect(await run('ledger:acknowledge-safe-mode', { reason: 'compared with the preserved copy' })).toMatchObject({ ok: true, value: { safeMode: false } });
    expect(service.ledger.safeMode).toBe(false);
  });

  it('a core without a native dialog (headless) stays in safe mode', async () => {
    const service = await tamperedLedger();
    core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', ledger: service, connections: { reconnect: { maxAttempts: 0 } } });
    await core.recovered;
    expect(await run('ledger:acknowledge-safe-mode', { reason: 'r' })).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED' } });
    expect(service.ledger.safeMode).toBe(true);
  });
});
