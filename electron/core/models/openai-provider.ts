/**
 * The OpenAI-compatible Chat Completions adapter, on the official `openai` SDK with a configurable
 * base URL: OpenAI itself, Ollama, LM Studio, vLLM, OpenRouter and any server that speaks
 * `/chat/completions` with SSE.
 *
 * It uses the SDK's raw stream (`chat.completions.create({ stream: true })`) rather than the
 * `chat.completions.stream()` helper: the helper parses tool arguments as they grow and expects
 * OpenAI's exact chunk shapes, while compatible servers differ (ids repeated on every chunk, calls
 * without an index, usage in its own chunk) and the loop needs arguments exactly as written,
 * malformed or not. Retries, timeouts and errors are handled in adapter-common.ts.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import {
  argumentsObject,
  classifyFailure,
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

/** At most this many models are read from a listing. */
const MAX_LISTED_MODELS = 1000;

/** Chat Completions finish reasons in the neutral vocabulary. */
function stopReason(reason: string | null | undefined): ModelStopReason {
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    default:
      return 'other';
  }
}

/**
 * The neutral conversation as Chat Completions messages.
 *
 * A tool call is replayed with its arguments as the model wrote them when they are a JSON object,
 * and as `{}` otherwise: compatible servers (Ollama, vLLM) parse replayed arguments and refuse the
 * whole request on malformed JSON, and the loop has already answered that call with an error.
 */
export function toOpenAIMessages(system: string, messages: readonly ModelMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.text });
    else if (m.role === 'assistant') {
      if (m.text === '' && m.toolCalls.length === 0) continue;
      out.push({
        role: 'assistant',
        content: m.text === '' ? null : m.text,
        ...(m.toolCalls.length > 0
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: isJsonObject(c.argumentsJson) ? c.argumentsJson : JSON.stringify(argumentsObject(c.argumentsJson)) },
              })),
            }
          : {}),
      });
    } else {
      for (const r of m.results) out.push({ role: 'tool', tool_call_id: r.callId, content: r.content });
    }
  }
  return out;
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** An OpenAI-compatible Chat Completions server through the official SDK. */
export class OpenAIProvider implements ModelProvider {
  readonly kind = 'openai' as const;
  private readonly options: ResolvedAdapterOptions;
  private readonly client: OpenAI;
  /** Cleared after a server refused `stream_options` (some compatible servers do), so usage is then simply unknown. */
  private usageInStream = true;

  constructor(options: AdapterOptions) {
    this.options = resolveAdapterOptions(options);
    const key = this.options.apiKey;
    this.client = new OpenAI({
      // A local server usually needs no key. The SDK insists on one, so it gets a placeholder and
      // the Authorization header is removed below: nothing that looks like a key is sent.
      apiKey: key ?? 'no-key',
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      baseURL: this.options.baseUrl,
      maxRetries: 0,
      timeout: this.options.connectTimeoutMs,
      fetch: originBoundFetch(this.options.fetch, this.options.origin, this.options.maxResponseBytes),
      logLevel: 'warn',
      logger: sdkLogger(this.options.log, key),
      ...(key ? {} : { defaultHeaders: { Authorization: null } }),
    });
  }

  /** Streams one reply: text deltas as they arrive, the tool calls once the reply says it is done, then finish. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return streamWithRetries(request, this.options, CLASSES, (signal, hooks) => this.attempt(request, signal, hooks));
  }

  private async open(request: ModelRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    const tools: ChatCompletionTool[] = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: { type: 'object', ...t.inputSchema } },
    }));
    // OpenAI's own API refuses `max_tokens` for its newer models; compatible servers all know it.
    const limit = this.options.host === 'api.openai.com' ? { max_completion_tokens: request.maxTokens } : { max_tokens: request.maxTokens };
    const body: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: toOpenAIMessages(request.system, request.messages),
      ...(tools.length > 0 ? { tools } : {}),
      ...limit,
      stream: true,
      ...(this.usageInStream ? { stream_options: { include_usage: true } } : {}),
    };
    try {
      return await this.client.chat.completions.create(body, { signal });
    } catch (error) {
      if (this.usageInStream && error instanceof APIError && error.status === 400 && /stream_options/i.test(error.message)) {
        this.usageInStream = false;
        const { stream_options: _dropped, ...without } = body;
        return this.client.chat.completions.create(without, { signal });
      }
      throw error;
    }
  }

  private async *attempt(request: ModelRequest, signal: AbortSignal, hooks: { touch: () => void; started: () => void }): AsyncGenerator<ModelStreamEvent> {
    const stream = await this.open(request, signal);
    hooks.started();
    /** Tool calls by the key the server gave them (its `index`, else its id), in arrival order. */
    const calls = new Map<number | string, { id: string; name: string; args: string }>();
    let usage: ModelUsage | null = null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      hooks.touch();
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens ?? null, outputTokens: chunk.usage.completion_tokens ?? null };
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta?.content) yield { type: 'text-delta', text: delta.content };
      for (const tc of delta?.tool_calls ?? []) {
        const key = typeof tc.index === 'number' ? tc.index : (tc.id ?? calls.size);
        let call = calls.get(key);
        if (!call) {
          call = { id: '', name: '', args: '' };
          calls.set(key, call);
        }
        if (tc.id && !call.id) call.id = tc.id;
        // Some servers repeat the name on every chunk, a few stream it in pieces.
        const name = tc.function?.name;
        if (name && name !== call.name) call.name = call.name === '' ? name : call.name + name;
        if (tc.function?.arguments) call.args += tc.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (finish === null) {
      throw new ModelError('STREAM_CUT', `The connection to ${this.options.host} ended before the reply was complete (no finish_reason).`);
    }
    let n = 0;
    for (const call of calls.values()) {
      n += 1;
      // A server that gives no id still gets one, so the call can be answered.
      yield { type: 'tool-call', call: { id: call.id || `call_${n}`, name: call.name, argumentsJson: call.args === '' ? '{}' : call.args } };
    }
    yield { type: 'finish', stopReason: stopReason(finish), usage };
  }

  /** Lists the server's models (GET /models); null when the server has no such endpoint. */
  async listModels(signal?: AbortSignal): Promise<ModelInfo[] | null> {
    const out: ModelInfo[] = [];
    try {
      for await (const m of this.client.models.list({ signal, timeout: this.options.listTimeoutMs })) {
        if (typeof m?.id === 'string') out.push({ id: m.id, label: m.id });
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
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }
}
