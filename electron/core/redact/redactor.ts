/**
 * The redactor: knows every secret value Warden currently holds (keychain values, OAuth tokens,
 * API keys, secret env values) and scrubs them out of anything before it leaves for a sink.
 *
 * Whoever reads a secret from the keychain registers it here, and every sink passes what it
 * writes or sends through this one object: the ledger (every payload before hashing and
 * writing), every file the core's stores write (storage/json-file-folder.ts), everything sent to
 * the window (app-core.ts), and every request to and reply from a model provider
 * (models/redacting-provider.ts). So a secret echoed by a server, pasted by a model into text or
 * arguments, or carried in an error message is replaced by a marker.
 *
 * Scrubbing is deep (values, substrings inside strings, object keys) and knows the forms a secret
 * takes when it travels: URL-encoded, hex, base64 and base64url (also inside a longer encoded
 * value), cut across adjacent items of one array, and cut across the pieces of a stream. It does
 * not know secrets it was never told, nor forms it cannot see (a secret encrypted, compressed,
 * reversed or spelled out with other text between its pieces).
 */

/** What a scrubbed secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Escapes a literal for use inside a RegExp alternation. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The forms a secret commonly takes once it has travelled: as is, URL-encoded, hex (either case),
 * base64 and base64url — also where the secret sits inside a longer encoded value.
 *
 * Why the offsets: base64 writes three bytes as four characters, so a secret that follows one or
 * two other bytes is written with different characters than the secret alone. For those two
 * alignments the characters that depend only on the secret's own bytes are a form of their own
 * (the one or two bytes at each edge that share a group with their neighbours stay).
 */
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
  // Encoded forms only for values long enough that a false positive on a short string is impossible.
  if (secret.length >= 8) {
    const bytes = Buffer.from(secret, 'utf8');
    const hex = bytes.toString('hex');
    out.add(hex);
    out.add(hex.toUpperCase());
    const b64 = bytes.toString('base64');
    out.add(b64);
    out.add(b64.replace(/=+$/, ''));
    out.add(bytes.toString('base64url'));
    for (const lead of [1, 2]) {
      // After `lead` other bytes: skip the first group (it holds them), keep only whole groups of the secret.
      const whole = Math.floor((bytes.length - (3 - lead)) / 3);
      if (whole < 2) continue;
      const shifted = Buffer.concat([Buffer.alloc(lead), bytes]).toString('base64').slice(4, 4 + whole * 4);
      out.add(shifted);
      out.add(shifted.replace(/\+/g, '-').replace(/\//g, '_'));
    }
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
  /** The length of the longest form of any secret (how much of a stream may still be one). */
  private longest = 0;

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
      if (!pattern.test(json) && !this.splitAcrossItems(value, 0)) return value;
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
      if (!this.jsonSafe || pattern.test(json) || this.splitAcrossItems(value, 0)) {
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
    if (Array.isArray(value)) {
      const items = value.map((v) => {
        const s = this.scrubValue(v, depth + 1);
        return s === undefined ? null : s;
      });
      return this.scrubAcrossItems(items);
    }
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

  /**
   * A scrubber for text that arrives in pieces (a model's reply, delta by delta): `push` returns
   * what can be passed on now, `end` the rest once the text is complete.
   *
   * Why it holds text back: a secret cut across two deltas is in neither, so each piece alone
   * would pass. Text that could still be the start of a secret (up to the longest form's length
   * minus one) waits for the next piece; with no secret registered nothing waits.
   */
  scrubStream(): { push(text: string): string; end(): string } {
    let held = '';
    return {
      push: (text) => {
        held += text;
        const pattern = this.compiled();
        if (!pattern) {
          const out = held;
          held = '';
          return out;
        }
        let cut = Math.max(0, held.length - (this.longest - 1));
        // A secret that starts before the cut and reaches past it waits whole.
        pattern.lastIndex = 0;
        for (const m of held.matchAll(pattern)) {
          if (m.index < cut && m.index + m[0].length > cut) cut = m.index;
        }
        const out = this.scrubString(held.slice(0, cut));
        held = held.slice(cut);
        return out;
      },
      end: () => {
        const out = this.scrubString(held);
        held = '';
        return out;
      },
    };
  }

  /**
   * Secrets cut across adjacent items of one array (strings, or content items with a `text`):
   * a server that returns a token as two text items, each half harmless alone. Every part of each
   * item that belongs to such a secret is replaced by the marker.
   */
  private scrubAcrossItems(items: unknown[]): unknown[] {
    const pattern = this.compiled();
    if (!pattern || items.length < 2) return items;
    for (const run of textRuns(items)) {
      const texts = run.map((i) => textOf(items[i])!);
      const joined = texts.join('');
      // Ranges of `joined` that belong to a secret reaching over an item's edge.
      const hidden: Array<[number, number]> = [];
      const edges: number[] = [];
      let at = 0;
      for (const t of texts) edges.push((at += t.length));
      pattern.lastIndex = 0;
      for (const m of joined.matchAll(pattern)) {
        const end = m.index + m[0].length;
        if (edges.some((e) => e > m.index && e < end)) hidden.push([m.index, end]);
      }
      if (hidden.length === 0) continue;
      let start = 0;
      run.forEach((index, k) => {
        const text = texts[k]!;
        const from = start;
        start += text.length;
        let out = '';
        let pos = 0;
        for (const [a, b] of hidden) {
          const lo = Math.max(a - from, 0);
          const hi = Math.min(b - from, text.length);
          if (hi <= lo || lo < pos) continue;
          out += text.slice(pos, lo) + REDACTED;
          pos = hi;
        }
        if (pos === 0 && out === '') return;
        out += text.slice(pos);
        const item = items[index];
        items[index] = typeof item === 'string' ? out : { ...(item as Record<string, unknown>), text: out };
      });
    }
    return items;
  }

  /** True when some array inside `value` holds a secret cut across adjacent items (see scrubAcrossItems). */
  private splitAcrossItems(value: unknown, depth: number): boolean {
    if (typeof value !== 'object' || value === null || depth > 200) return false;
    if (Array.isArray(value)) {
      const pattern = this.compiled();
      if (pattern && value.length >= 2) {
        for (const run of textRuns(value)) if (this.secretAtAnEdge(run.map((i) => textOf(value[i])!), pattern)) return true;
      }
      return value.some((v) => this.splitAcrossItems(v, depth + 1));
    }
    return Object.values(value).some((v) => this.splitAcrossItems(v, depth + 1));
  }

  /**
   * True when a secret reaches over an edge between two of `texts`. Only the text around each
   * edge is searched (a secret crossing it lies within the longest form's length of it), so the
   * ledger's clean path does not search every result twice.
   */
  private secretAtAnEdge(texts: readonly string[], pattern: RegExp): boolean {
    const reach = this.longest - 1;
    let before = '';
    for (let k = 0; k < texts.length - 1; k++) {
      before = (before + texts[k]!).slice(-reach);
      let after = '';
      for (let j = k + 1; j < texts.length && after.length < reach; j++) after += texts[j]!;
      pattern.lastIndex = 0;
      if (pattern.test(before + after.slice(0, reach))) return true;
    }
    return false;
  }

  private compiled(): RegExp | null {
    if (this.secrets.size === 0) return null;
    if (!this.pattern) {
      const all = new Set<string>();
      for (const s of this.secrets.keys()) for (const v of variantsOf(s)) all.add(v);
      // Longest first, so a secret that contains another is replaced whole.
      const alternation = [...all].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
      this.pattern = new RegExp(alternation, 'g');
      this.longest = Math.max(...[...all].map((v) => v.length));
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

/** The text of an array item that can carry part of a reply: a string, or an object's string `text`. */
function textOf(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
    const text = (item as { text?: unknown }).text;
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/** Indexes of the runs of two or more adjacent items that carry text. */
function textRuns(items: readonly unknown[]): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  items.forEach((item, i) => {
    if (textOf(item) !== undefined) run.push(i);
    else {
      if (run.length >= 2) runs.push(run);
      run = [];
    }
  });
  if (run.length >= 2) runs.push(run);
  return runs;
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
