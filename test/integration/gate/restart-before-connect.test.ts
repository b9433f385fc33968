/**
 * After a restart, recovery runs before any server has connected again (connections come up
 * afterwards). A pending approval must survive that window — re-queued, as docs/ARCHITECTURE.md says —
 * and still be decided against the real, current tool when the person approves it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RegistryChange, ToolRegistry } from '../../../electron/core/gate/ports';
import { ToolCallFailedError } from '../../../electron/core/gate/call-outcome';
import { gateFixture, gateOver, type GateFixture, gateCall } from './harness';
import { recordedIn } from './harness';

let fx: GateFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const call = gateCall;

/** A registry that lists nothing until `connect()`, like the connection layer right after start. */
function laterRegistry(real: ToolRegistry) {
  let connected = false;
  const listeners = new Set<(c: RegistryChange) => void>();
  const registry: ToolRegistry = {
    getTool: (s, a, t) => (connected ? real.getTool(s, a, t) : undefined),
    listTools: (f) => (connected ? real.listTools(f) : []),
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  return {
    registry,
    connect() {
      connected = true;
      for (const l of listeners) l({ kind: 'tools-changed', serverId: 'gh', accountId: 'work' } as RegistryChange);
    },
    otherServerChanged() {
      for (const l of listeners) l({ kind: 'tools-changed', serverId: 'other', accountId: 'work' } as RegistryChange);
    },
  };
}

describe('restart before servers reconnect', () => {
  it('a recovered pending approval stays queued while its server is not connected, and approving it later sends it exactly once', async () => {
    fx = await gateFixture();
    const waiting = await fx.gate.submit(call({ operationId: 'wait-1' }));
    expect(waiting.state).toBe('awaiting_approval');

    const later = laterRegistry(fx.registry);
    const gate2 = gateOver(fx, { registry: later.registry });
    try {
      await gate2.restore(await recordedIn(fx.journal));
      expect((await gate2.get('wait-1'))?.state).toBe('awaiting_approval');
      // Another server's tool list changing must not sweep it away either.
      later.otherServerChanged();
      await new Promise((r) => setTimeout(r, 10));
      expect((await gate2.get('wait-1'))?.state).toBe('awaiting_approval');
      later.connect();
      await new Promise((r) => setTimeout(r, 10));
      expect((await gate2.get('wait-1'))?.state).toBe('awaiting_approval');
      await gate2.approve('wait-1');
      expect((await gate2.settled('wait-1')).state).toBe('succeeded');
      expect(fx.mcp.count('close_issue')).toBe(1);
    } finally {
      gate2.close();
    }
  });

  it('approving a recovered call whose server never came back denies it and sends nothing', async () => {
    fx = await gateFixture();
    await fx.gate.submit(call({ operationId: 'wait-2' }));
    const later = laterRegistry(fx.registry);
    const gate2 = gateOver(fx, { registry: later.registry });
    try {
      await gate2.restore(await recordedIn(fx.journal));
      const after = await gate2.approve('wait-2');
      expect(['denied', 'invalidated']).toContain(after.state);
      expect(fx.mcp.count()).toBe(0);
    } finally {
      gate2.close();
    }
  });

  it('a server that answers with a JSON-RPC error is a definite failure (failed), not outcome_unknown', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const failing = { call: async () => Promise.reject(new ToolCallFailedError('MCP error -32602: unknown tool')) };
    const gate = gateOver(fx, { executor: failing as never });
    try {
      const op = await gate.request(call());
      expect(op.state).toBe('failed');
      expect(op.error?.code).toBe('TOOL_CALL_FAILED');
    } finally {
      gate.close();
    }
  });
});
