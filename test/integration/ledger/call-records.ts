/**
 * Records of real calls through the gate (made once in memory), as templates for ledgers of many
 * operations: index tests write thousands of them straight to a ledger, which is what a gate
 * would write for each call.
 */
import { expect } from 'vitest';
import { contractHash, endpointHash } from '../../../electron/core/canonical';
import { Gate } from '../../../electron/core/gate/gate';
import type { ToolDescriptor } from '../../../electron/core/gate/ports';
import { MemoryHistory } from '../../../electron/core/ledger/history';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock, type OperationHistory } from '../../../electron/core/ports';
import type { Journal } from '../../../electron/core/ports';
import { PolicyState } from '../../../shared/domain/policy';

/** The one tool every template call used. */
export const descriptor: ToolDescriptor = {
  serverId: 'effects',
  accountId: 'work',
  name: 'perform',
  description: 'records a call',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  contractHash: contractHash({ name: 'perform', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } }),
  endpointHash: endpointHash({ kind: 'stdio', command: 'node', args: ['effects'] }),
};

/** A gate allowing `descriptor` on `journal`, whose executor counts its calls in `sent`. */
export function allowingGate(journal: Journal, history: OperationHistory, sent: string[] = []): Gate {
  const policy = PolicyState.parse({ user: [{ id: 'allow', scope: { kind: 'global' }, mode: 'allow' }] });
  return new Gate({
    journal,
    history,
    executor: {
      call: async (_target, _args, options) => {
        sent.push(options.operationId);
        return { content: [{ type: 'text', text: 'done' }] };
      },
    },
    registry: { getTool: (s, a, n) => (s === 'effects' && a === 'work' && n === 'perform' ? descriptor : undefined), listTools: () => [descriptor] },
    policy: { current: () => policy },
    scheduleExpiry: false,
  });
}

/** The records of one finished call (proposed … succeeded), as entries to append with another id. */
export async function callTemplates(): Promise<Array<{ type: string; payload: Record<string, unknown> }>> {
  const journal = new MemoryJournal(systemClock);
  const gate = allowingGate(journal, new MemoryHistory(() => journal.read()));
  const op = await gate.request({ source: 'user', serverId: 'effects', accountId: 'work', toolName: 'perform', arguments: { n: 1 }, operationId: 'template' });
  expect(op.state, op.reason).toBe('succeeded');
  gate.close();
  return journal.read().map((r) => ({ type: r.type, payload: r.payload as Record<string, unknown> }));
}

/** The entries of call `id`: all of them, or only up to (and with) its `executing` transition. */
export function callEntries(shapes: ReadonlyArray<{ type: string; payload: Record<string, unknown> }>, id: string, upTo: 'finished' | 'executing' = 'finished'): Array<{ type: string; payload: Record<string, unknown> }> {
  const out = [];
  for (const s of shapes) {
    out.push({ type: s.type, payload: { ...s.payload, operationId: id } });
    if (upTo === 'executing' && s.payload.to === 'executing') break;
  }
  return out;
}
