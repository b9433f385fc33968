import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, contractHash, deepFreezeCopy, endpointHash, fingerprint, sha256Hex } from '../../../electron/core/canonical';

const base = {
  serverId: 'github',
  endpointHash: 'e1',
  accountId: 'work',
  toolName: 'close_issue',
  contractHash: 'c1',
};

/** Re-orders keys of every object in a JSON value according to a seed, keeping meaning. */
function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffleKeys(v, seed + i));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const rotated = entries.map((_, i) => entries[(i + seed) % entries.length]!).reverse();
    return Object.fromEntries(rotated.map(([k, v]) => [k, shuffleKeys(v, seed + 1)]));
  }
  return value;
}

/** Writes JSON with other number spellings (1 → 1.0e0, 0.5 → 5e-1 style) that parse to the same value. */
function respell(value: unknown): string {
  if (typeof value === 'number') {
    const exp = value.toExponential();
    return Number.isSafeInteger(value) ? `${value}.0` : exp.replace('e', 'E');
  }
  if (Array.isArray(value)) return '[' + value.map(respell).join(' , ') + ']';
  if (value && typeof value === 'object') {
    return '{ ' + Object.entries(value).map(([k, v]) => `${JSON.stringify(k)} : ${respell(v)}`).join(', ') + ' }';
  }
  return JSON.stringify(value);
}

describe('canonical JSON (RFC 8785 style)', () => {
  it('sorts keys by UTF-16 code units and writes numbers in shortest ECMAScript form', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], '\u20ac': 1, '\r': 2, é: 3 })).toBe('{"\\r":2,"a":[true,null,"x"],"b":1,"é":3,"€":1}');
    expect(canonicalJson(JSON.parse('{"n":1.0,"m":1e2,"z":-0,"f":0.000001,"g":1e21}'))).toBe('{"f":0.000001,"g":1e+21,"m":100,"n":1,"z":0}');
  });

  it('rejects values JSON cannot represent instead of dropping them', () => {
    expect(() => canonicalJson({ x: NaN })).toThrow(/x: NaN is not a JSON number/);
    expect(() => canonicalJson({ x: 10n })).toThrow(/bigint/);
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    expect(() => canonicalJson(cyc)).toThrow(/circular/);
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/plain objects/);
  });

  it('deep copy is frozen at every level and independent of the original', () => {
    const original = { path: '/a', nested: { list: [1, { x: 2 }] } };
    const copy = deepFreezeCopy(original);
    original.nested.list.push(3);
    expect(copy.nested.list).toHaveLength(2);
    expect(Object.isFrozen(copy.nested.list[1])).toBe(true);
    expect(() => {
      (copy.nested as { list: unknown[] }).list.push(9);
    }).toThrow();
  });
});

describe('fingerprint', () => {
  it('the fingerprint changes when any bound field changes and not when only key order or number spelling changes', () => {
    const json = fc.jsonValue({ maxDepth: 3 }).filter((v) => v !== null && typeof v === 'object' && !Array.isArray(v));
    fc.assert(
      fc.property(json, fc.nat(20), (args, seed) => {
        const fp = fingerprint({ ...base, canonicalArguments: canonicalJson(args) });
        // Insensitive: key order and number spelling (re-serialized with exponent/trailing zeros).
        const reordered = shuffleKeys(args, seed);
        expect(fingerprint({ ...base, canonicalArguments: canonicalJson(reordered) })).toBe(fp);
        const respelled = JSON.parse(respell(reordered));
        expect(fingerprint({ ...base, canonicalArguments: canonicalJson(respelled) })).toBe(fp);
        // Sensitive: every bound field.
        for (const field of Object.keys(base) as (keyof typeof base)[]) {
          expect(fingerprint({ ...base, [field]: base[field] + 'x', canonicalArguments: canonicalJson(args) })).not.toBe(fp);
        }
        expect(fingerprint({ ...base, canonicalArguments: canonicalJson({ ...(args as object), __extra: 1 }) })).not.toBe(fp);
      }),
      { numRuns: 200 },
    );
  });

  it('a changed argument value changes the fingerprint', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        const fa = fingerprint({ ...base, canonicalArguments: canonicalJson({ v: a }) });
        const fb = fingerprint({ ...base, canonicalArguments: canonicalJson({ v: b }) });
        expect(fa).not.toBe(fb);
      }),
    );
  });

  it('fingerprints and hashes are stable across versions (recorded approvals stay valid after an upgrade)', () => {
    // Golden values: a fingerprint stored in the ledger before a restart must be recomputed identically after it.
    const fp = fingerprint({ ...base, canonicalArguments: canonicalJson({ repo: 'acme/mobile', issue: 42, note: 'é\u2028"\\' }) });
    expect(fp).toBe('daacc1f3f7258f3b960486d7b3d87664ed890bda4eba1a0f388f603f13a59854');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é\u0000')).toBe('6133f2d2dc6cad8dbbfc80f0fb587d3e61469954c82d906cce85239e4c6c8bbd');
    // The fast path equals the definition: sha256 over the canonical JSON array of the bound fields.
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 6, maxLength: 6 }), ([serverId, endpointHash, accountId, toolName, contractHash, canonicalArguments]) => {
        const input = { serverId: serverId!, endpointHash: endpointHash!, accountId: accountId!, toolName: toolName!, contractHash: contractHash!, canonicalArguments: canonicalArguments! };
        expect(fingerprint(input)).toBe(sha256Hex(canonicalJson(['warden.fingerprint.v1', serverId, endpointHash, accountId, toolName, contractHash, canonicalArguments])));
      }),
    );
  });

  it('tools sharing a contract hash on other servers or accounts never share a fingerprint (memoized identity text is keyed by all fields)', () => {
    const definition = (i: typeof base & { canonicalArguments: string }) =>
      sha256Hex(canonicalJson(['warden.fingerprint.v1', i.serverId, i.endpointHash, i.accountId, i.toolName, i.contractHash, i.canonicalArguments]));
    const variants = [base, { ...base, serverId: 'gitlab' }, { ...base, accountId: 'personal' }, { ...base, endpointHash: 'e2' }, { ...base, toolName: 'open_issue' }];
    const seen = new Set<string>();
    for (let round = 0; round < 3; round++) {
      for (const v of variants) {
        const input = { ...v, canonicalArguments: '{"n":1}' };
        expect(fingerprint(input)).toBe(definition(input));
        seen.add(fingerprint(input));
      }
    }
    expect(seen.size).toBe(variants.length);
  });

  it('field boundaries cannot be shifted to forge a collision', () => {
    const a = fingerprint({ ...base, serverId: 'ab', accountId: 'c', canonicalArguments: '{}' });
    const b = fingerprint({ ...base, serverId: 'a', accountId: 'bc', canonicalArguments: '{}' });
    expect(a).not.toBe(b);
  });
});

describe('contract and endpoint hashes', () => {
  const tool = { name: 't', title: 'T', description: 'd', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } };
  it('a description-only, schema-only or annotations-only change changes the contract hash', () => {
    const h = contractHash(tool);
    expect(contractHash({ ...tool, inputSchema: { properties: {}, type: 'object' } })).not.toBe(h);
    expect(contractHash({ ...tool, description: 'd.' })).not.toBe(h);
    expect(contractHash({ ...tool, inputSchema: { type: 'object', properties: { x: {} } } })).not.toBe(h);
    expect(contractHash({ ...tool, annotations: { readOnlyHint: false } })).not.toBe(h);
    expect(contractHash({ ...tool, outputSchema: { type: 'object' } })).not.toBe(h);
    expect(contractHash(JSON.parse(JSON.stringify(shuffleKeys(tool, 3))))).toBe(h);
  });
  it('endpoint hash covers command, args, cwd and http origin+path, not query strings', () => {
    const e = endpointHash({ kind: 'stdio', command: 'node', args: ['s.js'], cwd: '/a' });
    expect(endpointHash({ kind: 'stdio', command: 'node', args: ['s.js'], cwd: '/b' })).not.toBe(e);
    expect(endpointHash({ kind: 'stdio', command: 'node', args: ['t.js'], cwd: '/a' })).not.toBe(e);
    const h = endpointHash({ kind: 'http', url: 'https://x.example/mcp' });
    expect(endpointHash({ kind: 'http', url: 'https://x.example/mcp?token=1' })).toBe(h);
    expect(endpointHash({ kind: 'http', url: 'https://y.example/mcp' })).not.toBe(h);
    expect(endpointHash({ kind: 'http', url: 'https://x.example/mcp2' })).not.toBe(h);
  });
});
