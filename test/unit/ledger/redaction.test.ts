import { join } from 'node:path';
import { writeFileSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, segmentName } from '../../../electron/core/ledger/ledger';
import { REDACTED, Redactor } from '../../../electron/core/redact/redactor';
import { allFiles, tempDir, recordsOf } from './helpers';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

const API_KEY = 'sk-ant-api03-Zx9QmT4vLr8Kp2Wn6Hs1Yd5Fb3Gc7Jt0';
const BEARER = 'ghp_R4nd0mB34r3rT0k3nV4lu3xyz123456';
const REFRESH = '1//0gRefreshTokenq8Zk_Wl3-Pn9Vb2Xc7';
const ENV_SECRET = 'hunter2-db-password!@#';
const SECRETS = [API_KEY, BEARER, REFRESH, ENV_SECRET];

/** Every form a secret could take in a file: raw, JSON-escaped, URL-encoded, base64. */
function forms(secret: string): Buffer[] {
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64').replace(/=+$/, ''),
    Buffer.from(secret).toString('base64url'),
  ].map((s) => Buffer.from(s, 'utf8'));
}

describe('redactor', () => {
  it('scrubs secrets deeply: values, substrings inside strings, keys, arrays, encoded forms', () => {
    const r = new Redactor();
    r.register(API_KEY);
    r.register(BEARER);
    const out = r.scrub({
      headers: { Authorization: `Bearer ${BEARER}` },
      list: [API_KEY, { nested: [`x${API_KEY}y`] }],
      [API_KEY]: 'key-as-key',
      url: `https://x.example/?key=${encodeURIComponent(API_KEY)}`,
      basic: Buffer.from(BEARER).toString('base64'),
      n: 42,
      nothing: null,
      dropped: undefined,
    });
    const text = JSON.stringify(out);
    for (const s of [API_KEY, BEARER]) for (const f of forms(s)) expect(text).not.toContain(f.toString());
    expect(out.headers.Authorization).toBe(`Bearer ${REDACTED}`);
    expect(out.list[1]).toEqual({ nested: [`x${REDACTED}y`] });
    expect(Object.keys(out)).toContain(REDACTED);
    expect(out.n).toBe(42);
    expect('dropped' in out).toBe(false);
  });

  it('scrubToJson finds secrets in deep-frozen payloads too, in values, substrings, keys and encoded forms', () => {
    const r = new Redactor();
    r.register(API_KEY);
    r.register(BEARER);
    const frozen = (o: object): object => {
      for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) frozen(v);
      return Object.freeze(o);
    };
    const payload = frozen({ list: [{ nested: [`x${API_KEY}y`] }], [BEARER]: 'key', b64: Buffer.from(API_KEY).toString('base64') }) as Record<string, unknown>;
    const { value, json } = r.scrubToJson(payload);
    for (const s of [API_KEY, BEARER]) for (const f of forms(s)) expect(json).not.toContain(f.toString());
    expect(value).not.toBe(payload);
    expect(JSON.stringify(value)).toBe(json);
    expect(Object.isFrozen(value)).toBe(true);
    // A clean frozen payload is returned as is.
    const clean = frozen({ a: ['nothing secret'] }) as Record<string, unknown>;
    expect(r.scrubToJson(clean)).toEqual({ value: clean, json: '{"a":["nothing secret"]}' });
    expect(r.scrubToJson(clean).value).toBe(clean);
  });

  it('secrets that JSON escapes (quotes, backslashes, control characters) are still scrubbed from frozen payloads', () => {
    const r = new Redactor();
    const tricky = ['pa"ss\\word-123', 'tab\there-secret', 'line\nbreak-secret'];
    for (const t of tricky) r.register(t);
    for (const t of tricky) {
      const payload = Object.freeze({ value: `before ${t} after`, [t]: 1 }) as Record<string, unknown>;
      const { value, json } = r.scrubToJson(payload);
      expect(JSON.parse(json)).toEqual({ value: `before ${REDACTED} after`, [REDACTED]: 1 });
      expect(value).toEqual(JSON.parse(json));
      expect(json).not.toContain(JSON.stringify(t).slice(1, -1));
    }
  });

  it('scrubIfPresent passes a clean payload through as it is and scrubs one that holds a secret, even one JSON escapes', () => {
    const r = new Redactor();
    const clean = { a: ['text', { b: 1 }] };
    expect(r.scrubIfPresent(clean)).toBe(clean);
    r.register(API_KEY);
    expect(r.scrubIfPresent(clean)).toBe(clean);
    expect(r.scrubIfPresent({ result: [`key ${API_KEY}`], [API_KEY]: true })).toEqual({ result: [`key ${REDACTED}`], [REDACTED]: true });
    r.register('pa"ss\\word');
    expect(r.scrubIfPresent({ env: 'x=pa"ss\\word' })).toEqual({ env: `x=${REDACTED}` });
  });

  it('a secret stays scrubbed until every holder forgot it, and then text is left alone', () => {
    const r = new Redactor();
    r.register(REFRESH);
    r.register(REFRESH);
    r.forget(REFRESH);
    expect(r.scrubString(`t=${REFRESH}`)).toBe(`t=${REDACTED}`);
    r.forget(REFRESH);
    expect(r.scrubString(`t=${REFRESH}`)).toBe(`t=${REFRESH}`);
    expect(r.size()).toBe(0);
  });

  it('a secret containing another secret is replaced whole (longest first)', () => {
    const r = new Redactor();
    r.register('abcdef');
    r.register('abcdefghijkl');
    expect(r.scrubString('[abcdefghijkl]')).toBe(`[${REDACTED}]`);
  });

  it('regex metacharacters in a secret are matched literally', () => {
    const r = new Redactor();
    r.register('a.b*c+(d)');
    expect(r.scrubString('aXbbbc+(d) a.b*c+(d)')).toBe(`aXbbbc+(d) ${REDACTED}`);
  });
});

describe('redactor: secrets in other clothes', () => {
  const r = new Redactor();
  r.register(BEARER);
  const bytes = Buffer.from(BEARER, 'utf8');

  it('a secret written in hex, either case, is scrubbed from strings and from every fast path', () => {
    for (const hex of [bytes.toString('hex'), bytes.toString('hex').toUpperCase()]) {
      const payload = { result: { content: [{ type: 'text', text: `token=${hex};` }] } };
      expect(JSON.stringify(r.scrub(payload))).not.toContain(hex);
      expect(JSON.stringify(r.scrubIfPresent(payload))).not.toContain(hex);
      expect(r.scrubToJson(payload).json).not.toContain(hex);
      expect(r.scrubString(`x${hex}y`)).toBe(`x${REDACTED}y`);
    }
  });

  it('a secret base64-encoded after one or two other bytes is scrubbed down to the bytes it shares a group with', () => {
    for (const lead of ['a', 'ab', 'abc:']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${lead}${BEARER}!`, 'utf8').toString(encoding);
        const scrubbed = r.scrubString(encoded);
        expect(scrubbed, `${encoding} after ${lead.length} bytes`).toContain(REDACTED);
        // What is left decodes to at most two bytes of the secret at either edge.
        const left = scrubbed.split(REDACTED).join('');
        expect(left.length).toBeLessThanOrEqual(16);
      }
    }
  });

  it('a secret split across adjacent content items or strings is scrubbed in every item, on every path', () => {
    for (const cut of [1, 9, BEARER.length - 1]) {
      const payload = { content: [{ type: 'text', text: `before ${BEARER.slice(0, cut)}` }, { type: 'text', text: `${BEARER.slice(cut)} after` }], parts: ['x', BEARER.slice(0, cut), BEARER.slice(cut)] };
      for (const out of [JSON.stringify(r.scrub(payload)), JSON.stringify(r.scrubIfPresent(payload)), r.scrubToJson(payload).json]) {
        expect(out).toContain(`before ${REDACTED}`);
        expect(out).toContain(`${REDACTED} after`);
        expect(out).not.toContain(BEARER.slice(0, Math.max(cut, 5)));
        expect(out).not.toContain(BEARER.slice(Math.min(cut, BEARER.length - 5)));
      }
    }
    // Three items, the middle one wholly inside the secret.
    const three = r.scrub(['<', BEARER.slice(0, 5), BEARER.slice(5, 20), BEARER.slice(20), '>']);
    expect(three).toEqual(['<', REDACTED, REDACTED, REDACTED, '>']);
    // Items that only look adjacent by accident are left alone.
    expect(r.scrub(['ghp_', 'hello'])).toEqual(['ghp_', 'hello']);
  });

  it('a stream scrubber never passes on a piece of a secret cut across deltas, and gives back everything else', () => {
    for (const size of [1, 3, 7, 50]) {
      const text = `Your key is ${BEARER} and again ${BEARER}. Bye.`;
      const stream = r.scrubStream();
      const out: string[] = [];
      for (let i = 0; i < text.length; i += size) out.push(stream.push(text.slice(i, i + size)));
      out.push(stream.end());
      expect(out.join('')).toBe(`Your key is ${REDACTED} and again ${REDACTED}. Bye.`);
      for (const piece of out) expect(piece).not.toMatch(/ghp_R4n|0k3nV4/);
    }
    // Without secrets nothing waits.
    const plain = new Redactor().scrubStream();
    expect(plain.push('abc')).toBe('abc');
  });
});

describe('redactor with a malformed secret', () => {
  it('a secret with a lone surrogate (no URL encoding exists) is still scrubbed and does not stop the ledger', async () => {
    // Found by review: encodeURIComponent threw for it, so every append was rejected while it was known.
    const secret = 'tok-\ud800-abcdef';
    const redactor = new Redactor();
    redactor.register(secret);
    expect(redactor.scrubString(`Bearer ${secret}`)).toBe(`Bearer ${REDACTED}`);
    const t = tempDir();
    cleanups.push(t.cleanup);
    const d = t.dir;
    const ledger = await Ledger.open({ dir: d, redactor });
    try {
      await ledger.append([{ type: 'op.transition', payload: { operationId: 'op-1', note: `got ${secret}` } }], { durable: true });
      expect((await recordsOf(ledger)).at(-1)!.payload.note).toBe(`got ${REDACTED}`);
    } finally {
      await ledger.close();
    }
    for (const f of allFiles(d)) expect(f.bytes.toString('utf8')).not.toContain('abcdef');
  });
});

describe('ledger redaction', () => {
  it('planted secrets never appear in any byte of any file under the data folder after a workload', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const redactor = new Redactor();
    for (const s of SECRETS) redactor.register(s);
    const ledger = await Ledger.open({ dir: t.dir, redactor, rotateBytes: 4_000 });
    try {
      for (let i = 0; i < 60; i++) {
        await ledger.append(
          [
            {
              type: 'op.proposed',
              payload: {
                operationId: `op-${i}`,
                arguments: { query: `use ${API_KEY} please`, env: { DB_PASSWORD: ENV_SECRET }, [REFRESH]: true },
                headers: { authorization: `Bearer ${BEARER}` },
              },
            },
            { type: 'op.transition', payload: { operationId: `op-${i}`, to: 'failed', error: { code: 'x', message: `token ${REFRESH} rejected` } } },
          ],
          { durable: i % 2 === 0 },
        );
      }
      await ledger.flush();
      expect(ledger.stats.rotations).toBeGreaterThan(0);
    } finally {
      await ledger.close();
    }
    // Also the safe-mode copy path: tamper, reopen, so a preserved copy exists too.
    const seg = join(t.dir, segmentName(ledgerLast(t.dir)));
    const bytes = readFileSync(seg);
    bytes[60] = bytes[60]! ^ 1;
    writeFileSync(seg, bytes);
    const again = await Ledger.open({ dir: t.dir, redactor });
    await again.close();

    const files = allFiles(t.dir);
    expect(files.length).toBeGreaterThan(2);
    for (const { path, bytes: content } of files) {
      for (const s of SECRETS) for (const f of forms(s)) expect(content.includes(f), `${s} found in ${path}`).toBe(false);
    }
    // The records are still there, with the secrets replaced.
    expect(files.some((f) => f.bytes.includes(Buffer.from(REDACTED)))).toBe(true);
  });
});

function ledgerLast(dir: string): number {
  const nums = allFiles(dir)
    .map((f) => /ledger\.(\d+)\.log$/.exec(f.path))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));
  return Math.max(...nums);
}
