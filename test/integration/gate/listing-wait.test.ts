/**
 * The gate's wait for a re-list is bounded: a server whose re-list never settles cannot hold a
 * call (or the person's approval) forever, and what is decided after the bound never honours an
 * Always Allow the listing could not confirm.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolDescriptor, ToolRegistry } from '../../../electron/core/gate/ports';
import { gateCall, gateFixture, gateOver, type GateFixture } from './harness';

let fx: GateFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** The fixture's registry, but its re-list never settles and its listing says why it cannot be relied on. */
function stalledRegistry(f: GateFixture): ToolRegistry & { waits: number } {
  const inner = f.registry;
  const stalled = {
    waits: 0,
    getTool: (s: string, a: string, t: string): ToolDescriptor | undefined => {
      const d = inner.getTool(s, a, t);
      return d && { ...d, unverifiedListing: 'GH said its tools changed and is being re-listed' };
    },
    listTools: (filter?: { serverId?: string; accountId?: string }) => inner.listTools(filter),
    subscribe: inner.subscribe.bind(inner),
    whenListed: () => {
      stalled.waits++;
      return new Promise<void>(() => {});
    },
  };
  return stalled;
}

describe('waiting for a re-list', () => {
  it('a call to a server whose re-list never settles is decided after the bound, and Always Allow asks instead of sending', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const registry = stalledRegistry(fx);
    const gate = gateOver(fx, { registry, listingWaitMs: 200 });
    try {
      const started = Date.now();
      const op = await gate.submit(gateCall());
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(registry.waits).toBe(1);
      expect(op.state).toBe('awaiting_approval');
      expect(op.decision).toMatchObject({ decision: 'ask', layer: 'availability', reason: 'Asks: GH said its tools changed and is being re-listed' });
      expect(fx.mcp.count()).toBe(0);
    } finally {
      gate.close();
    }
  });
});
