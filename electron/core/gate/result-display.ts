/**
 * How operations and their tool results are shown: the one place a gate operation becomes the
 * contract's `OperationSummary`, so every channel and event that carries one (operations,
 * approvals, tools:run) sends the server's text only through the sanitizer, at most
 * `DISPLAY_RESULT_BYTES` of a result, and with its instruction-like flag. The gate's own record
 * (and what the chat loop reads) is untouched.
 */
import type { OperationSummary, ResultView } from '../../../shared/contract/operations';
import type { ToolResultRecord } from '../../../shared/domain/journal-events';
import type { OperationSnapshot } from './gate';
import { cutUtf8, sanitizeForDisplay, sanitizeServerText, truncationMarker } from '../text/sanitize';

/** Most of a result's text the UI is sent, per operation (the record itself keeps up to 256 KiB). */
export const DISPLAY_RESULT_BYTES = 64 * 1024;
/** Most of any other server-written text in an operation (reasons, error messages, descriptions). */
const DISPLAY_TEXT_BYTES = 8 * 1024;
/** How many results' display forms are kept for reuse (a finished result never changes). */
const CACHE_SIZE = 256;

/**
 * A tool result as the UI shows it: every text sanitized, at most `maxBytes` of it in all (cut
 * with a visible marker), flagged when any of it reads like instructions to a model.
 *
 * Why: results are untrusted server output; the UI must never render escape sequences or
 * invisible characters from them, must say plainly when text tries to steer the model, and must
 * not be sent megabytes it cannot show.
 */
export function presentToolResult(result: ToolResultRecord, maxBytes = DISPLAY_RESULT_BYTES): ResultView {
  const flags = new Set<string>();
  const content: ResultView['content'] = [];
  let shown = 0;
  let total = 0;
  let cut = false;
  for (const block of result.content) {
    const type = typeof block.type === 'string' ? sanitizeForDisplay(block.type).slice(0, 40) : 'unknown';
    const raw = textOf(block);
    if (raw === undefined) {
      content.push({ type, text: `[${type} content]` });
      continue;
    }
    const clean = sanitizeServerText(raw, { flag: true });
    for (const f of clean.flags) flags.add(f);
    const size = Buffer.byteLength(clean.text);
    total += size;
    if (cut) continue;
    if (shown + size <= maxBytes) {
      content.push({ type, text: clean.text });
      shown += size;
    } else {
      const text = cutUtf8(clean.text, maxBytes - shown);
      shown += Buffer.byteLength(text);
      content.push({ type, text });
      cut = true;
    }
  }
  if (result.structuredContent) {
    const clean = sanitizeServerText(JSON.stringify(result.structuredContent), { flag: true, maxBytes: Math.max(0, maxBytes - shown) });
    for (const f of clean.flags) flags.add(f);
    // Shown only when no block carries text (servers should send both; some send only this).
    if (!content.some((c) => c.type === 'text')) content.push({ type: 'structured', text: clean.text });
  }
  const whole = result.truncated;
  let truncated: ResultView['truncated'] = null;
  if (whole) truncated = { shownBytes: shown, totalBytes: whole.totalBytes, sha256: whole.sha256 };
  else if (cut) truncated = { shownBytes: shown, totalBytes: total, sha256: null };
  if (cut) content.push({ type: 'text', text: truncationMarker(shown, truncated!.totalBytes) });
  return { isError: result.isError, content, instructionLike: flags.size > 0, flags: [...flags], truncated };
}

/**
 * Makes contract summaries of gate operations: results presented (see `presentToolResult`),
 * every other server-written text (tool title and description, reasons, error messages)
 * sanitized and capped. A finished result's display form is made once and reused.
 */
export function createOperationPresenter(): (op: OperationSnapshot) => OperationSummary {
  const cache = new Map<string, ResultView>();
  const viewOf = (op: OperationSnapshot): ResultView | null => {
    if (!op.result) return null;
    const hit = cache.get(op.operationId);
    // Snapshots are copies: the same result arrives as equal but different objects, so the cache
    // is keyed by operation (a result is set once, when the operation finishes).
    if (hit !== undefined) return hit;
    const view = presentToolResult(op.result);
    cache.set(op.operationId, view);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return view;
  };
  return (op) => ({
    operationId: op.operationId,
    state: op.state,
    origin: op.origin,
    identity: op.identity,
    arguments: op.arguments,
    fingerprint: op.fingerprint,
    requestedAt: op.requestedAt,
    expiresAt: op.expiresAt,
    decision: op.decision ? { ...op.decision, reason: text(op.decision.reason) } : null,
    reason: text(op.reason),
    approvedByUser: op.approvedByUser,
    result: viewOf(op),
    error: op.error ? { code: op.error.code, message: text(op.error.message) } : null,
    history: op.history.map((h) => ({ ...h, reason: text(h.reason) })),
    labels: {
      server: op.labels.server,
      account: op.labels.account,
      toolTitle: op.labels.toolTitle === null ? null : text(op.labels.toolTitle),
      toolDescription: op.labels.toolDescription === null ? null : text(op.labels.toolDescription),
      // Written by Warden from the tool's identity and the validated arguments, not server text.
      summary: op.labels.summary,
    },
  });
}

function text(value: string): string {
  return sanitizeServerText(value, { maxBytes: DISPLAY_TEXT_BYTES }).text;
}

function textOf(block: Record<string, unknown>): string | undefined {
  if (typeof block.text === 'string') return block.text;
  const resource = block.resource as { text?: unknown } | undefined;
  if (resource && typeof resource.text === 'string') return resource.text;
  return undefined;
}
