/**
 * The idempotency lookup every call with an operation id makes (every chat call) against the
 * durable ledger: it must keep the index's batching (no commit forced per call), and a repeated
 * id must never send a second call, whether that id's records are still in the index's batch,
 * already committed, or read back after a restart.
 *
 * The real gate on the real ledger service, through the connection manager, to the tracker
 * fixture spawned over stdio; it writes every call it receives to a file, so the count of calls
 * is the server's own.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Gate } from '../../../electron/core/gate/gate';
import { LedgerService } from '../../../electron/core/ledger/service';
import { PolicyState } from '../../../shared/domain/policy';
import { makeManager, stdioFixture } from '../mcp/helpers';
import { tempDir } from '../../unit/ledger/helpers';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const policy = PolicyState.parse({ user: [{ id: 'allow-all', scope: { kind: 'global' }, mode: 'allow' }] });

interface Fixture {
  gate: Gate;
  service: LedgerService;
  /** Invoices the server itself recorded sending. */
  invoices: () => Array<{ tool: string; args: { customer: string } }>;
  close: () => Promise<void>;
}

async function start(dir: string, options: { indexCommitDelayMs?: number } = {}): Promise<Fixture> {
  const callsFile = join(dir, 'calls.jsonl');
  const { manager } = makeManager([stdioFixture('tracker', 'tracker', [{ name: 'CALLS_FILE', value: callsFile }])]);
  const service = await LedgerService.open({ dir: join(dir, 'ledger'), verifyInBackground: false, ...options });
  const gate = new Gate({ journal: service.ledger, history: service.history, executor: manager, registry: manager, policy: { current: () => policy }, scheduleExpiry: false });
  await service.recoverOperations(gate);
  if ((await manager.connect('tracker', 'default')).state !== 'connected') throw new Error('the tracker fixture did not connect');
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    gate.close();
    await manager.close();
    await service.close();
  };
  cleanups.push(close);
  const invoices = () =>
    existsSync(callsFile)
      ? readFileSync(callsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { tool: string; args: { customer: string } })
      : [];
  return { gate, service, invoices, close };
}

const invoice = (operationId: string, customer = 'Ada') => ({
  source: 'model' as const,
  operationId,
  conversationId: 'conv-1',
  serverId: 'tracker',
  accountId: 'default',
  toolName: 'send_invoice',
  arguments: { customer, amount: 12, currency: 'EUR' },
});

describe('idempotency lookups on the durable ledger', () => {
  it('calls with operation ids, as chat makes them, share index commits instead of forcing one each', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const f = await start(t.dir);
    const CALLS = 320;
    const CALLERS = 32;
    const before = f.service.index.stats;
    let next = 0;
    const caller = async (): Promise<void> => {
      while (next < CALLS) {
        const op = await f.gate.request(invoice(randomUUID(), `customer ${next++}`));
        expect(op.state).toBe('succeeded');
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    await f.service.index.flush();
    const after = f.service.index.stats;
    expect(f.invoices()).toHaveLength(CALLS);
    // Commits come from the index's own timer (one per 100 ms) and its batch size; a lookup
    // that commits first makes one per call, or nearly (concurrent lookups share some).
    const commits = after.commits - before.commits;
    expect(commits, `${commits} index commits for ${CALLS} calls`).toBeLessThan(CALLS / 10);
  });

  it('a repeated id whose records the index has not committed yet answers with the recorded call, sends nothing and commits nothing', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    // Records wait for their batch far longer than the test runs: nothing commits on its own.
    const f = await start(t.dir, { indexCommitDelayMs: 600_000 });
    const id = randomUUID();
    const first = await f.gate.request(invoice(id));
    expect(first.state).toBe('succeeded');
    await f.service.ledger.flush();
    const before = f.service.index.stats;
    expect(f.service.index.backlog).toBeGreaterThan(0);

    const again = await f.gate.submit(invoice(id));
    expect(again.state).toBe('succeeded');
    expect(again.result?.content).toEqual(first.result?.content);
    expect(await f.gate.settled(id)).toMatchObject({ state: 'succeeded' });
    expect(f.invoices()).toHaveLength(1);
    expect(f.service.index.stats.commits).toBe(before.commits);
    expect(f.service.index.backlog).toBeGreaterThan(0);
  });

  it('a repeated id whose proposal is committed and whose outcome is not yet answers with the outcome, never a second call', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const f = await start(t.dir, { indexCommitDelayMs: 600_000 });
    const id = randomUUID();
    // The proposal and the decision are committed to the index, the outcome is still in its batch.
    const seen = new Promise<void>((resolve) => {
      const off = f.service.ledger.subscribe((records) => {
        if (records.some((r) => r.type === 'op.transition' && (r.payload as { to?: string }).to === 'executing')) {
          off();
          void f.service.index.flush().then(resolve);
        }
      });
    });
    const first = await f.gate.request(invoice(id));
    await seen;
    expect(first.state).toBe('succeeded');
    expect(f.service.index.backlog).toBeGreaterThan(0);
    const before = f.service.index.stats;

    const again = await f.gate.submit(invoice(id));
    expect(again).toMatchObject({ state: 'succeeded', result: first.result });
    expect(f.invoices()).toHaveLength(1);
    expect(f.service.index.stats.commits).toBe(before.commits);
  });

  it('a repeated id already committed, and after a restart, answers with the recorded call, never a second one', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const f = await start(t.dir);
    const id = randomUUID();
    const first = await f.gate.request(invoice(id));
    await f.service.index.flush();
    expect(f.service.index.backlog).toBe(0);
    expect(await f.gate.submit(invoice(id))).toMatchObject({ state: 'succeeded', result: first.result });
    expect(f.invoices()).toHaveLength(1);
    await f.close();

    const g = await start(t.dir);
    expect(await g.gate.request(invoice(id))).toMatchObject({ state: 'succeeded', result: first.result });
    expect(g.invoices()).toHaveLength(1);
  });
});
