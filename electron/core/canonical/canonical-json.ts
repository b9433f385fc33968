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
  return serialize(value, false);
}

/**
 * Canonical JSON of `value` plus a deep-frozen copy of it, made in one read of every member: the
 * copy is exactly `JSON.parse` of the canonical text (keys in canonical order, -0 as 0, undefined
 * members dropped), frozen at every level.
 *
 * Why: the gate stores what it will send and fingerprints it; reading a caller's object once for
 * both means a getter cannot show the hash one value and the copy another, and it saves the
 * parse-and-freeze pass on every tool call.
 */
export function canonicalCopy<T>(value: T): { canonical: string; copy: T } {
  const canonical = serialize(value, true);
  const copy = lastCopy as T;
  lastCopy = undefined;
  return { canonical, copy };
}

/**
 * Nesting depth the fast writer handles without tracking ancestors; anything deeper (a cycle, or
 * a genuinely deep value) is written again by the careful writer, which finds cycles exactly.
 */
const FAST_DEPTH = 200;

class TooDeepForFast extends Error {}

/** The copy made by the last `write(…, copy = true)` call (a register, so `write` returns only its text). */
let lastCopy: unknown;

function serialize(value: unknown, copy: boolean): string {
  try {
    try {
      return write(value, copy, 0, null);
    } catch (error) {
      if (!(error instanceof TooDeepForFast)) throw error;
      return write(value, copy, 0, new Set());
    }
  } catch (error) {
    lastCopy = undefined;
    if (error instanceof NotJson) throw new WardenError('VALIDATION_FAILED', `${pathOf(error.path.reverse())}: ${error.what}`);
    throw error;
  }
}

/** Thrown inside the writer; each enclosing level adds its key as it propagates (no path kept on the happy path). */
class NotJson extends Error {
  readonly path: Array<string | number> = [];
  constructor(readonly what: string) {
    super(what);
  }
}

/** `$.a[0].b` for error messages; built only when something is wrong. */
function pathOf(stack: ReadonlyArray<string | number>): string {
  return '$' + stack.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');
}

function at(error: unknown, key: string | number): unknown {
  if (error instanceof NotJson) error.path.push(key);
  return error;
}

/** Writes `value` canonically; with `copy`, leaves its frozen JSON copy in `lastCopy`. `seen` null = fast mode (depth-bounded). */
function write(value: unknown, copy: boolean, depth: number, seen: Set<object> | null): string {
  if (value === null) {
    if (copy) lastCopy = null;
    return 'null';
  }
  switch (typeof value) {
    case 'boolean':
      if (copy) lastCopy = value;
      return value ? 'true' : 'false';
    case 'string':
      if (copy) lastCopy = value;
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(`${String(value)} is not a JSON number`);
      // ECMAScript Number::toString is the JCS number form; -0 serializes (and so parses back) as 0.
      if (value === 0) {
        if (copy) lastCopy = 0;
        return '0';
      }
      if (copy) lastCopy = value;
      return String(value);
    case 'object': {
      if (seen === null) {
        if (depth > FAST_DEPTH) throw new TooDeepForFast();
      } else {
        if (seen.has(value)) throw new NotJson('circular reference');
        seen.add(value);
      }
      let out: string;
      let made: unknown;
      if (Array.isArray(value)) {
        const n = value.length;
        const arr: unknown[] | null = copy ? new Array<unknown>(n) : null;
        out = '[';
        for (let i = 0; i < n; i++) {
          if (i) out += ',';
          const v: unknown = value[i];
          if (v === undefined) {
            out += 'null';
            if (arr) arr[i] = null;
          } else {
            try {
              out += write(v, copy, depth + 1, seen);
            } catch (error) {
              throw at(error, i);
            }
            if (arr) arr[i] = lastCopy;
          }
        }
        out += ']';
        made = arr;
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          throw new NotJson(`only plain objects are JSON (got ${(proto as { constructor?: { name?: string } })?.constructor?.name ?? 'object'})`);
        }
        const obj = value as Record<string, unknown>;
        const keys = Object.keys(obj);
        if (keys.length > 1) keys.sort(); // default sort compares UTF-16 code units, as RFC 8785 requires
        const target: Record<string, unknown> | null = copy ? {} : null;
        out = '{';
        let first = true;
        for (const k of keys) {
          const v = obj[k];
          if (v === undefined) continue;
          if (!first) out += ',';
          first = false;
          try {
            out += JSON.stringify(k) + ':' + write(v, copy, depth + 1, seen);
          } catch (error) {
            throw at(error, k);
          }
          if (target) {
            // An own "__proto__" member (JSON.parse makes one) must stay data: assigning it would set the prototype.
            if (k === '__proto__') Object.defineProperty(target, k, { value: lastCopy, enumerable: true, writable: true, configurable: true });
            else target[k] = lastCopy;
          }
        }
        out += '}';
        made = target;
      }
      if (seen !== null) seen.delete(value);
      if (copy) lastCopy = Object.freeze(made);
      return out;
    }
    default:
      throw new NotJson(`a ${typeof value} is not JSON`);
  }
}

/**
 * Deep-copies a JSON value and freezes every level of the copy.
 *
 * Why: the gate stores exactly what will be sent; nobody (caller, model loop, renderer) may
 * change it after the request, and a copy means later edits to the caller's object change nothing.
 */
export function deepFreezeCopy<T>(value: T): T {
  return canonicalCopy(value).copy;
}

/** Freezes every level of a value in place (for values the caller just created and owns). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Nesting depth past which `plainCopy` hands the value to structuredClone (cycles, pathological depth). */
const MAX_PLAIN_DEPTH = 256;

class TooDeep extends Error {}

/**
 * Deep-copies plain data (primitives, arrays, plain objects), freezing every level of the copy
 * when `freeze` is true. Anything else (Date, Map, typed arrays, …) is copied by structuredClone,
 * and a value nested deeper than 256 levels (a cycle, say) is handed whole to structuredClone, so
 * the result always equals `structuredClone(value)` for what structuredClone accepts and throws
 * what it throws.
 *
 * Why: the gate and the in-memory journal copy small JSON payloads on every tool call;
 * structuredClone serializes through V8's wire format and costs several µs per payload, this a
 * fraction of one.
 */
export function plainCopy<T>(value: T, freeze: boolean): T {
  try {
    return copyLevel(value, freeze, 0) as T;
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    const cloned = structuredClone(value);
    return freeze ? freezeGraph(cloned) : cloned;
  }
}

function copyLevel(value: unknown, freeze: boolean, depth: number): unknown {
  if (value === null || typeof value !== 'object') {
    // Functions and symbols: let structuredClone throw its DataCloneError.
    return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
  }
  if (depth > MAX_PLAIN_DEPTH) throw new TooDeep();
  let out: unknown;
  if (Array.isArray(value)) {
    const n = value.length;
    const arr: unknown[] = new Array<unknown>(n);
    for (let i = 0; i < n; i++) arr[i] = copyLevel(value[i], freeze, depth + 1);
    out = arr;
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const cloned: unknown = structuredClone(value);
      return freeze ? freezeGraph(cloned) : cloned;
    }
    const obj: Record<string, unknown> = {};
    for (const k in value) {
      if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
      const v = copyLevel((value as Record<string, unknown>)[k], freeze, depth + 1);
      // An own "__proto__" key (JSON.parse makes one) must stay data: assigning it would set the prototype.
      if (k === '__proto__') Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
      else obj[k] = v;
    }
    out = obj;
  }
  return freeze ? Object.freeze(out) : out;
}

/** Freezes every object reachable from `value` (safe on cycles: each object is frozen before its children). */
function freezeGraph<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) freezeGraph(v);
  }
  return value;
}

class NotPlainJson extends Error {}

/**
 * Deep-copies a value the way `JSON.parse(JSON.stringify(value))` does (undefined members dropped,
 * non-finite numbers as null, -0 as 0), optionally freezing every level of the copy. Plain data is
 * copied directly; anything else (toJSON, class instances, functions, cycles, …) takes the JSON
 * round trip itself, so the result and any error are always those of the round trip.
 *
 * Why: tool results and snapshots are copied on every call; the round trip builds and re-parses a
 * string for what is usually a handful of small objects.
 */
export function jsonCopy<T>(value: T, freeze: boolean): T {
  try {
    return jsonLevel(value, freeze, 0) as T;
  } catch (error) {
    if (!(error instanceof NotPlainJson)) throw error;
    const copied = JSON.parse(JSON.stringify(value)) as T;
    return freeze ? deepFreeze(copied) : copied;
  }
}

function jsonLevel(value: unknown, freeze: boolean, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case 'object':
      break;
    default:
      throw new NotPlainJson(); // undefined/function/symbol at this position, bigint: the round trip decides
  }
  if (value === null) return null;
  if (depth > MAX_PLAIN_DEPTH) throw new NotPlainJson();
  let out: unknown;
  if (Array.isArray(value)) {
    const n = value.length;
    const arr: unknown[] = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      const v: unknown = value[i];
      arr[i] = v === undefined ? null : jsonLevel(v, freeze, depth + 1);
    }
    out = arr;
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new NotPlainJson();
    const obj: Record<string, unknown> = {};
    for (const k in value) {
      if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
      const raw = (value as Record<string, unknown>)[k];
      if (raw === undefined) continue;
      if (k === 'toJSON') throw new NotPlainJson();
      const v = jsonLevel(raw, freeze, depth + 1);
      if (k === '__proto__') Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
      else obj[k] = v;
    }
    out = obj;
  }
  return freeze ? Object.freeze(out) : out;
}
