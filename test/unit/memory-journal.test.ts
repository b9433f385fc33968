import { describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../electron/core/memory-journal';

const clock = { now: () => 1_700_000_000_000 };

describe('MemoryJournal: what was recorded cannot be changed afterwards', () => {
  it('editing an entry after appending it changes nothing that was stored', async () => {
    const journal = new MemoryJournal(clock);
    const payload = { operationId: 'op-1', identity: { serverId: 'gh', toolName: 'close_issue' }, list: [1, { deep: 'x' }] };
    await journal.append([{ type: 'op.proposed', payload }]);
    payload.identity.serverId = 'evil';
    (payload.list[1] as { deep: string }).deep = 'changed';
    payload.list.push(3);
    expect(journal.read()[0]!.payload).toEqual({ operationId: 'op-1', identity: { serverId: 'gh', toolName: 'close_issue' }, list: [1, { deep: 'x' }] });
  });

  it('records returned by append and read cannot be edited, at any depth', async () => {
    const journal = new MemoryJournal(clock);
    const [returned] = await journal.append([{ type: 'op.transition', payload: { operationId: 'op-1', decision: { reason: 'allowed', configErrors: ['a'] } } }]);
    const stored = journal.read()[0]!;
    for (const r of [returned!, stored]) {
      expect(() => ((r as { seq: number }).seq = 99)).toThrow(TypeError);
      expect(() => (r.payload.operationId = 'op-2')).toThrow(TypeError);
      expect(() => ((r.payload.decision as { reason: string }).reason = 'denied')).toThrow(TypeError);
      expect(() => (r.payload.decision as { configErrors: string[] }).configErrors.push('b')).toThrow(TypeError);
    }
    expect(journal.read()[0]).toEqual({ seq: 1, time: clock.now(), type: 'op.transition', payload: { operationId: 'op-1', decision: { reason: 'allowed', configErrors: ['a'] } } });
  });

  it('a payload that cannot be copied rejects the whole group and stores none of it', async () => {
    const journal = new MemoryJournal(clock);
    await expect(journal.append([{ type: 'a', payload: { ok: 1 } }, { type: 'b', payload: { f: () => 1 } }])).rejects.toThrow();
    expect(journal.size()).toBe(0);
  });
});
