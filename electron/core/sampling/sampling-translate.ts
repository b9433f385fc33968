/**
 * A server's sampling request in the provider-neutral model shapes (models/provider.ts), and the
 * model's reply back in MCP's.
 *
 * Every piece of text is cleaned by the one sanitizer first, so what the person is shown in the
 * dialog is exactly what the model is sent. Images and audio are not sent (Warden's model port
 * carries text): each is replaced by a visible note, shown in the dialog too. The tools a request
 * carries are the server's tools: they are offered to the model as the server declared them, and
 * the model's calls to them go back to the server, which runs them. Warden's own tools are never
 * offered here.
 */
import type { CreateMessageRequest, CreateMessageResult, CreateMessageResultWithTools } from '@modelcontextprotocol/sdk/types.js';
import type { ModelMessage, ModelStopReason, ModelToolCall, ModelToolSpec } from '../models/provider';
import { sanitizeForDisplay, sanitizeJsonText } from '../text/sanitize';

export type SamplingParams = CreateMessageRequest['params'];
type SamplingContent = SamplingParams['messages'][number]['content'];
type Block = Exclude<SamplingContent, readonly unknown[]> | (SamplingContent extends readonly (infer B)[] ? B : never);

/** A refusal in words, returned to the server as a JSON-RPC error. */
export class SamplingRefusal extends Error {
  constructor(message: string, readonly code: 'invalid' | 'refused' = 'refused') {
    super(message);
    this.name = 'SamplingRefusal';
  }
}

/** Provider-legal tool names: the same rule the chat's lookup table keeps. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The request as the model will get it, and as the person is shown it. */
export interface TranslatedRequest {
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  /** Every message as one readable block per message ("Server (as user): …"), for the dialog. */
  transcript: string;
  /** Characters of text the model would be sent (system prompt, messages, tool descriptions). */
  characters: number;
}

const blocksOf = (content: SamplingContent): Block[] => (Array.isArray(content) ? (content as Block[]) : [content as Block]);
const clean = (text: string) => sanitizeForDisplay(text);

function blockText(block: { type: string; text?: string; mimeType?: string }): string {
  if (block.type === 'text') return clean(block.text ?? '');
  if (block.type === 'image' || block.type === 'audio') return `[${block.type} (${clean(block.mimeType ?? 'unknown type')}) not sent: Warden sends models text only]`;
  return `[${clean(block.type)} content not sent]`;
}

/** The server's request in the model port's shape; throws SamplingRefusal for what cannot be sent. */
export function translateRequest(params: SamplingParams): TranslatedRequest {
  const toolsOffered = params.toolChoice?.mode === 'none' ? [] : (params.tools ?? []);
  const tools: ModelToolSpec[] = toolsOffered.map((t) => {
    if (!TOOL_NAME.test(t.name)) throw new SamplingRefusal(`the request offers a tool named ${JSON.stringify(clean(t.name).slice(0, 80))}, which no model provider accepts (letters, digits, _ and - only, at most 64)`, 'invalid');
    // Every string of the schema is the server's text too, cleaned like its description.
    return { name: t.name, description: clean(t.description ?? ''), inputSchema: sanitizeJsonText(t.inputSchema) as Record<string, unknown> };
  });
  const toolNames = new Map<string, string>();
  const messages: ModelMessage[] = [];
  const lines: string[] = [];
  for (const message of params.messages) {
    const blocks = blocksOf(message.content);
    if (message.role === 'assistant') {
      const text = blocks.filter((b) => b.type !== 'tool_use').map((b) => blockText(b as { type: string })).join('\n');
      const toolCalls: ModelToolCall[] = blocks.flatMap((b) => {
        if (b.type !== 'tool_use') return [];
        toolNames.set(b.id, b.name);
        return [{ id: b.id, name: b.name, argumentsJson: JSON.stringify(b.input) }];
      });
      messages.push({ role: 'assistant', text, toolCalls });
      lines.push(`Server (as the model's earlier reply): ${text}${toolCalls.map((c) => `\n  asked to run ${clean(c.name)} with ${clean(c.argumentsJson)}`).join('')}`);
      continue;
    }
    const results = blocks.flatMap((b) => {
      if (b.type !== 'tool_result') return [];
      const content = (b.content ?? []).map((c) => blockText(c as { type: string })).join('\n');
      return [{ callId: b.toolUseId, name: toolNames.get(b.toolUseId) ?? 'tool', content, isError: b.isError === true }];
    });
    if (results.length) {
      messages.push({ role: 'tool', results });
      for (const r of results) lines.push(`Server (result of ${clean(r.name)}${r.isError ? ', an error' : ''}): ${r.content}`);
    }
    const text = blocks.filter((b) => b.type !== 'tool_result').map((b) => blockText(b as { type: string })).join('\n');
    if (text || !results.length) {
      messages.push({ role: 'user', text });
      lines.push(`Server (as the user): ${text}`);
    }
  }
  if (!messages.length) throw new SamplingRefusal('the request has no messages', 'invalid');
  const system = clean(params.systemPrompt ?? '');
  const characters = system.length + messages.reduce((n, m) => n + (m.role === 'tool' ? m.results.reduce((k, r) => k + r.content.length, 0) : m.text.length), 0) + tools.reduce((n, t) => n + t.description.length + JSON.stringify(t.inputSchema).length, 0);
  return { system, messages, tools, transcript: lines.join('\n\n'), characters };
}

/** What the model said, gathered from its stream. */
export interface ModelReply {
  text: string;
  toolCalls: ModelToolCall[];
  stopReason: ModelStopReason;
}

const STOP: Record<ModelStopReason, string> = { end_turn: 'endTurn', tool_calls: 'toolUse', max_tokens: 'maxTokens', refusal: 'refusal', other: 'endTurn' };

/**
 * The model's reply as MCP's result. Tool calls are returned to the server as `tool_use` (the
 * server runs its tools; Warden runs nothing). A call to a tool the request did not offer, or with
 * arguments that are not a JSON object, refuses the whole reply: nothing the model invents passes.
 */
export function replyToResult(reply: ModelReply, model: string, params: SamplingParams): CreateMessageResult | CreateMessageResultWithTools {
  const withTools = params.tools !== undefined || params.toolChoice !== undefined;
  const offered = new Set(params.toolChoice?.mode === 'none' ? [] : (params.tools ?? []).map((t) => t.name));
  const uses = reply.toolCalls.map((call) => {
    if (!offered.has(call.name)) throw new SamplingRefusal(`the model asked for a tool the server did not offer (${JSON.stringify(clean(call.name).slice(0, 80))}); its reply was not sent`);
    let input: unknown;
    try {
      input = JSON.parse(call.argumentsJson || '{}');
    } catch {
      throw new SamplingRefusal(`the model wrote arguments for ${call.name} that are not JSON; its reply was not sent`);
    }
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw new SamplingRefusal(`the model's arguments for ${call.name} are not a JSON object; its reply was not sent`);
    return { type: 'tool_use' as const, id: call.id, name: call.name, input: input as Record<string, unknown> };
  });
  const stopReason = uses.length ? 'toolUse' : STOP[reply.stopReason];
  if (!withTools) return { role: 'assistant', model, stopReason, content: { type: 'text', text: reply.text } };
  const content = [...(reply.text || !uses.length ? [{ type: 'text' as const, text: reply.text }] : []), ...uses];
  return { role: 'assistant', model, stopReason, content };
}
