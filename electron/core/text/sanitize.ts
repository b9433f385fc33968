/**
 * The one sanitizer for text that comes from MCP servers: tool results, descriptions, titles,
 * instructions, error messages, progress and log lines, elicitation questions.
 *
 * Everything a server sends is untrusted. Terminal escape sequences can hide text, rewrite what a
 * log viewer shows or set window titles; bidi overrides and zero-width characters can make text
 * read differently from what it is. `sanitizeForDisplay` removes all of those and keeps only
 * printable text, newlines and tabs; `sanitizeServerText` does the same, caps the text with a
 * visible marker where asked, and says in plain words why the text reads like instructions to a
 * model. Every path that shows or forwards server text goes through one of the two.
 *
 * Every expression here runs on text an attacker chose, up to the size of a whole tool result, on
 * the main thread: each is written to take time linear in the text (no unbounded run that can
 * retry from every position).
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
 * Phrases that address the reader (a model) rather than describe data, each with the plain words
 * the UI shows for it. The heuristic is simple and documented on purpose: it raises a flag for the
 * UI and the model wrapper, it never blocks anything, and it will miss paraphrases.
 * Runs of spaces and markup are bounded ({0,8}, {0,200}) so no pattern can take quadratic time.
 */
const INSTRUCTION_PATTERNS: ReadonlyArray<{ pattern: RegExp; words: string }> = [
  {
    pattern: /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|directions)\b/i,
    words: 'tells the model to ignore its instructions',
  },
  { pattern: /\byou are now\b/i, words: 'tells the model who it is now ("you are now …")' },
  { pattern: /\bnew instructions?[ \t]{0,8}:/i, words: 'announces new instructions' },
  { pattern: /\bsystem prompt\b/i, words: 'talks about the system prompt' },
  { pattern: /\b(developer|admin|god|jailbreak) mode\b/i, words: 'asks for a special mode (developer or admin mode)' },
  { pattern: /\b(do not|don't|never)[ \t]{1,8}(tell|inform|show|alert|notify)[ \t]{1,8}the user\b/i, words: 'asks to keep something from you' },
  { pattern: /\bwithout (telling|informing|asking) the user\b/i, words: 'asks to act without telling you' },
  { pattern: /<\/?[ \t]{0,8}(system|instructions?|assistant|im_start|im_end)\b[^<>\n]{0,200}>/i, words: 'contains chat markup such as <system>' },
  { pattern: /\[\/?INST\]/i, words: 'contains prompt markers such as [INST]' },
  { pattern: /^[ \t]{0,8}(system|assistant)[ \t]{0,8}:/im, words: 'has a line posing as the system or the assistant' },
  { pattern: /\b(call|invoke|run|execute|use)[ \t]{1,8}(the[ \t]{1,8})?`?[a-z][\w.-]{0,100}`?[ \t]{1,8}tool\b/i, words: 'asks the model to use a tool' },
  { pattern: /\b(call|invoke|run|execute)[ \t]{1,8}`?[a-z]+_[a-z_]{1,100}`?/i, words: 'asks the model to run a named action' },
];

/** Which instruction-like patterns `text` matches, as the patterns' sources (empty: none). */
export function instructionFlags(text: string): string[] {
  const clean = sanitizeForDisplay(text);
  return INSTRUCTION_PATTERNS.filter((p) => p.pattern.test(clean)).map((p) => p.pattern.source);
}

/** Why already-sanitized text reads like instructions to a model, in plain words (empty: it does not). */
function instructionReasons(clean: string): string[] {
  return INSTRUCTION_PATTERNS.filter((p) => p.pattern.test(clean)).map((p) => p.words);
}

/**
 * A server's text ready to show or forward: sanitized, and cut to `maxBytes` with the visible
 * marker when longer (`sanitizeServerText` without flags, for names, descriptions, messages).
 */
export function displayText(text: string, maxBytes: number): string {
  return sanitizeServerText(text, { maxBytes }).text;
}

/**
 * A server's flat record (tool annotations) with every string value through `displayText`;
 * other values (the hints are booleans) are kept as they are.
 */
export function displayStrings(record: Record<string, unknown>, maxBytes: number): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === 'string' ? displayText(v, maxBytes) : v]));
}

/** The visible marker for text that was cut: "[truncated: N of M bytes]". */
export function truncationMarker(keptBytes: number, totalBytes: number, detail = ''): string {
  return `[truncated: ${keptBytes} of ${totalBytes} bytes${detail}]`;
}

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes` (a surrogate pair is never
 * split), as a string of its own: a plain `slice` would keep the whole original (an 8 MB result,
 * say) alive for as long as the prefix lives.
 */
export function cutUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  let end = Math.min(text.length, Math.max(0, maxBytes));
  for (;;) {
    if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    const piece = text.slice(0, end);
    const size = Buffer.byteLength(piece);
    if (size <= maxBytes) return end === text.length ? text : ownCopy(piece);
    // Shrink in proportion to the overshoot: a few rounds even for text of 3-byte characters.
    end = Math.min(end - 1, Math.floor((end * maxBytes) / size));
  }
}

/** A flat copy of `text` that shares no memory with the string it was sliced from (lone surrogates kept). */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** What `sanitizeServerText` made of a server's text. */
export interface SanitizedText {
  /** The text with escapes, control and invisible characters removed; cut (marker included) if asked. */
  text: string;
  /** Why the text reads like instructions to a model, in plain words; empty when it does not. */
  flags: string[];
  /** Set when the text was cut: UTF-8 bytes kept and the clean text's whole length. */
  truncated: { keptBytes: number; totalBytes: number } | null;
}

/**
 * The one sanitizer for a server's text: strips escapes, control, bidi and zero-width characters;
 * with `maxBytes`, cuts the text to that many UTF-8 bytes and ends it with a visible
 * "[truncated: N of M bytes]" marker; with `flag`, says why it reads like instructions.
 *
 * Why one function: every path that shows or forwards server text (results, descriptions,
 * instructions, errors, elicitation questions) must clean it the same way.
 */
export function sanitizeServerText(text: string, options: { maxBytes?: number; flag?: boolean } = {}): SanitizedText {
  const clean = sanitizeForDisplay(text);
  const flags = options.flag ? instructionReasons(clean) : [];
  const max = options.maxBytes;
  if (max === undefined || clean.length * 3 <= max) return { text: clean, flags, truncated: null };
  const totalBytes = Buffer.byteLength(clean);
  if (totalBytes <= max) return { text: clean, flags, truncated: null };
  const kept = cutUtf8(clean, max);
  const keptBytes = Buffer.byteLength(kept);
  return { text: `${kept}\n${truncationMarker(keptBytes, totalBytes)}`, flags, truncated: { keptBytes, totalBytes } };
}
