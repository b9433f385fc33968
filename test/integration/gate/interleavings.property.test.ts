/**
 * Property: for random interleavings of request / approve / reject / revoke / policy change /
 * contract change / endpoint change, a call reaches the (real, in-memory) MCP server only if it was allowed or
 * freshly approved under the policy current at that moment, and at most once.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { gateFixture } from './harness';

type Mode = 'allow' | 'ask' | 'disabled';
type Cmd =
  | { kind: 'request' }
  | { kind: 'approve'; pick: number; twice: boolean }
  | { kind: 'reject'; pick: number }
  | { kind: 'policy'; mode: Mode; revalidate: boolean }
  | { kind: 'contract' }
  | { kind: 'endpoint' };

const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'request' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('approve' as const), pick: fc.nat(30), twice: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reject' as const), pick: fc.nat(30) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('policy' as const), mode: fc.constantFrom<Mode>('allow', 'ask', 'disabled'), revalidate: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'contract' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'endpoint' as const }) },
);

describe('gate interleavings (property)', () => {
  it('a call reaches the server only if allowed or freshly approved under the current policy, and at most once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmdArb, { minLength: 1, maxLength: 25 }), async (cmds) => {
        const fx = await gateFixture({ tools: ['act'] });
        try {
          // The model of what must happen.
          let mode: Mode = 'ask';
          let contractVersion = 0;
          let pinnedVersion = -1;
          const effective = (): Mode => (mode === 'allow' && pinnedVersion !== contractVersion ? 'ask' : mode);
          const modelPending = new Set<number>();
          const expectedCalls = new Set<number>();
          const opIds: string[] = [];
          let n = 0;

          const setMode = (m: Mode) => {
            mode = m;
            const t = fx.registry.getTool('gh', 'work', 'act')!;
            if (m === 'allow') pinnedVersion = contractVersion;
            fx.policy.set({ user: [{ id: 'r', scope: { kind: 'tool', serverId: 'gh', accountId: null, toolName: 'act' }, mode: m, pin: m === 'allow' ? { contractHash: t.contractHash, endpointHash: t.endpointHash } : null }] });
          };

          for (const cmd of cmds) {
            switch (cmd.kind) {
              case 'request': {
                const id = n++;
                const op = await fx.gate.submit({ source: 'model', conversationId: 'c', serverId: 'gh', accountId: 'work', toolName: 'act', arguments: { n: id }, operationId: `op-${id}` });
                opIds.push(op.operationId);
                const e = effective();
                if (e === 'allow') expectedCalls.add(id);
                if (e === 'ask') modelPending.add(id);
                expect(op.state).toBe(e === 'allow' ? 'executing' : e === 'ask' ? 'awaiting_approval' : 'denied');
                break;
              }
              case 'approve': {
                if (opIds.length === 0) break;
                const id = cmd.pick % opIds.length;
                const attempts = cmd.twice ? [fx.gate.approve(`op-${id}`), fx.gate.approve(`op-${id}`)] : [fx.gate.approve(`op-${id}`)];
                await Promise.allSettled(attempts);
                if (modelPending.has(id)) {
                  modelPending.delete(id);
                  if (effective() !== 'disabled') expectedCalls.add(id);
                }
                break;
              }
              case 'reject': {
                if (opIds.length === 0) break;
                const id = cmd.pick % opIds.length;
                await fx.gate.reject(`op-${id}`).catch(() => undefined);
                modelPending.delete(id);
                break;
              }
              case 'policy': {
                setMode(cmd.mode);
                if (cmd.mode === 'disabled' && cmd.revalidate) modelPending.clear();
                if (cmd.revalidate) await fx.gate.revalidate('test policy change');
                break;
              }
              case 'contract': {
                contractVersion++;
                fx.mcp.tools.get('act')!.update({ description: `act v${contractVersion}` });
                await fx.registry.refresh(); // the registry's change feed makes the gate re-validate
                await fx.gate.revalidate('contract changed');
                modelPending.clear(); // pending approvals were bound to the old contract: invalidated
                break;
              }
              case 'endpoint': {
                contractVersion++; // any identity change: the Always Allow pin no longer matches
                await fx.registry.setEndpoint('gh', `node server-v${contractVersion}.js`);
                await fx.gate.revalidate('endpoint changed');
                modelPending.clear();
                break;
              }
            }
            for (const [i, id] of opIds.entries()) {
              const s = (await fx.gate.get(id))!.state;
              if (!modelPending.has(i)) expect(s, `op-${i}`).not.toBe('awaiting_approval');
            }
          }
          await Promise.all(opIds.map((id) => fx.gate.settled(id).catch(() => undefined)).filter((_, i) => expectedCalls.has(i)));
          const received = fx.mcp.received.map((c) => c.args.n as number);
          expect(new Set(received).size).toBe(received.length); // at most once
          expect(new Set(received)).toEqual(expectedCalls); // only (and all) allowed / freshly approved
        } finally {
          await fx.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});
