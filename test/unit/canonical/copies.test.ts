import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalCopy, canonicalJson, jsonCopy, plainCopy } from '../../../electron/core/canonical';

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

/** What JSON.parse(JSON.stringify(v)) gives, or the error it throws. */
function roundTrip(v: unknown): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(JSON.stringify(v)) as unknown };
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
}

function attempt(f: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: f() };
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
}

describe('jsonCopy', () => {
  it('gives exactly what the JSON round trip gives (or throws what it throws), for anything', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBoxedValues: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withBigInt: true }), (v) => {
        const expected = roundTrip(v);
        expect(attempt(() => jsonCopy(v, false))).toStrictEqual(expected);
        expect(attempt(() => jsonCopy(v, true))).toStrictEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('handles the cases the round trip treats specially', () => {
    expect(jsonCopy({ a: undefined, b: -0, c: NaN, d: [undefined, () => 1, Infinity], e: new Date(0), f: { toJSON: () => 'x' } }, false)).toStrictEqual({
      b: 0,
      c: null,
      d: [null, null, null],
      e: '1970-01-01T00:00:00.000Z',
      f: 'x',
    });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => jsonCopy(cyclic, true)).toThrow(TypeError);
    const proto = jsonCopy(JSON.parse('{"__proto__":{"x":1}}') as object, true);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('freezes every level and shares nothing with the input', () => {
    const input = { content: [{ type: 'text', text: 'hi', meta: { n: 1 } }] };
    const copy = jsonCopy(input, true);
    input.content[0]!.meta.n = 2;
    expect(copy.content[0]!.meta.n).toBe(1);
    expect(Object.isFrozen(copy.content[0]!.meta)).toBe(true);
    expect(() => copy.content.push({ type: 'x', text: '', meta: { n: 0 } })).toThrow(TypeError);
  });
});

describe('canonicalCopy', () => {
  const isDeepFrozen = (v: unknown): boolean =>
    v === null || typeof v !== 'object' || (Object.isFrozen(v) && Object.values(v).every(isDeepFrozen));

  it('gives the canonical text and exactly JSON.parse of it, frozen at every level, from one read', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, -0), (value, extra) => {
        const input = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value, extra } : value;
        const { canonical, copy } = canonicalCopy(input);
        expect(canonical).toBe(canonicalJson(input));
        expect(copy).toStrictEqual(JSON.parse(canonical));
        expect(Object.keys(copy ?? {})).toEqual(Object.keys(JSON.parse(canonical) ?? {}));
        expect(isDeepFrozen(copy)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('a getter is read once: the copy and the text cannot disagree', () => {
    let reads = 0;
    const tricky = {
      get path() {
        reads++;
        return reads === 1 ? '/safe' : '/etc/passwd';
      },
    };
    const { canonical, copy } = canonicalCopy(tricky);
    expect(reads).toBe(1);
    expect(canonical).toBe('{"path":"/safe"}');
    expect(copy).toEqual({ path: '/safe' });
  });

  it('values nested deeper than the fast writer goes are still written, and cycles still reported with their path', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 1000; i++) deep = i % 2 ? [deep] : { k: deep };
    const { canonical, copy } = canonicalCopy(deep);
    expect(copy).toStrictEqual(JSON.parse(canonical));
    expect(canonical).toBe(JSON.stringify(deep));
    const cyclic: Record<string, unknown> = { a: [1] };
    (cyclic.a as unknown[]).push({ back: cyclic });
    expect(() => canonicalCopy(cyclic)).toThrow(/^\$\.a\[1\]\.back: circular reference$/);
    expect(() => canonicalJson({ x: [{ y: NaN }] })).toThrow(/^\$\.x\[0\]\.y: NaN is not a JSON number$/);
  });
});
