/**
 * The redactor: knows every secret value Warden currently holds (keychain values, OAuth tokens,
 * API keys, secret env values) and scrubs them out of anything before it is written to disk.
 *
 * Secrets never enter the ledger. Whoever reads a secret from the keychain
 * registers it here; the ledger runs every payload through `scrub` before hashing and writing,
 * so a secret echoed by a server, pasted by a model into arguments, or carried in an error
 * message is replaced by a marker. Scrubbing is deep: values, substrings inside strings, and
 * object keys.
 */

/** What a scrubbed secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Escapes a literal for use inside a RegExp alternation. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The forms a secret commonly takes once it has travelled: as is, URL-encoded, base64. */
function variantsOf(secret: string): string[] {
  const out = new Set<string>([secret]);
  // A lone surrogate (a malformed token a server may hand out) has no URL encoding: encodeURIComponent
  // throws for it. The secret itself is still scrubbed; only that one form is skipped.
  let uri: string | null = null;
  try {
    uri = encodeURIComponent(secret);
  } catch {
    uri = null;
  }
  if (uri !== null && uri !== secret) out.add(uri);
  // base64 only for values long enough that a false positive on a short string is impossible.
  if (secret.length >= 8) {
    const b64 = Buffer.from(secret, 'utf8').toString('base64');
    out.add(b64);
    out.add(b64.replace(/=+$/, ''));
    out.add(Buffer.from(secret, 'utf8').toString('base64url'));
  }
  return [...out].filter((v) => v.length > 0);
}

/** A set of secret values, reference-counted, and a deep scrubber for payloads. */
export class Redactor {
  private readonly secrets = new Map<string, number>();
  private pattern: RegExp | null = null;
  /**
   * True when every form of every secret is written by JSON.stringify exactly as it is (no
   * quote, backslash, control character or lone surrogate to escape). Then a secret inside any
   * string or key of a payload also appears verbatim in the payload's JSON text, so one search
   * of that text proves a payload clean.
   */
  private jsonSafe = true;

  /**
   * Registers a secret value that must never be written anywhere.
   *
   * Reference-counted: two accounts holding the same token each register it, and it stays
   * scrubbed until both have forgotten it. Empty values are ignored (nothing to hide).
   */
  register(value: string): void {
    if (typeof value !== 'string' || value.length === 0) return;
    this.secrets.set(value, (this.secrets.get(value) ?? 0) + 1);
    this.pattern = null;
  }

  /** Forgets one registration of a value (after the secret was deleted from the keychain). */
  forget(value: string): void {
    const count = this.secrets.get(value);
    if (count === undefined) return;
    if (count <= 1) this.secrets.delete(value);
    else this.secrets.set(value, count - 1);
    this.pattern = null;
  }

  /** How many distinct secret values are currently known. */
  size(): number {
    return this.secrets.size;
  }

  /** Replaces every known secret (and its URL-encoded/base64 forms) inside one string. */
  scrubString(text: string): string {
    const pattern = this.compiled();
    if (!pattern) return text;
    pattern.lastIndex = 0;
    return text.replace(pattern, REDACTED);
  }

  /**
   * Returns a deep copy of `value` with every secret replaced, in strings and in object keys.
   *
   * Non-JSON values (functions, symbols, undefined) are dropped the way JSON would drop them, so
   * what is scrubbed is exactly what would be written.
   */
  scrub<T>(value: T): T {
    if (!this.compiled()) return structuredCloneJson(value);
    return this.scrubValue(value, 0) as T;
  }

  /**
   * `value` itself when no secret appears anywhere in it, otherwise a scrubbed deep copy (as
   * `scrub`). For what leaves the core for the renderer: most payloads hold no secret, and they
   * then pass unchanged at the cost of one JSON.stringify and one search of its text.
   */
  scrubIfPresent<T>(value: T): T {
    const pattern = this.compiled();
    if (!pattern) return value;
    if (this.jsonSafe) {
      const json = JSON.stringify(value) as string | undefined;
      if (json === undefined) return value;
      pattern.lastIndex = 0;
      if (!pattern.test(json)) return value;
    }
    return this.scrubValue(value, 0) as T;
  }

  /**
   * Scrubs `value` and returns the JSON text that would be written along with a deep-frozen,
   * JSON-shaped value equal to that text.
   *
   * Why: the ledger needs both (it hashes and writes the text, keeps the value), and this is on
   * the path of every tool call, so it does as little as it honestly can: one JSON.stringify; a
   * search of that text for secrets (when the secrets allow it, see `jsonSafe`) instead of a deep
   * scrub; and when `value` is already deep-frozen plain JSON data (the gate freezes what it
   * journals) it is returned as is instead of being parsed back into a copy, since nobody can
   * change it. Otherwise the value is a frozen copy. `json` is exactly `JSON.stringify(value)`
   * of the returned `value`. Throws on what JSON cannot write (cycles, BigInt).
   */
  scrubToJson(value: Record<string, unknown>): { value: Record<string, unknown>; json: string } {
    const json = JSON.stringify(value) as string | undefined;
    if (json === undefined) throw new Error('the payload serializes to nothing');
    const pattern = this.compiled();
    if (pattern) {
      pattern.lastIndex = 0;
      if (!this.jsonSafe || pattern.test(json)) {
        const scrubbed = deepFreeze(this.scrubValue(value, 0)) as Record<string, unknown>;
        return { value: scrubbed, json: JSON.stringify(scrubbed) };
      }
    }
    if (isFrozenJsonData(value, 0)) return { value, json };
    return { value: deepFreeze(JSON.parse(json)) as Record<string, unknown>, json };
  }

  private scrubValue(value: unknown, depth: number): unknown {
    if (depth > 200) throw new Error('redactor: payload nested deeper than 200 levels');
    if (typeof value === 'string') return this.scrubString(value);
    if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
    if (typeof value === 'bigint') return this.scrubString(value.toString());
    if (Array.isArray(value)) return value.map((v) => {
      const s = this.scrubValue(v, depth + 1);
      return s === undefined ? null : s;
    });
    if (typeof value === 'object') {
      const maybeJson = value as { toJSON?: () => unknown };
      if (typeof maybeJson.toJSON === 'function') return this.scrubValue(maybeJson.toJSON(), depth + 1);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const s = this.scrubValue(v, depth + 1);
        if (s !== undefined) out[this.scrubString(k)] = s;
      }
      return out;
    }
    return undefined;
  }

  private compiled(): RegExp | null {
    if (this.secrets.size === 0) return null;
    if (!this.pattern) {
      const all = new Set<string>();
      for (const s of this.secrets.keys()) for (const v of variantsOf(s)) all.add(v);
      // Longest first, so a secret that contains another is replaced whole.
      const alternation = [...all].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
      this.pattern = new RegExp(alternation, 'g');
      this.jsonSafe = [...all].every((v) => JSON.stringify(v) === `"${v}"`);
    }
    return this.pattern;
  }
}

/**
 * True when `value` is deep-frozen data that JSON writes and reads back unchanged: plain objects
 * and arrays (frozen, own data properties only, no holes), strings, booleans, null and finite
 * numbers other than -0.
 *
 * Why: such a value can be kept as the stored copy of what was written: nothing can change it
 * later (no getter can answer differently, no one can assign to it), and parsing the JSON back
 * would give an equal value. Anything else (undefined, functions, toJSON, Dates, class instances,
 * accessors, deeper than 200 levels) returns false, and the caller makes a copy instead.
 */
export function isFrozenJsonData(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (depth > 200 || !Object.isFrozen(value)) return false;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) if (!isFrozenJsonData(value[i], depth + 1)) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key of Object.keys(value)) {
        const d = Object.getOwnPropertyDescriptor(value, key)!;
        if (d.get !== undefined || d.set !== undefined || !isFrozenJsonData(d.value, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Freezes a JSON-shaped value and everything inside it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A JSON-shaped deep copy (what would be written), for the no-secrets fast path. */
function structuredCloneJson<T>(value: T): T {
  const text = JSON.stringify(value);
  return (text === undefined ? undefined : JSON.parse(text)) as T;
}
