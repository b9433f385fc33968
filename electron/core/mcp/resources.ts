/**
 * A server's resources and resource templates as the window sees them, and a read resource cut
 * to a cap: the server's words sanitized, URIs kept as the identifiers they are (plus a sanitized
 * form to show), binary content named and sized but never shown or given to a model.
 */
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceContentView, ResourceTemplateView, ResourceView } from '../../../shared/contract/server-data';
import { MAX_URI_CHARS } from '../../../shared/contract/server-data';
import { visibleName } from '../../../shared/display';
import { templateVariables } from '../../../shared/domain/uri-template';
import { cutUtf8, displayText, sanitizeForDisplay, truncationMarker } from '../text/sanitize';

/** Most parts of one read resource kept. */
const MAX_CONTENT_PARTS = 100;

const optional = (text: unknown, max: number): string | null => (typeof text === 'string' ? displayText(text, max) : null);

/** A listed resource for the window. A URI too long to send back is shown but cannot be read (the contract refuses it). */
export function resourceView(r: Resource): ResourceView {
  return {
    uri: r.uri.length <= MAX_URI_CHARS ? r.uri : '',
    displayUri: displayText(r.uri, MAX_URI_CHARS),
    name: displayText(r.name, 256),
    title: optional(r.title, 256),
    description: optional(r.description, 8 * 1024),
    mimeType: optional(r.mimeType, 100),
    size: typeof r.size === 'number' && Number.isFinite(r.size) && r.size >= 0 ? r.size : null,
  };
}

/** Whether a template can be offered to fill in: short enough to show, and every character visible. */
function usableTemplate(template: string): boolean {
  return template.length <= MAX_URI_CHARS && visibleName(template) === template;
}

export function templateView(t: ResourceTemplate): ResourceTemplateView {
  return {
    // A template too long to show, or with hidden characters (which could hide a variable or pass
    // for another address), cannot be filled in: the window gets none to fill.
    uriTemplate: usableTemplate(t.uriTemplate) ? t.uriTemplate : '',
    displayTemplate: displayText(t.uriTemplate, MAX_URI_CHARS),
    name: displayText(t.name, 256),
    title: optional(t.title, 256),
    description: optional(t.description, 8 * 1024),
    mimeType: optional(t.mimeType, 100),
    variables: usableTemplate(t.uriTemplate) ? templateVariables(t.uriTemplate) : [],
  };
}

/**
 * The parts of a read resource as the window shows them: text cut so that all parts together keep
 * at most `maxBytes` (a visible marker ends a cut part), then sanitized. Cut before cleaning, so a
 * huge answer is never copied whole again.
 */
export function resourceContentsOf(result: ReadResourceResult, maxBytes: number): { contents: ResourceContentView[]; keptBytes: number; totalBytes: number } {
  const contents: ResourceContentView[] = [];
  let keptBytes = 0;
  let totalBytes = 0;
  const parts = result.contents;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]! as { uri: string; mimeType?: string; text?: unknown; blob?: unknown };
    const text = typeof part.text === 'string' ? part.text : null;
    const bytes = text === null ? 0 : Buffer.byteLength(text);
    totalBytes += bytes;
    if (i >= MAX_CONTENT_PARTS) continue;
    const base = { displayUri: displayText(part.uri, MAX_URI_CHARS), mimeType: optional(part.mimeType, 100) };
    if (text === null) {
      const blob = typeof part.blob === 'string' ? part.blob : '';
      contents.push({ ...base, text: null, binaryBytes: Math.floor((blob.replace(/=+$/, '').length * 3) / 4) });
      continue;
    }
    const room = Math.max(0, maxBytes - keptBytes);
    if (bytes <= room) {
      keptBytes += bytes;
      contents.push({ ...base, text: sanitizeForDisplay(text), binaryBytes: null });
      continue;
    }
    const kept = cutUtf8(text, room);
    const keptHere = Buffer.byteLength(kept);
    keptBytes += keptHere;
    contents.push({ ...base, text: `${sanitizeForDisplay(kept)}\n${truncationMarker(keptHere, bytes)}`, binaryBytes: null });
  }
  return { contents, keptBytes, totalBytes };
}

/** What a model is given of a read resource (before the chat wraps it as untrusted). */
export function resourceModelText(contents: readonly ResourceContentView[]): string {
  const many = contents.length > 1;
  return contents
    .map((c) => {
      const body = c.text ?? `[binary content${c.mimeType ? ` (${c.mimeType})` : ''}, ${c.binaryBytes ?? 0} bytes, not given to the model]`;
      return many ? `[${c.displayUri}]\n${body}` : body;
    })
    .join('\n\n');
}
