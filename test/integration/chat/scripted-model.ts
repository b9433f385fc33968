/**
 * A ModelProvider for tests that answers each request with what a script function returns, and
 * records every request it was given (to check what the model was shown: tools, results, system).
 */
import { ModelError, type ModelProvider, type ModelProviders, type ModelRequest, type ModelStreamEvent } from '../../../electron/core/models/provider';

/** One scripted reply: text, tool calls, and how the stream behaves. */
export interface ScriptedReply {
  text?: string;
  calls?: Array<{ id?: string; name: string; args?: unknown; rawArgs?: string }>;
  /** Waits this long (abortable) before finishing. */
  holdMs?: number;
}

export class ScriptedModel implements ModelProvider {
  readonly kind = 'openai' as const;
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: (request: ModelRequest, index: number) => ScriptedReply) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const index = this.requests.push(request) - 1;
    const reply = this.script(request, index);
    if (reply.text) yield { type: 'text-delta', text: reply.text };
    if (reply.holdMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, reply.holdMs);
        request.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
    if (request.signal.aborted) throw new ModelError('CANCELLED', 'stopped');
    const calls = reply.calls ?? [];
    for (const [i, c] of calls.entries()) {
      yield { type: 'tool-call', call: { id: c.id ?? `call-${index}-${i}`, name: c.name, argumentsJson: c.rawArgs ?? JSON.stringify(c.args ?? {}) } };
    }
    yield { type: 'finish', stopReason: calls.length ? 'tool_calls' : 'end_turn', usage: { inputTokens: 10, outputTokens: 5 } };
  }

  async listModels() {
    return [{ id: 'scripted', label: 'Scripted' }];
  }
}

/** Providers with the scripted model under id "scripted" (and the demo). */
export function withScripted(model: ScriptedModel) {
  return (demo: ModelProvider): ModelProviders => ({
    get: async (id) => {
      if (id === 'scripted') return model;
      if (id === 'demo') return demo;
      throw new Error(`no provider ${id}`);
    },
    list: async () => [
      { providerId: 'scripted', kind: 'openai', label: 'Scripted', defaultModel: 'scripted' },
      { providerId: 'demo', kind: 'demo', label: 'Demo', defaultModel: 'scripted-demo' },
    ],
  });
}

/** The model-facing name of a demo tool in a request's offered tools. */
export const offeredName = (request: ModelRequest, tool: string) => request.tools.find((t) => t.name.endsWith(`__${tool}`))?.name;
