/**
 * The Recovery slice against the REAL core on a REAL durable ledger and a REAL spawned stdio
 * server that never answers (test/fixtures/servers/hang.ts): a call stopped while executing ends
 * outcome_unknown, shows up for reconciliation, and the person's "failed" or "retry" is recorded
 * (a retry is a NEW operation with its own decision). Run inside scripts/with-keyring.sh.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { LedgerService } from '../../../electron/core/ledger/service';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { createWardenApi } from '../../../shared/ipc';
import { createAppStore, type AppStore } from '../../../renderer/src/store';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');
const hang = path.join(root, 'test/fixtures/servers/hang.ts');

let core: WardenCore | undefined;
let service: LedgerService | undefined;
let dir: string | undefined;

afterEach(async () => {
  // Closing the core kills the spawned server; then the ledger is closed and its folder removed.
  await core?.close();
  await service?.close().catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
  core = undefined;
  service = undefined;
  dir = undefined;
});

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('recovery slice over the real core on the durable ledger', () => {
  it('a call stopped while executing is listed as outcome unknown; marking it failed and retrying it are recorded, a retry is a new operation, and Recovery shows where it went', { timeout: 60_000 }, async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'warden-recovery-store-'));
    service = await LedgerService.open({ dir });
    core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: 'test',
      ledger: service,
      servers: { secrets: new KeytarSecretStore({ service: `warden-recovery-test-${randomUUID()}` }) },
      gate: { prompter: { prompt: async () => 'approve' } },
      connections: { reconnect: { maxAttempts: 0 } },
    });
    await core.recovered;
    const c = core;
    const api = createWardenApi(
      (channel, request) => dispatch(c.handlers, channel, request, () => {}),
      (event, listener) => c.events.subscribe((e, payload) => e === event && listener(payload)),
    );
    const store: AppStore = createAppStore({ api: () => api });
    const offs = [store.getState().watchApprovals(), store.getState().watchActivity()];
    try {
      const view = await store.getState().addServer({ name: 'Hang', transport: 'stdio', command: process.execPath, args: ['--import', tsxLoader, hang], cwd: root, env: [] }, []);
      const serverId = view.definition.id;
      const accountId = view.accounts[0]!.id;
      await store.getState().connect(serverId, accountId);
      await store.getState().setToolMode({ serverId, accountId, toolName: 'hang' }, 'allow');
      expect(store.getState().permissionsError).toBeNull();

      const stopped: string[] = [];
      for (let i = 0; i < 2; i++) {
        const op = await store.getState().runTool({ serverId, accountId, toolName: 'hang', arguments: {} });
        expect(op.state).toBe('executing');
        await store.getState().cancel(op.operationId);
        expect(store.getState().operations.find((o) => o.operationId === op.operationId)?.state).toBe('outcome_unknown');
        stopped.push(op.operationId);
      }
      await store.getState().refreshRecovery();
      expect(store.getState().recoveryError).toBeNull();
      expect(store.getState().recoveryOperations.map((o) => o.operationId).sort()).toEqual([...stopped].sort());

      // A reason is required (it goes into the audit log).
      expect(await store.getState().reconcile(stopped[0]!, 'failed', '')).toBeNull();
      expect(store.getState().recoveryError?.code).toBe('INVALID_REQUEST');

      expect(await store.getState().reconcile(stopped[0]!, 'failed', 'checked the server: nothing happened')).toBeNull();
      expect(store.getState().recoveryError).toBeNull();
      const retryId = await store.getState().reconcile(stopped[1]!, 'retry', 'try once more');
      expect(retryId).toEqual(expect.any(String));
      expect(retryId).not.toBe(stopped[1]);
      expect(store.getState().recoveryOperations.map((o) => o.operationId)).not.toContain(stopped[0]);
      expect(store.getState().recoveryOperations.map((o) => o.operationId)).not.toContain(stopped[1]);
      await until(() => store.getState().operations.some((o) => o.operationId === retryId), 'the retry to appear');
      expect(store.getState().operations.find((o) => o.operationId === retryId)?.origin.source).toBe('user');

      // Both rows say what the person recorded: one failed, one still unknown (its retry is a new call).
      store.getState().setCallFilter({});
      await store.getState().refreshCalls();
      const states = Object.fromEntries(store.getState().calls.filter((c) => stopped.includes(c.operationId)).map((c) => [c.operationId, c.state]));
      expect(states).toEqual({ [stopped[0]!]: 'failed', [stopped[1]!]: 'outcome_unknown' });

      // Settled operations stay visible with what was recorded and where a retry went.
      const settled = store.getState().settledRecovery;
      expect(settled.map((o) => [o.operationId, o.reconciled?.outcome, o.reconciled?.retryOperationId]).sort()).toEqual(
        [
          [stopped[0], 'failed', null],
          [stopped[1], 'retried', retryId],
        ].sort(),
      );
      const retry = await store.getState().loadOperationView(retryId!);
      expect(retry).toMatchObject({ operationId: retryId, toolName: 'hang', retryOf: stopped[1] });
    } finally {
      offs.forEach((off) => off());
    }
  });
});
