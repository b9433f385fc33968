/**
 * The `ModelProvider` port: how the chat loop talks to a language model, whichever vendor it is.
 *
 * One provider-neutral message shape lives here; each adapter (Anthropic Messages, OpenAI-style
 * Chat Completions, the offline demo model) translates it to and from its wire format at its own
 * edge. The loop owns everything else: which tools are offered, what every tool call becomes, and
 * what text a model ever sees from a server. An adapter never runs a tool, never retries a tool
 * call and never decides a permission; it only streams what the model said.
 */

import type { ConnectFailure } from '../../../shared/domain/connect-failure';

/** A tool as offered to the model: a provider-legal name from the loop's lookup table. */
export interface ModelToolSpec {
  /** `^[a-zA-Z0-9_-]{1,64}$`, unique within one request; never parsed back into server/tool. */
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** One tool call as the model made it. */
export interface ModelToolCall {
  /** The provider's id for this call; every call gets exactly one result carrying it back. */
  id: string;
  /** The name the model used (it may be one that was never offered). */
  name: string;
  /** The arguments exactly as the model wrote them: JSON text that may be malformed. */
  argumentsJson: string;
}

/** The answer to one tool call, as text the loop already sanitized, capped and wrapped. */
export interface ModelToolResult {
  callId: string;
  /** The model-facing tool name the call used. */
  name: string;
  content: string;
  isError: boolean;
}

/** A message of the conversation, in the neutral shape every adapter translates. */
export type ModelMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: readonly ModelToolCall[] }
  | { role: 'tool'; results: readonly ModelToolResult[] };

/** One request for a model reply. */
export interface ModelRequest {
  /** The provider's model id ("claude-sonnet-4-5", "gpt-4.1", "llama3.1:8b"). */
  model: string;
  system: string;
  messages: readonly ModelMessage[];
  tools: readonly ModelToolSpec[];
  maxTokens: number;
  /** Aborting ends the stream at once; the adapter then throws a `ModelError('CANCELLED')`. */
  signal: AbortSignal;
}

/** Token counts as the provider reported them (null where it did not). */
export interface ModelUsage {
  inputTokens: number | null;
  outputTokens: number | null;
}

/** Why the model stopped. `tool_calls`: it wants the tool calls of this reply answered. */
export type ModelStopReason = 'end_turn' | 'tool_calls' | 'max_tokens' | 'refusal' | 'other';

/** What a reply stream yields, in order; `finish` is always last when the stream ends normally. */
export type ModelStreamEvent =
  | { type: 'text-delta'; text: string }
  /** A complete tool call: emitted once its arguments have fully arrived. */
  | { type: 'tool-call'; call: ModelToolCall }
  /** The provider refused for now (429, 5xx, overloaded) and the adapter waits before trying again. */
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'finish'; stopReason: ModelStopReason; usage: ModelUsage | null };

/** Stable reasons a model request fails; the UI maps each to a sentence with the fix. */
export type ModelErrorCode =
  /** 401: the key is wrong or revoked. */
  | 'UNAUTHORIZED'
  /** 403: the key may not use this model or endpoint. */
  | 'FORBIDDEN'
  /** 404 for the model: no such model at this provider. */
  | 'MODEL_NOT_FOUND'
  /** 429 after the adapter's retries ran out. */
  | 'RATE_LIMITED'
  /** 5xx after retries, or an error event in the stream. */
  | 'PROVIDER_ERROR'
  /** 400-class answers other than the above (a bad request the person can fix, e.g. max tokens). */
  | 'BAD_REQUEST'
  /** No answer in time. */
  | 'TIMEOUT'
  /** The stream ended before the reply was complete. */
  | 'STREAM_CUT'
  /** DNS, refused connection, TLS: the provider could not be reached. */
  | 'NETWORK'
  /** The request's signal was aborted (Stop). */
  | 'CANCELLED';

/** A failed model request, with a code the UI can explain and a message safe to show. */
export class ModelError extends Error {
  constructor(
    readonly code: ModelErrorCode,
    message: string,
    /** The HTTP status, when there was one. */
    readonly status: number | null = null,
    /** For NETWORK: which kind (the name does not resolve, nothing listens, TLS, a dropped connection), when known. */
    readonly failure: ConnectFailure | null = null,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** A model the provider offers, as its API lists it. */
export interface ModelInfo {
  id: string;
  label: string;
}

/**
 * A language model provider.
 *
 * Implementations stream one reply per `stream` call and hold no conversation state; the loop
 * passes the whole conversation each time. Errors are thrown from the iterator as `ModelError`.
 */
export interface ModelProvider {
  /** Which adapter this is. */
  readonly kind: 'anthropic' | 'openai' | 'demo';
  /** Streams one model reply. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
  /** The models this provider offers, where its API can list them (null: it cannot). */
  listModels(signal?: AbortSignal): Promise<ModelInfo[] | null>;
}

/** A provider a person can choose in the model picker. */
export interface ProviderChoice {
  /** Stable id of the configured provider; `demo` is the built-in offline model. */
  providerId: string;
  kind: ModelProvider['kind'];
  /** The person's name for it ("Anthropic (work)", "Ollama on this machine"). */
  label: string;
  /** The model chosen by default for new conversations with this provider (null: none chosen yet). */
  defaultModel: string | null;
}

/**
 * Where the chat loop finds the provider a conversation uses.
 *
 * The loop asks for a provider at every model round, so a key changed or a provider removed in
 * settings takes effect at the next round, never mid-stream.
 */
export interface ModelProviders {
  /**
   * The provider configured under `providerId`; rejects with a WardenError('NOT_FOUND') naming it
   * otherwise, or WardenError('KEYCHAIN_UNAVAILABLE') when its API key cannot be read.
   */
  get(providerId: string): Promise<ModelProvider>;
  /** Every provider a person can choose, for the model picker. */
  list(): Promise<ProviderChoice[]>;
}
