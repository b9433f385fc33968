/**
 * The ledger as the renderer reaches it: the real core (createCore) on a durable ledger that
 * recovery found tampered with. Safe mode holds the gate's policy at ask until the person
 * acknowledges it over the contract; the activity channels serve the ledger's projections.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { segmentName } from '../../../electron/core/ledger/ledger';
import { LedgerService } from '../../../electron/core/ledger/service';
import { tempDir } from '../../unit/ledger/helpers';
import type { CoreStatus } from '../../../shared/contract/core';

let core: WardenCore | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await core?.close();
  core = undefined;
  while (cleanups.length) cleanups.pop()!();
});

describe('core on the durable ledger', () => {
  it('a tampered ledger starts the core in safe mode until acknowledged over the contract, and the activity views read the ledger', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const seed = await LedgerService.open({ dir: t.dir });
    for (let i = 0; i < 6; i++) await seed.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    await seed.close();
    const seg = join(t.dir, segmentName(1));
    const bytes = readFileSync(seg);
    bytes[bytes.indexOf('"i":2') + 4] = '7'.charCodeAt(0);
    writeFileSync(seg, bytes);

    const service = await LedgerService.open({ dir: t.dir });
    // The index already held those records, so start-up did not read them again: the full
    // verification running in the background finds the break and puts the ledger in safe mode.
    expect((await service.verification)?.safeMode).toBe(true);
    expect(service.ledger.safeMode).toBe(true);
    const saved = join(t.dir, 'export.jsonl');
    // Leaving safe mode is confirmed in the native dialog; this stand-in approves only that.
    core = createCore({
      version: 'test',
      ledger: service,
      gate: { prompter: { prompt: async (p) => (p.operationId === 'leave-safe-mode' ? 'approve' : 'deny') } },
      connections: { reconnect: { maxAttempts: 0 } },
      fileDialogs: { openFile: async () => null, saveFile: async () => saved },
    });
    expect(await core.recovered).toEqual({ outcomeUnknown: [], cancelled: [], denied: [], requeued: [] });

    const status = await dispatch(core.handlers, 'core:status', {});
    expect(status).toMatchObject({ ok: true, value: { safeMode: true, journal: { kind: 'ledger' } } });
    expect(status.ok && (status.value as CoreStatus).journal.acknowledgedDamage).toBeUndefined();
    const ledgerStatus = await dispatch(core.handlers, 'ledger:status', {});
    expect(ledgerStatus).toMatchObject({ ok: true, value: { safeMode: true, recovery: { breaks: [{ segment: segmentName(1), acknowledged: false }] } } });

    const refused = await dispatch(core.handlers, 'ledger:acknowledge-safe-mode', { reason: '' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    const acked = await dispatch(core.handlers, 'ledger:acknowledge-safe-mode', { reason: 'compared with the preserved copy' });
    expect(acked).toMatchObject({ ok: true, value: { safeMode: false } });
    // Out of safe mode, but the status still says the log holds damage a person acknowledged.
    expect(await dispatch(core.handlers, 'core:status', {})).toMatchObject({ ok: true, value: { safeMode: false, journal: { acknowledgedDamage: 1 } } });

    const audit = await dispatch(core.handlers, 'activity:audit', { limit: 1 });
    // The index still counts the changed record (7), but its content is never shown or exported:
    // it no longer verifies.
    expect(audit).toMatchObject({ ok: true, value: { total: 7, rows: [{ type: 'ledger.safe_mode_acknowledged' }] } });
    const exported = await dispatch(core.handlers, 'activity:export', { format: 'jsonl' });
    expect(exported).toMatchObject({ ok: true, value: { format: 'jsonl', rows: 6, path: saved } });
    expect(readFileSync(saved, 'utf8').trimEnd().split('\n')).toHaveLength(6);
    const unknown = await dispatch(core.handlers, 'recovery:reconcile', { operationId: 'nope', outcome: 'failed', reason: 'x' });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await dispatch(core.handlers, 'recovery:list', {})).toMatchObject({ ok: true, value: { operations: [], lastRecovery: { outcomeUnknown: [] } } });
  });
});

describe('openLedgerForApp', () => {
  it('puts the ledger under <userData>/ledger and feeds keychain values to the same redactor the ledger scrubs with', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { openLedgerForApp } = await import('../../../electron/core/ledger/index');
    const { ledger, onSecretValue } = await openLedgerForApp(t.dir);
    try {
      onSecretValue('keychain-value-123456');
      await ledger.ledger.append([{ type: 'note', payload: { text: 'token keychain-value-123456 leaked' } }], { durable: true });
      expect(ledger.ledger.dir).toBe(join(t.dir, 'ledger'));
      expect(readFileSync(join(t.dir, 'ledger', segmentName(1)), 'utf8')).not.toContain('keychain-value-123456');
    } finally {
      await ledger.close();
    }
  });
});
