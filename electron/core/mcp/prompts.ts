/**
 * A server's prompts as the window sees them, and a filled-in prompt's messages: every message's
 * full text (sanitized, cut to a cap) with the role the server labelled it with. The role is the
 * server's label, nothing more: a message it calls "user" is still the server's text, shown and
 * given to a model as such (see chat/attachments.ts).
 */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import type { PromptView } from '../../../shared/contract/server-data';
import { visibleName } from '../../../shared/display';
import { cutUtf8, displayText, sanitizeForDisplay, truncationMarker } from '../text/sanitize';

type PromptMessageView = { serverRole: 'user' | 'assistant'; kind: 'text' | 'image' | 'audio' | 'resource' | 'resource_link'; text: string };

/** Most messages of one prompt kept. */
const MAX_MESSAGES = 100;

export function promptView(p: Prompt): PromptView {
  return {
    // The name goes back to the server as shown: one with hidden characters is shown (and sent)
    // with them as escapes, so it can neither pass for another prompt nor reach the server.
    name: visibleName(p.name),
    title: displayText(typeof p.title === 'string' ? p.title : p.name, 256),
    description: typeof p.description === 'string' ? displayText(p.description, 8 * 1024) : null,
    arguments: (p.arguments ?? []).slice(0, 50).map((a) => ({
      name: visibleName(a.name),
      description: typeof a.description === 'string' ? displayText(a.description, 1024) : null,
      required: a.required === true,
    })),
  };
}

/** The text of one message part, and what kind of part it is. */
function partText(content: GetPromptResult['messages'][number]['content']): { kind: PromptMessageView['kind']; text: string } {
  const c = content as { type: string; text?: unknown; mimeType?: unknown; resource?: { uri?: unknown; text?: unknown; blob?: unknown; mimeType?: unknown }; uri?: unknown; name?: unknown };
  if (c.type === 'text' && typeof c.text === 'string') return { kind: 'text', text: c.text };
  if (c.type === 'image' || c.type === 'audio') return { kind: c.type, text: `[${c.type}${typeof c.mimeType === 'string' ? ` (${c.mimeType})` : ''}, not shown and not given to the model]` };
  if (c.type === 'resource' && c.resource) {
    if (typeof c.resource.text === 'string') return { kind: 'resource', text: c.resource.text };
    return { kind: 'resource', text: `[binary resource ${typeof c.resource.uri === 'string' ? c.resource.uri : ''}, not given to the model]` };
  }
  if (c.type === 'resource_link') return { kind: 'resource_link', text: `[link to the resource ${typeof c.uri === 'string' ? c.uri : ''}]` };
  return { kind: 'text', text: `[a part of kind ${String(c.type).slice(0, 40)} Warden does not show]` };
}

/** The messages of a filled-in prompt, cut so that all together keep at most `maxBytes` of text. */
export function promptMessagesOf(result: GetPromptResult, maxBytes: number): { messages: PromptMessageView[]; keptBytes: number; totalBytes: number } {
  const messages: PromptMessageView[] = [];
  let keptBytes = 0;
  let totalBytes = 0;
  result.messages.forEach((m, i) => {
    const { kind, text } = partText(m.content);
    const bytes = Buffer.byteLength(text);
    totalBytes += bytes;
    if (i >= MAX_MESSAGES) return;
    const serverRole = m.role === 'assistant' ? 'assistant' : 'user';
    const room = Math.max(0, maxBytes - keptBytes);
    if (bytes <= room) {
      keptBytes += bytes;
      messages.push({ serverRole, kind, text: sanitizeForDisplay(text) });
      return;
    }
    const kept = cutUtf8(text, room);
    keptBytes += Buffer.byteLength(kept);
    messages.push({ serverRole, kind, text: `${sanitizeForDisplay(kept)}\n${truncationMarker(Buffer.byteLength(kept), bytes)}` });
  });
  return { messages, keptBytes, totalBytes };
}

/**
 * What a model is given of a prompt (before the chat wraps it as untrusted): each message under
 * a line naming the role the server gave it, as the server's label.
 */
export function promptModelText(messages: readonly PromptMessageView[]): string {
  return messages.map((m) => `[message the server labels "${m.serverRole}"]\n${m.text}`).join('\n\n');
}
