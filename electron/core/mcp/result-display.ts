/**
 * How a tool result is shown: every text the server wrote is sanitized for display and checked
 * for instruction-like content. The raw result stays untouched for the model path (which wraps
 * it as untrusted data, issue 6); only this presentation goes to the UI.
 */
import type { ToolCallResult } from '../gate/ports';
import { instructionFlags, sanitizeForDisplay } from './sanitize';

/** One content block as the UI shows it. */
export interface DisplayBlock {
  type: string;
  /** Sanitized text (for text blocks and resource text); a short label for binary content. */
  text: string;
}

/** A tool result prepared for display, with the flags the UI shows next to it. */
export interface DisplayResult {
  blocks: DisplayBlock[];
  isError: boolean;
  /** True when any text looks like instructions to the model (see sanitize.ts for the heuristic). */
  instructionLike: boolean;
  /** Which heuristic patterns matched, for the "why is this flagged" tooltip. */
  matchedPatterns: string[];
}

/**
 * Sanitizes every text in a tool result and flags instruction-like content.
 *
 * Why: results are untrusted server output; the UI must never render escape sequences or
 * invisible characters from them, and must label text that tries to steer the model.
 */
export function presentToolResult(result: ToolCallResult): DisplayResult {
  const patterns = new Set<string>();
  const blocks = result.content.map((block): DisplayBlock => {
    const type = typeof block.type === 'string' ? sanitizeForDisplay(block.type) : 'unknown';
    const raw = textOf(block);
    if (raw === undefined) return { type, text: `[${type} content]` };
    for (const p of instructionFlags(raw)) patterns.add(p);
    return { type, text: sanitizeForDisplay(raw) };
  });
  if (result.structuredContent) {
    const raw = JSON.stringify(result.structuredContent);
    for (const p of instructionFlags(raw)) patterns.add(p);
  }
  return { blocks, isError: result.isError === true, instructionLike: patterns.size > 0, matchedPatterns: [...patterns] };
}

function textOf(block: Record<string, unknown>): string | undefined {
  if (typeof block.text === 'string') return block.text;
  const resource = block.resource as { text?: unknown } | undefined;
  if (resource && typeof resource.text === 'string') return resource.text;
  return undefined;
}
