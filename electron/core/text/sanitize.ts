/**
 * The one sanitizer for text that comes from MCP servers: tool results, descriptions, titles,
 * instructions, error messages, progress and log lines, elicitation questions, and every string
 * inside a tool's schemas.
 *
 * Everything a server sends is untrusted. Terminal escape sequences can hide text, rewrite what a
 * log viewer shows or set window titles; bidi overrides, zero-width characters, Unicode tags and
 * variation selectors can make text read differently from what it is, or carry text no one sees
 * ("ASCII smuggling"). `sanitizeForDisplay` removes all of those and keeps only printable text,
 * newlines and tabs; `sanitizeServerText` does the same, caps the text with a visible marker where
 * asked, and says in plain words why the text reads like instructions to a model (reading the
 * hidden text too, before it is removed). `sanitizeJsonText` applies the same to every string of
 * a JSON value (a schema, arguments) at any depth. Every path that shows or forwards server text goes through one of them.
 *
 * Every expression here runs on text an attacker chose, up to the size of a whole tool result, on
 * the main thread: each is written to take time linear in the text (no unbounded run that can
 * retry from every position).
 */
import { INVISIBLE_CLASS } from '../../../shared/display';

/* eslint-disable no-control-regex, no-misleading-character-class -- matching control, combining and invisible characters one by one is the point of this file */
// CSI: ESC [ params intermediates final; also the 8-bit CSI (0x9b).
const CSI = /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]/g;
// OSC / DCS / SOS / PM / APC strings, terminated by BEL or ST (ESC \ or 0x9c), or unterminated to the end.
const STRING_SEQ = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)/g;
// Any other two-character escape (ESC followed by one byte), e.g. ESC 7, ESC c.
const OTHER_ESC = /\x1b[\s\S]?/g;
// Line breaks other than LF and CR (VT, FF, NEL, the line and paragraph separators): each becomes
// a plain newline, so the words stay apart and a one-line form sees every break as one.
const OTHER_LINE_BREAK = /[\x0b\x0c\x85\u2028\u2029]/g;
// C0 controls except tab and newline, DEL, and C1 controls.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
// Bidi controls, zero-width and other invisible format characters, Unicode tags, variation selectors.
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]`, 'gu');
// Tag characters that spell printable ASCII (U+E0020–E007E): the hidden text of "ASCII smuggling".
const TAG_ASCII = /[\u{e0020}-\u{e007e}]/gu;
// Characters that only ever carry hidden text: Unicode tags and the variation selectors supplement.
const SMUGGLING = /[\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/u;

/**
 * Returns `text` with ANSI/VT escape sequences, control characters, bidi controls, zero-width
 * characters, Unicode tags and variation selectors removed; newlines and tabs are kept, CRLF and
 * every other line break (VT, FF, NEL, U+2028, U+2029) become LF, a lone CR is dropped.
 *
 * Why: a server's text is shown in the UI and logs and must look exactly like what it is.
 */
export function sanitizeForDisplay(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(OTHER_LINE_BREAK, '\n')
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

/** The reason given for text hidden in invisible characters. */
export const HIDDEN_TEXT_WORDS = 'hides text in invisible characters';

/**
 * The one detector: why a server's raw `text` reads like instructions to a model, in plain words
 * (empty: it does not). The patterns are read on the cleaned text and on any text hidden in
 * Unicode tag characters (decoded back to the ASCII they spell), and hidden text is itself a
 * reason: a description or result has no honest use for characters no one can see.
 *
 * Why raw text: the hidden orders are gone once the text is cleaned, and a detector that only
 * ever sees clean text would let them through unflagged.
 */
export function instructionFlags(text: string): string[] {
  return reasonsFor(text, sanitizeForDisplay(text));
}

/** `instructionFlags` for text already cleaned once (`clean` is `sanitizeForDisplay(text)`). */
function reasonsFor(text: string, clean: string): string[] {
  const hidden = SMUGGLING.test(text);
  const smuggled = hidden ? (text.match(TAG_ASCII) ?? []).map((c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000)).join('') : '';
  const reasons = INSTRUCTION_PATTERNS.filter((p) => p.pattern.test(clean) || (smuggled !== '' && p.pattern.test(smuggled))).map((p) => p.words);
  return hidden ? [HIDDEN_TEXT_WORDS, ...reasons] : reasons;
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
  const flags = options.flag ? reasonsFor(text, clean) : [];
  const max = options.maxBytes;
  if (max === undefined || clean.length * 3 <= max) return { text: clean, flags, truncated: null };
  const totalBytes = Buffer.byteLength(clean);
  if (totalBytes <= max) return { text: clean, flags, truncated: null };
  const kept = cutUtf8(clean, max);
  const keptBytes = Buffer.byteLength(kept);
  return { text: `${kept}\n${truncationMarker(keptBytes, totalBytes)}`, flags, truncated: { keptBytes, totalBytes } };
}

/** Deeper than this, a schema's content is replaced by a note (no honest schema nests this far). */
const MAX_SCHEMA_DEPTH = 64;
/** The most UTF-8 bytes of one string inside a schema that are kept (a visible marker ends a cut one). */
const MAX_SCHEMA_STRING_BYTES = 16 * 1024;

/**
 * A JSON value from outside (a tool's input or output schema, a model's tool-call arguments) with
 * every string in it, at any depth and keys included, through the sanitizer: descriptions,
 * titles, enum values, defaults, examples, everything. A key that is empty or taken once cleaned is dropped (the first keeps its
 * place). With `mark`, each string value that reads like instructions is handed to it with its
 * reasons, and what it returns is used instead (a model gets such text marked as untrusted).
 *
 * Why every string and not a list of known fields: JSON Schema lets a server put text in places
 * no list keeps up with (`x-` fields, `$comment`, `examples` inside `items` inside `anyOf`), and
 * a model reads all of it.
 */
export function sanitizeJsonText(value: unknown, mark?: (clean: string, reasons: string[]) => string, depth = 0): unknown {
  if (typeof value === 'string') {
    const clean = sanitizeServerText(value, { maxBytes: MAX_SCHEMA_STRING_BYTES, flag: mark !== undefined });
    return mark && clean.flags.length > 0 ? mark(clean.text, clean.flags) : clean.text;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_SCHEMA_DEPTH) return `[nested deeper than ${MAX_SCHEMA_DEPTH} levels: not shown]`;
  if (Array.isArray(value)) return value.map((v) => sanitizeJsonText(v, mark, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const cleanKey = sanitizeForDisplay(key).replace(/\s+/g, ' ').trim();
    if (cleanKey === '' || Object.prototype.hasOwnProperty.call(out, cleanKey)) continue;
    // Defined, not assigned: a key named __proto__ must stay a key.
    Object.defineProperty(out, cleanKey, { value: sanitizeJsonText(v, mark, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
