/**
 * Reading JSON-RPC messages from a server, as cheaply as correctness allows.
 *
 * The SDK validates every incoming message with `JSONRPCMessageSchema` (a zod union of four
 * strict object schemas), which costs about twice the `JSON.parse` of a small answer. Almost
 * every message on the call path is a plain successful response, whose shape is tiny: exactly
 * `jsonrpc: "2.0"`, an integer or string `id`, and an object `result`. That shape is checked
 * here by hand; everything else (requests, notifications, errors, a result with `_meta`, anything
 * odd) goes through the SDK's schema unchanged. The answer is the same either way — the unit test
 * `test/unit/mcp/jsonrpc.test.ts` checks the fast path against the schema on generated messages.
 */
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The message if `value` is a plain successful JSON-RPC response that `JSONRPCMessageSchema`
 * accepts as is; otherwise undefined (the caller then uses the schema).
 *
 * Why: skips the zod union on the hot path without accepting anything the schema would refuse.
 */
export function plainResultResponse(value: unknown): JSONRPCMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  if (m.jsonrpc !== '2.0') return undefined;
  const id = m.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  const result = m.result;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return undefined;
  // The schema is strict: exactly these three keys, all own properties.
  if (!hasOwn.call(m, 'jsonrpc') || !hasOwn.call(m, 'id') || !hasOwn.call(m, 'result')) return undefined;
  let keys = 0;
  for (const key in m) {
    if (!hasOwn.call(m, key)) return undefined;
    keys += 1;
  }
  if (keys !== 3) return undefined;
  // `_meta` has its own schema; leave any result that carries one (or odd keys) to zod.
  if (hasOwn.call(result, '_meta') || hasOwn.call(result, '__proto__')) return undefined;
  return m as JSONRPCMessage;
}

/**
 * Parses one line of server output into a JSON-RPC message; throws (SyntaxError or ZodError)
 * for anything that is not one.
 *
 * Why: one place for the transport's parse, with the plain-response fast path first.
 */
export function parseJsonRpcLine(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  return plainResultResponse(value) ?? JSONRPCMessageSchema.parse(value);
}
