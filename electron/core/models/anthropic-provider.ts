/**
 * The Anthropic Messages adapter, on `@anthropic-ai/sdk`.
 *
 * It uses the SDK's raw stream (`messages.create({ stream: true })`) rather than the
 * `messages.stream()` helper: the helper keeps a parsed snapshot of every tool input as it grows,
 * while the loop needs each tool call's arguments exactly as the model wrote them, malformed or
 * not, and nothing more per event than the translation itself. Retries, timeouts and errors are
 * handled in adapter-common.ts (see its comment for the SDK options chosen and why).
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { MessageParam, RawMessageStreamEvent, Tool, ToolResultBlockParam, ToolUseBlockParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import {
  argumentsObject,
  classifyFailure,
  providerText,
  resolveAdapterOptions,
  sdkLogger,
  streamWithRetries,
  type AdapterOptions,
  type ResolvedAdapterOptions,
  type SdkErrorClasses,
} from './adapter-common';
import { originBoundFetch } from './provider-fetch';
import {
  ModelError,
  type ModelInfo,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelStopReason,
  type ModelStreamEvent,
  type ModelUsage,
} from './provider';

const CLASSES: SdkErrorClasses = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };

/** At most this many models are read from a listing (a hostile server could paginate for ever). */
const MAX_LISTED_MODELS = 1000;

/** Anthropic's stop reasons in the neutral vocabulary. */
function stopReason(reason: string | null | undefined): ModelStopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    default:
      return 'other';
  }
}

/**
 * The neutral conversation as Anthropic messages.
 *
 * Tool results travel in a user turn, and consecutive turns of one role are merged (tool results
 * first, then the person's text), which is how the Messages API expects a turn that answers tool
 * calls. A tool call's arguments are replayed as the object they parse to, or `{}` when the model
 * wrote something that is not a JSON object (the API accepts only objects; the loop already
 * answered that call with an error result).
 */
export function toAnthropicMessages(messages: readonly ModelMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: Array<TextBlockParam | ToolUseBlockParam | ToolResultBlockParam>) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last && last.role === role && Array.isArray(last.content)) (last.content as typeof blocks).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'user') {
      if (m.text !== '') push('user', [{ type: 'text', text: m.text }]);
    } else if (m.role === 'assistant') {
      const blocks: Array<TextBlockParam | ToolUseBlockParam> = [];
      if (m.text !== '') blocks.push({ type: 'text', text: m.text });
      for (const c of m.toolCalls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: argumentsObject(c.argumentsJson) });
      push('assistant', blocks);
    } else {
      push(
        'user',
        m.results.map((r) => ({ type: 'tool_result', tool_use_id: r.callId, content: r.content, ...(r.isError ? { is_error: true } : {}) })),
      );
    }
  }
  return out;
}

/** The Anthropic Messages API through the official SDK. */
export class AnthropicProvider implements ModelProvider {
  readonly kind = 'anthropic' as const;
  private readonly options: ResolvedAdapterOptions;
  private readonly client: Anthropic | null;

  constructor(options: AdapterOptions) {
    this.options = resolveAdapterOptions(options);
    const key = this.options.apiKey;
    // No key, no client: constructed without credentials the SDK would look for a profile on
    // disk and send what it found to this base URL.
    this.client = key
      ? new Anthropic({
          apiKey: key,
          authToken: null,
          baseURL: this.options.baseUrl,
          maxRetries: 0,
          timeout: this.options.connectTimeoutMs,
          fetch: originBoundFetch(this.options.fetch, this.options.origin, this.options.maxResponseBytes),
          logLevel: 'warn',
          logger: sdkLogger(this.options.log, key),
          openTelemetry: false,
        })
      : null;
  }

  private requireClient(): Anthropic {
    if (!this.client) throw new ModelError('UNAUTHORIZED', `No API key is stored for ${this.options.host}. Enter the key for this provider in Models.`);
    return this.client;
  }

  /** Streams one reply: text deltas as they arrive, each tool call once its block closes, then finish. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return streamWithRetries(request, this.options, CLASSES, (signal, hooks) => this.attempt(request, signal, hooks));
  }

  private async *attempt(request: ModelRequest, signal: AbortSignal, hooks: { touch: () => void; started: () => void }): AsyncGenerator<ModelStreamEvent> {
    const client = this.requireClient();
    const tools: Tool[] = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.inputSchema } as Tool['input_schema'] }));
    const stream = await client.messages.create(
      {
        model: request.model,
        max_tokens: request.maxTokens,
        ...(request.system ? { system: request.system } : {}),
        messages: toAnthropicMessages(request.messages),
        ...(tools.length > 0 ? { tools } : {}),
        stream: true,
      },
      { signal },
    );
    hooks.started();
    /** Open tool_use blocks by content index: id, name and the raw JSON text so far. */
    const toolBlocks = new Map<number, { id: string; name: string; json: string; startInput: string }>();
    let usage: ModelUsage = { inputTokens: null, outputTokens: null };
    let stop: ModelStopReason | null = null;
    let stopped = false;
    for await (const event of stream as AsyncIterable<RawMessageStreamEvent>) {
      hooks.touch();
      switch (event.type) {
        case 'message_start':
          usage = { inputTokens: event.message.usage?.input_tokens ?? null, outputTokens: event.message.usage?.output_tokens ?? null };
          break;
        case 'content_block_start': {
          const block = event.content_block;
          if (block.type === 'text') {
            if (block.text) yield { type: 'text-delta', text: block.text };
          } else if (block.type === 'tool_use') {
            const input = block.input as Record<string, unknown> | null | undefined;
            // Normally `{}` here and the arguments follow as input_json_delta; a proxy that sends
            // the whole input at once still counts.
            const startInput = input && typeof input === 'object' && Object.keys(input).length > 0 ? JSON.stringify(input) : '';
            toolBlocks.set(event.index, { id: block.id, name: block.name, json: '', startInput });
          }
          break;
        }
        case 'content_block_delta': {
          const delta = event.delta;
          if (delta.type === 'text_delta') {
            if (delta.text) yield { type: 'text-delta', text: delta.text };
          } else if (delta.type === 'input_json_delta') {
            const block = toolBlocks.get(event.index);
            if (block) block.json += delta.partial_json;
          }
          break;
        }
        case 'content_block_stop': {
          const block = toolBlocks.get(event.index);
          if (block) {
            toolBlocks.delete(event.index);
            // No input_json_delta at all means a call without arguments: `{}`.
            const argumentsJson = block.json !== '' ? block.json : block.startInput || '{}';
            yield { type: 'tool-call', call: { id: block.id, name: block.name, argumentsJson } };
          }
          break;
        }
        case 'message_delta':
          stop = stopReason(event.delta.stop_reason);
          if (event.usage) {
            usage = {
              inputTokens: event.usage.input_tokens ?? usage.inputTokens,
              outputTokens: event.usage.output_tokens ?? usage.outputTokens,
            };
          }
          break;
        case 'message_stop':
          stopped = true;
          break;
        default:
          break;
      }
    }
    if (!stopped || toolBlocks.size > 0) {
      throw new ModelError('STREAM_CUT', `The connection to ${this.options.host} ended before the reply was complete (no message_stop).`);
    }
    yield { type: 'finish', stopReason: stop ?? 'other', usage };
  }

  /** Lists the models the key may use (GET /v1/models, every page up to 1000 models). */
  async listModels(signal?: AbortSignal): Promise<ModelInfo[] | null> {
    const client = this.requireClient();
    const out: ModelInfo[] = [];
    try {
      for await (const m of client.models.list({ limit: 100 }, { signal, timeout: this.options.listTimeoutMs })) {
        out.push({ id: m.id, label: providerText(m.display_name || m.id, this.options.apiKey, 120) || m.id });
        if (out.length >= MAX_LISTED_MODELS) break;
      }
    } catch (error) {
      const failure = classifyFailure(error, CLASSES, {
        options: this.options,
        model: null,
        cancelled: signal?.aborted ?? false,
        timedOut: false,
        responseStarted: false,
      });
      if (failure.error.status === 404 || failure.error.status === 405 || failure.error.status === 501) return null;
      throw failure.error;
    }
    return out;
  }
}
