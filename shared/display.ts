/**
 * Which characters hide text, and how a dialog shows them.
 *
 * Text that a person must read exactly (approval and confirmation dialogs): characters that
 * display as nothing or reorder what follows (control characters, bidi overrides, zero-width and
 * invisible marks, Unicode tags, variation selectors, line and paragraph separators) are shown as
 * `\uXXXX` escapes instead, so `report\u202Egpj.sh` cannot pass for `reporths.jpg`. The same list
 * of invisible characters is what the core's sanitizer (electron/core/text/sanitize.ts) removes
 * from a server's text, so the two can never disagree about what counts as hidden.
 */

/**
 * Characters that display as nothing or change how what follows reads, as the body of a regular
 * expression character class (use it with the `u` flag): the soft hyphen, the combining grapheme
 * joiner, the Arabic letter mark, Hangul and Khmer fillers, Mongolian variation selectors, the
 * zero-width and direction marks, bidi embeddings, overrides and isolates, the word joiner and
 * invisible operators, variation selectors, the byte order mark, interlinear annotation marks,
 * Unicode tag characters (U+E0000–E007F: "ASCII smuggling" spells text in them that no font
 * shows) and the variation selectors supplement (used to hide bytes after a visible character).
 */
export const INVISIBLE_CLASS =
  '\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb\\u{e0000}-\\u{e007f}\\u{e0100}-\\u{e01ef}';

/** Every character that starts a new line somewhere: LF, CR, VT, FF, NEL, the line and paragraph separators. */
export const LINE_BREAK_CLASS = '\\n\\r\\v\\f\\u0085\\u2028\\u2029';

// eslint-disable-next-line no-misleading-character-class -- each invisible or combining character is matched on its own, on purpose
const HIDDEN = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029${INVISIBLE_CLASS}]`, 'gu');
const BREAKS_AND_SPACE = new RegExp(`[\\s${LINE_BREAK_CLASS}]+`, 'gu');

/** Replaces hidden and direction-changing characters with visible `\uXXXX` (or `\u{XXXXX}`) escapes; tabs and newlines stay. */
export function makeHiddenVisible(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * A name a server chose (a tool, a field, a prompt argument, a template variable) as it may be
 * shown and used: every hidden character, line break and tab is written as an escape, so a name
 * can neither pass for another (`report\u202Egpj.sh`) nor print a line of its own. Names without
 * such characters are returned as they are.
 */
export function visibleName(text: string): string {
  return makeHiddenVisible(text).replace(/[\n\t]/g, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/**
 * A one-line field of a native dialog (a name, a label, a title, a server's message): every kind
 * of line break and run of white space becomes one space, then hidden characters are shown as
 * escapes. Why every kind: a message box breaks lines at LF, CR, U+2028 and U+2029 alike, so text
 * that keeps any of them can print a line of its own ("Tool: safe") below the real ones.
 */
export function dialogLine(text: string): string {
  return makeHiddenVisible(text.replace(BREAKS_AND_SPACE, ' ').trim());
}
