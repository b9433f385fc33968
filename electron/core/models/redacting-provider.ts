/**
 * The redaction boundary between Warden and every model provider, in both directions.
 *
 * Outgoing: a request (system prompt, every message of the history, every tool's name,
 * description and schema) is scrubbed of every secret Warden holds before an adapter sees it. So
 * a key registered for provider A that ended up in a conversation (a proxy echoing it, a server
 * leaking it in a result) is never sent to provider B, nor to A again, and a server's token in a
 * tool description is not shown to any model.
 *
 * Incoming: what a provider says (its text, delta by delta, and the arguments of its tool calls)
 * is scrubbed before the loop keeps it, shows it or hands it to the gate. A provider echoing its
 * own key is the case this exists for: the text would otherwise be stored in the conversation
 * file and sent on with the history wherever the conversation goes next.
 *
 * Every provider the core hands out (`ModelProviderService.get`, which the chat, sampling and the
 * provider test all go through) is wrapped here, so no path reaches an adapter around it.
 */
import type { Redactor } from '../redact/redactor';
import type { ModelProvider, ModelRequest, ModelStreamEvent, ModelToolCall } from './provider';

/** `provider` with every request and every reply passed through `redactor`. */
export function redactingProvider(provider: ModelProvider, redactor: Redactor): ModelProvider {
  return {
    kind: provider.kind,
    listModels: (signal) => provider.listModels(signal),
    stream: (request) => redactedStream(provider, request, redactor),
  };
}

async function* redactedStream(provider: ModelProvider, request: ModelRequest, redactor: Redactor): AsyncGenerator<ModelStreamEvent> {
  const { signal, ...content } = request;
  const clean = redactor.scrubIfPresent(content);
  const text = redactor.scrubStream();
  for await (const event of provider.stream({ ...clean, signal })) {
    if (event.type === 'text-delta') {
      const passed = text.push(event.text);
      if (passed.length > 0) yield { type: 'text-delta', text: passed };
      continue;
    }
    // Text held back as a possible start of a secret ends before anything that follows it.
    const rest = text.end();
    if (rest.length > 0) yield { type: 'text-delta', text: rest };
    yield event.type === 'tool-call' ? { type: 'tool-call', call: redactedCall(event.call, redactor) } : event;
  }
  const rest = text.end();
  if (rest.length > 0) yield { type: 'text-delta', text: rest };
}

/**
 * A tool call with Warden's secrets replaced in its name and arguments.
 *
 * The arguments are the model's JSON text, kept as written when they hold no secret (the gate
 * binds the exact arguments). With one, valid JSON is scrubbed as a value, so a secret JSON writes
 * with escapes is found too, and written back; text that is not JSON is scrubbed as text.
 */
function redactedCall(call: ModelToolCall, redactor: Redactor): ModelToolCall {
  const name = redactor.scrubString(call.name);
  let argumentsJson = redactor.scrubString(call.argumentsJson);
  try {
    const parsed: unknown = JSON.parse(call.argumentsJson);
    const scrubbed = redactor.scrubIfPresent(parsed);
    argumentsJson = scrubbed === parsed ? call.argumentsJson : JSON.stringify(scrubbed);
  } catch {
    // Not JSON: the text scrub above stands; the loop reports the arguments as invalid.
  }
  return name === call.name && argumentsJson === call.argumentsJson ? call : { ...call, name, argumentsJson };
}
