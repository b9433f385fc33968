/**
 * The size cap on what the gate keeps of a tool result and an error message, applied before
 * either enters the operation record or the journal, so nothing downstream (ledger, renderer,
 * model) ever holds more than the cap, however much a server sends.
 *
 * A result over the cap keeps its content blocks in order while they fit; a text block that does
 * not fit is cut; blocks after it (and structured content that does not fit) are left out. The
 * record says what the whole result was (`truncated`: its length and sha256, of its canonical
 * JSON) and ends with a visible "[truncated: N of M bytes …]" text block, so anyone reading the
 * record (a person, a model, an export) sees that it is not the whole answer.
 */
import type { ToolResultRecord } from '../../../shared/domain/journal-events';
import { createHash } from 'node:crypto';
import { canonicalJson, jsonCopy } from '../canonical/canonical-json';
import { cutUtf8, truncationMarker } from '../text/sanitize';

/** Default cap on a result as the gate keeps and journals it (UTF-8 bytes of its JSON). */
export const DEFAULT_MAX_RESULT_BYTES = 256 * 1024;
/** Cap on an error message a server (or a transport) produced. */
export const MAX_ERROR_MESSAGE_BYTES = 8 * 1024;
/** Room kept under the cap for the marker block and the record's own fields. */
const MARKER_ROOM = 512;

/**
 * The record of a tool result as the gate keeps it: a frozen JSON copy of what the server said,
 * cut to `maxBytes` (with `truncated` and a marker block) when it is larger.
 *
 * Why here: the cap must hold before anything stores or forwards the result; the gate is the one
 * place every result passes.
 */
export function capToolResult(raw: unknown, maxBytes = DEFAULT_MAX_RESULT_BYTES): ToolResultRecord {
  const r = (raw ?? {}) as { content?: unknown; structuredContent?: unknown; isError?: unknown };
  const content = Array.isArray(r.content) ? (r.content as Array<Record<string, unknown>>) : [];
  const structured = r.structuredContent && typeof r.structuredContent === 'object' ? (r.structuredContent as Record<string, unknown>) : undefined;
  const isError = r.isError === true;
  if (jsonBound(content, 0) + (structured ? jsonBound(structured, 0) : 0) <= maxBytes) return record(isError, content, structured);

  // The whole result's canonical JSON, {"content":[…],"isError":…,"structuredContent":…}, is
  // measured and hashed block by block: each large string is serialized once, never joined.
  const blocks = content.map((b) => canonicalJson(b));
  const structuredJson = structured ? canonicalJson(structured) : null;
  const hash = createHash('sha256');
  const pieces = ['{"content":[', ...blocks.flatMap((b, i) => (i ? [',', b] : [b])), `],"isError":${isError}`, ...(structuredJson !== null ? [',"structuredContent":', structuredJson] : []), '}'];
  let totalBytes = 0;
  for (const piece of pieces) {
    hash.update(piece, 'utf8');
    totalBytes += Buffer.byteLength(piece);
  }
  if (totalBytes <= maxBytes) return record(isError, content, structured);

  const budget = Math.max(0, maxBytes - MARKER_ROOM);
  const kept: Array<Record<string, unknown>> = [];
  let used = 0;
  let i = 0;
  for (; i < content.length; i++) {
    const size = Buffer.byteLength(blocks[i]!) + 1;
    if (used + size > budget) break;
    kept.push(content[i]!);
    used += size;
  }
  let cut = false;
  const first = content[i];
  if (first !== undefined && first.type === 'text' && typeof first.text === 'string') {
    // The block that does not fit is cut to the room left, if it is text.
    const overhead = Buffer.byteLength(canonicalJson({ ...first, text: '' })) + 1;
    const text = cutJsonString(first.text, budget - used - overhead);
    if (text.length > 0) {
      kept.push({ ...first, text });
      used += overhead + Buffer.byteLength(JSON.stringify(text)) - 2;
      cut = true;
      i++;
    }
  }
  const left = content.length - i;
  let keepStructured = false;
  if (structuredJson !== null && left === 0 && !cut) {
    const size = Buffer.byteLength(structuredJson);
    keepStructured = used + size <= budget;
    if (keepStructured) used += size;
  }
  const omitted = [
    cut ? 'text cut' : '',
    left > 0 ? `${left} content block${left === 1 ? '' : 's'} left out` : '',
    structured && !keepStructured ? 'structured content left out' : '',
  ].filter(Boolean);
  const sha256 = hash.digest('hex');
  const marker = truncationMarker(used, totalBytes, `; sha256 of the whole result ${sha256}${omitted.length ? `; ${omitted.join(', ')}` : ''}`);
  kept.push({ type: 'text', text: marker });
  const out = record(isError, kept, keepStructured ? structured : undefined) as ToolResultRecord & { truncated?: unknown };
  return Object.freeze({ ...out, truncated: Object.freeze({ totalBytes, sha256, keptBytes: used }) });
}

/** An error message cut to MAX_ERROR_MESSAGE_BYTES (with the marker) when longer. */
export function capErrorMessage(message: string): string {
  if (message.length * 3 <= MAX_ERROR_MESSAGE_BYTES) return message;
  const totalBytes = Buffer.byteLength(message);
  if (totalBytes <= MAX_ERROR_MESSAGE_BYTES) return message;
  const kept = cutUtf8(message, MAX_ERROR_MESSAGE_BYTES - 64);
  return `${kept} ${truncationMarker(Buffer.byteLength(kept), totalBytes)}`;
}

function record(isError: boolean, content: Array<Record<string, unknown>>, structured: Record<string, unknown> | undefined): ToolResultRecord {
  // A frozen JSON copy: what the server said, immune to later edits, kept by the journal as is.
  const out: ToolResultRecord = { isError, content: jsonCopy(content, true) };
  if (structured) out.structuredContent = jsonCopy(structured, true);
  return Object.freeze(out);
}

/**
 * The longest prefix of `text` whose JSON string form (escapes included, quotes not) fits in
 * `maxBytes` UTF-8 bytes: a result of control characters escapes to six bytes each.
 */
function cutJsonString(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  let piece = cutUtf8(text, maxBytes);
  for (;;) {
    const size = Buffer.byteLength(JSON.stringify(piece)) - 2;
    if (size <= maxBytes) return piece;
    piece = cutUtf8(piece, Math.floor((Buffer.byteLength(piece) * maxBytes) / size) - 1);
  }
}

/**
 * A cheap upper bound on the UTF-8 bytes of `value`'s JSON (no string is built): each string
 * counts 6 bytes per UTF-16 unit (the longest escape) and every value a little for its syntax.
 * Exact sizes are computed only when this bound is over the cap.
 */
function jsonBound(value: unknown, depth: number): number {
  if (typeof value === 'string') return value.length * 6 + 2;
  if (value === null || typeof value !== 'object') return 24;
  if (depth > 64) return Infinity;
  let n = 2;
  if (Array.isArray(value)) {
    for (const v of value) n += jsonBound(v, depth + 1) + 1;
  } else {
    for (const k in value) n += k.length * 6 + 4 + jsonBound((value as Record<string, unknown>)[k], depth + 1);
  }
  return n;
}
