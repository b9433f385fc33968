/**
 * The client side of MCP roots on one SDK client: the capability to declare and the `roots/list`
 * answer, read fresh from the person's choices at every request.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** Client capabilities for roots: the list, and notices when it changes. */
export const ROOTS_CAPABILITIES = { roots: { listChanged: true } } as const;

/** Answers `roots/list` with `roots()` (the folders the person chose for this server and account). */
export function registerRoots(client: Client, roots: () => Array<{ uri: string; name: string }>): void {
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots() }));
}
