/**
 * The conversation as a model provider is given it, and a failed model request in words: pure
 * functions of the chat's records, kept apart from the loop that drives them (chat-service.ts).
 */
import type { ChatMessage } from '../../../shared/contract/chat';
import { ModelError, type ModelMessage } from '../models/provider';
import { sanitizeForDisplay, sanitizeJsonText } from '../text/sanitize';
import { isFinalStatus, MODEL_TEXT } from './call-results';
import { attachmentsForModel } from './attachments';

/**
 * The conversation in the provider-neutral shape: Warden's notices are left out, and every tool
 * call is followed by its one result (a call that never got one is answered as expired).
 */
export function toModelMessages(messages: readonly ChatMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', text: attachmentsForModel(m.text, m.attachments ?? []) });
    else if (m.role === 'assistant') {
      if (!m.text && m.toolCalls.length === 0) continue;
      out.push({ role: 'assistant', text: m.text, toolCalls: m.toolCalls.map((c) => ({ id: c.callId, name: c.modelName, argumentsJson: argumentsForHistory(c.argumentsJson) })) });
      if (m.toolCalls.length) {
        out.push({ role: 'tool', results: m.toolCalls.map((c) => ({ callId: c.callId, name: c.modelName, content: isFinalStatus(c.status) ? c.modelResult : MODEL_TEXT.expired, isError: isFinalStatus(c.status) ? c.isError : true })) });
      }
    }
  }
  return out;
}

/**
 * A tool call's arguments as the model is reminded of them: every string cleaned like server
 * text. Why: the arguments may quote what a server wrote (or be written to carry escapes), and no
 * request Warden sends a provider carries hidden characters; what was sent to the server is kept
 * exactly in the call's record, this is only the model's view of its own earlier turn.
 */
function argumentsForHistory(argumentsJson: string): string {
  try {
    return JSON.stringify(sanitizeJsonText(JSON.parse(argumentsJson)));
  } catch {
    return sanitizeForDisplay(argumentsJson);
  }
}

/**
 * A failed model request as a notice's text: the adapter's own message (it names the host and the
 * status). The sentence with the fix is the renderer's (renderer/src/errors.ts), from the
 * notice's `problem`; this text is what stays readable anywhere the problem is not shown.
 */
export function describeModelError(error: unknown): string {
  if (!(error instanceof ModelError)) return `The model request failed: ${error instanceof Error ? error.message : String(error)}`;
  return sanitizeForDisplay(error.message).slice(0, 300);
}

/** A ModelError as the notice's problem data; null for anything else. */
export function modelProblemOf(error: unknown): ChatMessage['problem'] {
  return error instanceof ModelError
    ? { code: error.code, message: sanitizeForDisplay(error.message).slice(0, 300), status: error.status, ...(error.failure ? { failure: error.failure } : {}) }
    : null;
}

/** Text as one line of a title or note: sanitized, runs of white space as one space, cut to `max` with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = sanitizeForDisplay(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
