/**
 * The client side of MCP sampling on one SDK client: the capability to declare and the
 * `sampling/createMessage` handler, which hands every request to the sampling service (the
 * person's rule for this server and account decides; see sampling-service.ts).
 *
 * The handler has no access to the gate or to any connection: a sampling request can only ever
 * produce a model's reply for the asking server, never a tool call made by Warden.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, type CreateMessageRequest, type CreateMessageResult, type CreateMessageResultWithTools } from '@modelcontextprotocol/sdk/types.js';

/**
 * Client capabilities for sampling, including requests that carry tools (the server runs them:
 * the model's tool_use goes back to the server, which answers with tool_result in its next request).
 */
export const SAMPLING_CAPABILITIES = { sampling: { tools: {} } } as const;

/** Answers one sampling request for the connection's (server, account); throws an McpError to refuse. */
export type SamplingAnswer = (params: CreateMessageRequest['params'], signal: AbortSignal) => Promise<CreateMessageResult | CreateMessageResultWithTools>;

/** Installs `answer` as the client's `sampling/createMessage` handler. */
export function registerSampling(client: Client, answer: SamplingAnswer): void {
  client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => answer(request.params, extra.signal));
}
