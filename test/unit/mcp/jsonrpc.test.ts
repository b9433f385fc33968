import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseJsonRpcLine, plainResultResponse } from '../../../electron/core/mcp/jsonrpc';

/** Values shaped like JSON-RPC messages, with every field sometimes wrong, missing or extra. */
const jsonValue = fc.jsonValue({ maxDepth: 2 });
const id = fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.double(), fc.constant(null), fc.constant(-0), fc.constant(2 ** 53), fc.boolean());
const result = fc.oneof(
  fc.dictionary(fc.constantFrom('content', 'isError', 'structuredContent', '_meta', 'x', '__proto__'), jsonValue, { maxKeys: 3 }),
  fc.constant({ content: [{ type: 'text', text: 'Echo: x' }] }),
  fc.array(jsonValue, { maxLength: 2 }),
  fc.constant(null),
  fc.string(),
);
const anyShape = fc.record(
  {
    jsonrpc: fc.constantFrom('2.0', '1.0', 2),
    id,
    result,
    error: fc.record({ code: fc.integer(), message: fc.string() }),
    method: fc.constantFrom('tools/call', 'notifications/progress'),
    params: fc.dictionary(fc.string({ maxLength: 3 }), jsonValue, { maxKeys: 2 }),
    extra: jsonValue,
  },
  { requiredKeys: [] },
);
/** Mostly response-shaped, so the fast path is exercised at its edges. */
const responseShape = fc.record(
  { jsonrpc: fc.constantFrom('2.0', '2.0', '1.0'), id, result, extra: jsonValue },
  { requiredKeys: ['jsonrpc', 'id', 'result'] },
);
/** Valid plain responses (what the fast path is for), with ordinary ids and results. */
const plainResponse = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 4 })),
  result: fc.dictionary(fc.constantFrom('content', 'isError', 'structuredContent', 'x'), jsonValue, { maxKeys: 3 }),
});
const message = fc.oneof(anyShape, responseShape, { arbitrary: plainResponse, weight: 2 });

describe('JSON-RPC fast path', () => {
  it('accepts exactly what the SDK schema accepts, and returns what it would (checked on generated messages through a JSON round trip)', () => {
    let fastHits = 0;
    fc.assert(
      fc.property(message, (m) => {
        const line = JSON.stringify(m);
        const value: unknown = JSON.parse(line);
        const fast = plainResultResponse(value);
        const schema = JSONRPCMessageSchema.safeParse(JSON.parse(line));
        let viaLine: unknown;
        try {
          viaLine = parseJsonRpcLine(line);
        } catch {
          viaLine = undefined;
        }
        if (fast !== undefined) {
          fastHits += 1;
          // Never accepts what the schema refuses, and yields the same message.
          expect(schema.success).toBe(true);
          expect(fast).toEqual(schema.data);
        }
        // The line parser as a whole agrees with the schema, fast path or not.
        expect(viaLine !== undefined).toBe(schema.success);
        if (schema.success) expect(viaLine).toEqual(schema.data);
      }),
      { numRuns: 3000 },
    );
    // The generator must actually exercise the fast path, or this proves nothing about it.
    expect(fastHits).toBeGreaterThan(500);
  });

  it('takes the fast path for a plain tool result and leaves errors, notifications, requests and _meta to the schema', () => {
    const ok = JSON.parse('{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Echo: x"}]}}');
    expect(plainResultResponse(ok)).toBe(ok);
    expect(plainResultResponse({ jsonrpc: '2.0', id: 'a', result: {} })).toBeDefined();
    expect(plainResultResponse({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } })).toBeUndefined();
    expect(plainResultResponse({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })).toBeUndefined();
    expect(plainResultResponse({ jsonrpc: '2.0', id: 1, method: 'ping' })).toBeUndefined();
    expect(plainResultResponse({ jsonrpc: '2.0', id: 1, result: { _meta: { progressToken: 1 } } })).toBeUndefined();
    // Strict like the schema: an extra key, a fractional or unsafe id, an array result are refused.
    expect(plainResultResponse({ jsonrpc: '2.0', id: 1, result: {}, extra: 1 })).toBeUndefined();
    expect(plainResultResponse({ jsonrpc: '2.0', id: 1.5, result: {} })).toBeUndefined();
    expect(plainResultResponse({ jsonrpc: '2.0', id: 2 ** 53, result: {} })).toBeUndefined();
    expect(plainResultResponse({ jsonrpc: '2.0', id: 1, result: [] })).toBeUndefined();
    expect(() => parseJsonRpcLine('{"jsonrpc":"2.0","id":1,"result":[]}')).toThrow();
    expect(() => parseJsonRpcLine('not json')).toThrow();
  });
});
