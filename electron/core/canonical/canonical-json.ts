/**
 * Canonical JSON in the style of RFC 8785 (JCS): object keys sorted by UTF-16 code units, no
 * whitespace, numbers in ECMAScript shortest form (so `1.0`, `1e0` and `1` are one value), strings
 * escaped as `JSON.stringify` does. Used for fingerprints and contract hashes, so two inputs that
 * mean the same JSON hash the same, and any change in meaning changes the hash.
 */
import { WardenError } from '../../../shared/result';

/**
 * Serializes a JSON value canonically.
 *
 * Why: approvals bind to a hash of the arguments; key order or number spelling must not change
 * it, while every real change must. Rejects values JSON cannot represent (NaN, Infinity, BigInt,
 * functions, symbols, cycles) instead of silently dropping them.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set(), '$');
}

function write(value: unknown, seen: Set<object>, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) {
        throw new WardenError('VALIDATION_FAILED', `${path}: ${String(value)} is not a JSON number`);
      }
      // ECMAScript Number::toString is the JCS number form; -0 serializes as 0.
      return Object.is(value, -0) ? '0' : String(value);
    case 'object': {
      if (seen.has(value)) throw new WardenError('VALIDATION_FAILED', `${path}: circular reference`);
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        out = '[' + value.map((v, i) => (v === undefined ? 'null' : write(v, seen, `${path}[${i}]`))).join(',') + ']';
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          throw new WardenError('VALIDATION_FAILED', `${path}: only plain objects are JSON (got ${proto?.constructor?.name ?? 'object'})`);
        }
        const obj = value as Record<string, unknown>;
        const keys = Object.keys(obj)
          .filter((k) => obj[k] !== undefined)
          .sort(); // default sort compares UTF-16 code units, as RFC 8785 requires
        out = '{' + keys.map((k) => JSON.stringify(k) + ':' + write(obj[k], seen, `${path}.${k}`)).join(',') + '}';
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new WardenError('VALIDATION_FAILED', `${path}: a ${typeof value} is not JSON`);
  }
}

/**
 * Deep-copies a JSON value and freezes every level of the copy.
 *
 * Why: the gate stores exactly what will be sent; nobody (caller, model loop, renderer) may
 * change it after the request, and a copy means later edits to the caller's object change nothing.
 */
export function deepFreezeCopy<T>(value: T): T {
  return freeze(JSON.parse(canonicalJson(value))) as T;
}

function freeze(value: unknown): unknown {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) freeze(v);
    Object.freeze(value);
  }
  return value;
}
