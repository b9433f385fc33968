import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { plainCopy } from '../../electron/core/canonical';
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

describe('plainCopy', () => {
  it('equals structuredClone for any JSON value, shares no object with its input, and freezes every level on request', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = plainCopy(value, true);
        expect(copy).toEqual(structuredClone(value));
        const walk = (a: unknown, b: unknown): void => {
          if (a === null || typeof a !== 'object') return;
          expect(a).not.toBe(b);
          expect(Object.isFrozen(a)).toBe(true);
          for (const k of Object.keys(a)) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
        };
        walk(copy, value);
        const loose = plainCopy(value, false);
        if (loose !== null && typeof loose === 'object') expect(Object.isFrozen(loose)).toBe(false);
      }),
    );
  });

  it('copies non-plain values and cycles the way structuredClone does', () => {
    const date = new Date(5);
    const copy = plainCopy({ at: date, m: new Map([[1, 2]]) }, true);
    expect(copy.at).toEqual(date);
    expect(copy.at).not.toBe(date);
    expect(copy.m.get(1)).toBe(2);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const c = plainCopy(cyclic, true);
    expect(c.self).toBe(c);
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => plainCopy({ f: () => 1 }, false)).toThrow();
  });

  it('keeps an own "__proto__" key as data, never as the copy\'s prototype', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = plainCopy(value, true);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(copy).toEqual(structuredClone(value));
  });
});
