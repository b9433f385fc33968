/**
 * Which requests the gate admits without asking the history (`HeldOperations.admitsAtOnce`): one
 * without an id, one naming an operation it holds, and the first submission of an id the gate
 * itself made (`newOperationId`, what the chat uses). Any other id, and a made id submitted
 * again, is looked up first, so an id that already ran is never sent twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OperationHistory } from '../../../electron/core/ports';
import { gateCall as call, gateFixture, gateOver, historyOf, type GateFixture } from './harness';

let fx: GateFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** The fixture journal's history, counting lookups and holding each until `open` is called. */
function heldHistory(fixture: GateFixture): { history: OperationHistory; asked: string[]; open: () => void } {
  const inner = historyOf(fixture.journal);
  const asked: string[] = [];
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return {
    asked,
    open,
    history: {
      find: async (id) => {
        asked.push(id);
        await opened;
        return inner.find(id);
      },
      recordedOperations: (query) => inner.recordedOperations(query),
    },
  };
}

describe('the gate admits an id it made without asking the history', () => {
  it('a made id is decided and sent while every history lookup is held; submitted again, it is looked up and answered from the record, never sent twice', async () => {
    fx = await gateFixture();
    fx.allow('close_issue');
    const held = heldHistory(fx);
    const gate = gateOver(fx, { history: held.history });
    try {
      const id = gate.newOperationId();
      expect(gate.newOperationId()).not.toBe(id);
      const op = await gate.request(call({ operationId: id }));
      expect(op.state).toBe('succeeded');
      expect(held.asked).toEqual([]);
      expect(fx.mcp.count()).toBe(1);
      // Once it finished and left the gate, the same id is an id like any other: looked up.
      await new Promise((r) => setTimeout(r, 10));
      expect(gate.getLive(id)).toBeUndefined();
      const again = gate.request(call({ operationId: id, arguments: { text: 'something else' } }));
      // A caller-chosen id is looked up too.
      const chosen = gate.request(call({ operationId: 'chosen-by-caller' }));
      await new Promise((r) => setTimeout(r, 10));
      expect(held.asked.sort()).toEqual(['chosen-by-caller', id].sort());
      held.open();
      expect((await again).arguments).toEqual({ text: 'close #42' });
      expect((await chosen).state).toBe('succeeded');
      expect(fx.mcp.count()).toBe(2);
    } finally {
      held.open();
      gate.close();
    }
  });
});
