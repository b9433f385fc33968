/**
 * Display hygiene for text that comes from MCP servers (tool descriptions, tool results, logs).
 *
 * Everything a server sends is untrusted. Terminal escape sequences can hide text, rewrite what a
 * log viewer shows or set window titles; bidi overrides and zero-width characters can make text
 * read differently from what it is. `sanitizeForDisplay` removes all of those and keeps only
 * printable text, newlines and tabs. The raw text is kept separately where the model path needs
 * it; display code only ever gets the sanitized version.
 */

/* eslint-disable no-control-regex -- matching control characters is the point of this file */
// CSI: ESC [ params intermediates final; also the 8-bit CSI (0x9b).
const CSI = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]/g;
// OSC / DCS / SOS / PM / APC strings, terminated by BEL or ST (ESC \ or 0x9c), or unterminated to the end.
const STRING_SEQ = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)/g;
// Any other two-character escape (ESC followed by one byte), e.g. ESC 7, ESC c.
const OTHER_ESC = /\x1b[\s\S]?/g;
// C0 controls except tab and newline, DEL, and C1 controls.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
// Bidi embeddings/overrides/isolates, zero-width and other invisible format characters.
const INVISIBLE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

/**
 * Returns `text` with ANSI/VT escape sequences, control characters, bidi controls and
 * zero-width characters removed; newlines and tabs are kept, CRLF becomes LF.
 *
 * Why: a server's text is shown in the UI and logs and must look exactly like what it is.
 */
export function sanitizeForDisplay(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(STRING_SEQ, '')
    .replace(CSI, '')
    .replace(OTHER_ESC, '')
    .replace(CONTROL, '')
    .replace(INVISIBLE, '');
}

/**
 * Phrases that address the reader (a model) rather than describe data. The heuristic is simple
 * and documented on purpose: it raises a flag for the UI and the model wrapper, it never blocks
 * anything, and it will miss paraphrases. Patterns:
 * - "ignore/disregard/forget (all) previous/prior/above instructions|prompts|rules"
 * - "you are now …", "new instructions:", "system prompt", "developer mode", "admin mode"
 * - "do not tell/inform/show the user", "without telling the user"
 * - role/tag markers: `<system>`, `</instructions>`, `[INST]`, "assistant:"/"system:" at a line start
 * - imperative tool-use requests: "call/invoke/run/use the `x` tool", "call delete_all_files"
 */
const INSTRUCTION_PATTERNS: ReadonlyArray<RegExp> = [
  /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|directions)\b/i,
  /\byou are now\b/i,
  /\bnew instructions?\s*:/i,
  /\bsystem prompt\b/i,
  /\b(developer|admin|god|jailbreak) mode\b/i,
  /\b(do not|don't|never)\s+(tell|inform|show|alert|notify)\s+the user\b/i,
  /\bwithout (telling|informing|asking) the user\b/i,
  /<\/?\s*(system|instructions?|assistant|im_start|im_end)\b[^>]*>/i,
  /\[\/?INST\]/i,
  /^\s*(system|assistant)\s*:/im,
  /\b(call|invoke|run|execute|use)\s+(the\s+)?`?[a-z][\w.-]*`?\s+tool\b/i,
  /\b(call|invoke|run|execute)\s+`?[a-z]+_[a-z_]+`?/i,
];

/** Which instruction-like patterns `text` matches (empty: none). See INSTRUCTION_PATTERNS. */
export function instructionFlags(text: string): string[] {
  const clean = sanitizeForDisplay(text);
  return INSTRUCTION_PATTERNS.filter((p) => p.test(clean)).map((p) => p.source);
}

/**
 * True if `text` looks like it is giving instructions to the model (see INSTRUCTION_PATTERNS).
 *
 * Why: tool results are data; text in them that tries to steer the model is flagged so the UI
 * can label it and the chat loop can wrap it as untrusted.
 */
export function looksLikeInstructions(text: string): boolean {
  return instructionFlags(text).length > 0;
}
