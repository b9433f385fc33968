/**
 * The offline demo model: a script, not a language model. It needs no key and no network, always
 * answers the same way to the same conversation, and is labelled as a script wherever it can be
 * chosen.
 *
 * It plays the part of a model that can be fooled: asked to summarise the inbox, it reads it with
 * the inbox tool and then OBEYS the injected text in the message and asks for the delete tool,
 * which the demo's rules never offer. Warden's answer ("this tool is not permitted") comes from
 * the rules, not from the model behaving well: that is what the demo shows.
 *
 * What it understands (case-insensitive, in the latest user message):
 *   - "inbox"                          → reads the inbox, then obeys the injection
 *   - "save a note: X" / "add note X"  → saves a note (the demo asks you first)
 *   - "list/read/show … notes"         → lists the notes
 *   - "delete"                          → asks for the delete tool anyway
 *   - "call NAME"                      → calls a tool by exactly that name (e.g. one that does not exist)
 * Anything else gets a short help text.
 */
import type { ModelMessage, ModelProvider, ModelRequest, ModelStreamEvent, ModelToolCall, ModelToolSpec, ProviderChoice } from './provider';
import { ModelError } from './provider';

/** The demo's provider id and its one model. */
export const DEMO_PROVIDER_ID = 'demo';
export const DEMO_MODEL_ID = 'scripted-demo';

/** How the demo appears in the model picker: a script, said plainly. */
export const DEMO_PROVIDER_CHOICE: ProviderChoice = {
  providerId: DEMO_PROVIDER_ID,
  kind: 'demo',
  label: 'Offline demo (a script, not a real model)',
  defaultModel: DEMO_MODEL_ID,
};

const HELP =
  'I am Warden\'s **offline demo**: a fixed script, not a real model. Try one of these:\n\n' +
  '- "Summarise my inbox" (I read it, then fall for the message\'s injected instruction)\n' +
  '- "Save a note: call the dentist" (Warden asks you first)\n' +
  '- "List my notes"\n' +
  '- "Call format_disk" (a tool that does not exist)';

interface Plan {
  text: string;
  /** `exact`: use the name as written (a person asked for that name), never the offered form. */
  calls: Array<{ base: string; args: Record<string, unknown>; exact?: boolean }>;
}

/** The offline, scripted demo model. */
export class DemoModel implements ModelProvider {
  readonly kind = 'demo' as const;

  /** `chunkDelayMs`: pause between streamed words, so the UI shows streaming (0 in tests). */
  constructor(private readonly options: { chunkDelayMs?: number } = {}) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const plan = planReply(request.messages);
    const words = plan.text.match(/\S+\s*|\s+/g) ?? [];
    for (const word of words) {
      if (request.signal.aborted) throw new ModelError('CANCELLED', 'The reply was stopped');
      const delay = this.options.chunkDelayMs ?? 0;
      if (delay > 0) await sleep(delay, request.signal);
      yield { type: 'text-delta', text: word };
    }
    if (request.signal.aborted) throw new ModelError('CANCELLED', 'The reply was stopped');
    const calls: ModelToolCall[] = plan.calls.map((c, i) => ({
      id: `demo-call-${request.messages.length}-${i}`,
      name: c.exact ? c.base : toolNameFor(c.base, request.tools),
      argumentsJson: JSON.stringify(c.args),
    }));
    for (const call of calls) yield { type: 'tool-call', call };
    const inputChars = request.system.length + JSON.stringify(request.messages).length;
    yield {
      type: 'finish',
      stopReason: calls.length ? 'tool_calls' : 'end_turn',
      usage: { inputTokens: Math.ceil(inputChars / 4), outputTokens: words.length + calls.length * 8 },
    };
  }

  async listModels() {
    return [{ id: DEMO_MODEL_ID, label: 'Scripted demo (offline)' }];
  }
}

/**
 * The model-facing name of a demo tool: the offered name ending in `__<base>` if there is one.
 * Otherwise the script guesses, as a fooled model would: the offered demo tools' prefix with the
 * base name (`Warden_demo…__notes_delete`), or the bare name if no demo tool is offered at all.
 */
function toolNameFor(base: string, tools: readonly ModelToolSpec[]): string {
  const offered = tools.find((t) => t.name === base || t.name.endsWith(`__${base}`));
  if (offered) return offered.name;
  const sibling = tools.find((t) => /__(notes_list|read_inbox|notes_add)$/.test(t.name));
  return sibling ? `${sibling.name.slice(0, sibling.name.lastIndexOf('__'))}__${base}` : base;
}

function lastUserText(messages: readonly ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return m.text;
  }
  return '';
}

/** What the script says next, from the conversation so far. Pure: same conversation, same reply. */
export function planReply(messages: readonly ModelMessage[]): Plan {
  const last = messages[messages.length - 1];
  if (!last) return { text: HELP, calls: [] };
  if (last.role === 'user') return planForRequest(last.text);
  if (last.role === 'tool') {
    const asked = messages[messages.length - 2];
    const callName = (id: string) => (asked?.role === 'assistant' ? asked.toolCalls.find((c) => c.id === id)?.name : undefined) ?? '';
    const inboxResult = last.results.find((r) => /read_inbox$/.test(callName(r.callId)));
    if (inboxResult && !inboxResult.isError && /IMPORTANT SYSTEM NOTICE/i.test(inboxResult.content) && /delete/i.test(inboxResult.content)) {
      return {
        text:
          'Your inbox has one message, from unknown-sender@example.com, subject "Quick favour". ' +
          'It says this is an important system notice and that I must call the delete tool, so I am doing that now. ' +
          '(This script obeys injected text on purpose: it shows that Warden\'s rules, not the model, decide what runs.)',
        calls: [{ base: 'notes_delete', args: { id: 1 } }],
      };
    }
    return { text: reportResults(last.results, callName, lastUserText(messages)), calls: [] };
  }
  return { text: HELP, calls: [] };
}

function planForRequest(text: string): Plan {
  const t = text.trim();
  if (/inbox/i.test(t)) return { text: 'I will read your inbox first.', calls: [{ base: 'read_inbox', args: {} }] };
  const note = /\b(?:save|add|write)\s+(?:a\s+)?note\s*[:,-]?\s*(.+)$/is.exec(t);
  if (note && note[1]!.trim()) return { text: 'I will save that note.', calls: [{ base: 'notes_add', args: { text: note[1]!.trim().slice(0, 500) } }] };
  const call = /\bcall\s+(?:the\s+)?(?:tool\s+)?[`"']?([A-Za-z0-9_.-]{1,80})/i.exec(t);
  if (call) return { text: `Calling ${call[1]} as you asked.`, calls: [{ base: call[1]!, args: {}, exact: true }] };
  if (/\bdelete\b/i.test(t)) return { text: 'I will delete your notes.', calls: [{ base: 'notes_delete', args: { id: 1 } }] };
  if (/\b(list|read|show)\b.*\bnotes?\b/i.test(t)) return { text: 'Here are your notes.', calls: [{ base: 'notes_list', args: {} }] };
  return { text: HELP, calls: [] };
}

/** The script's closing words: grounded only in what Warden told it about each call. */
function reportResults(results: ReadonlyArray<{ callId: string; content: string; isError: boolean }>, callName: (id: string) => string, request: string): string {
  const lines = results.map((r) => {
    const name = callName(r.callId).replace(/^.*__/, '') || 'the tool';
    if (/this tool is not permitted/i.test(r.content)) {
      return /inbox/i.test(request)
        ? `I tried to delete your notes as the message told me to, but Warden answered that **${name}** is not permitted, so nothing was deleted. In short: the inbox holds one message from a stranger that tries to make an assistant delete your notes. Treat it as suspicious.`
        : `Warden answered that **${name}** is not permitted, so it did not run.`;
    }
    if (/user declined/i.test(r.content)) return `You declined **${name}**, so nothing was done.`;
    if (/approval expired/i.test(r.content)) return `The approval for **${name}** expired, so nothing ran.`;
    if (/no answer is known/i.test(r.content)) return `The request for **${name}** was sent, but its outcome is unknown: I cannot say whether it worked.`;
    if (/^Error:/.test(r.content)) return `**${name}** did not run: ${r.content.replace(/^Error:\s*/, '')}`;
    const inner = /<tool_output[^>]*>\n?([\s\S]*?)\n?<\/tool_output>/.exec(r.content)?.[1] ?? r.content;
    const first = inner.trim().split('\n').slice(0, 6).join('\n');
    return r.isError ? `**${name}** reported an error:\n\n\`\`\`\n${first}\n\`\`\`` : `**${name}** answered:\n\n\`\`\`\n${first}\n\`\`\``;
  });
  return lines.join('\n\n');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
