/**
 * Text as a judge must read it: the form a server sends, folded so that what the person would see
 * and what is checked are the same words.
 *
 * A judge that reads the raw text is beaten by text that only looks like a word: `pass\u200bword`
 * (shown as "password" once the display drops the zero-width space), `pаssword` with a Cyrillic
 * "а", fullwidth `ｐａｓｓｗｏｒｄ`, `p a s s w o r d`. So before judging, text is NFKC-normalized
 * (fullwidth and compatibility forms become plain letters), everything the display removes is
 * removed by the display's own function (so the two can never disagree), and so are format
 * characters, unassigned code points and unpaired surrogates, which show as nothing or as a blank; common look-alike letters from Cyrillic and Greek are folded to the Latin ones they
 * imitate, accents are dropped (`contraseña` → `contrasena`), and letters spelled out one by one
 * are joined. This text is for judging only: what the person is shown is sanitized for display
 * by text/sanitize.ts and is never this folded form.
 *
 * Every expression here runs on a server's text on the main thread and takes time linear in it.
 */
import { INVISIBLE_CLASS } from '../../../shared/display';
import { sanitizeForDisplay } from '../text/sanitize';

/** Cyrillic and Greek letters that look like Latin ones, as the Latin letter they pass for. */
const CONFUSABLES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a', в: 'b', е: 'e', ё: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x', ь: 'b',
  і: 'i', ї: 'i', ј: 'j', ѕ: 's', ԁ: 'd', һ: 'h', ӏ: 'l', ԛ: 'q', ԝ: 'w', ɡ: 'g',
  А: 'A', В: 'B', Е: 'E', Ё: 'E', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', У: 'Y', Х: 'X',
  І: 'I', Ї: 'I', Ј: 'J', Ѕ: 'S', Ԁ: 'D', Һ: 'H', Ӏ: 'I', Ԛ: 'Q', Ԝ: 'W',
  // Greek
  α: 'a', β: 'b', γ: 'y', δ: 'd', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w',
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P', Τ: 'T', Υ: 'Y', Χ: 'X',
  // Latin letters that NFD does not split into letter + accent.
  ı: 'i', ł: 'l', Ł: 'L', ø: 'o', Ø: 'O', đ: 'd', Đ: 'D', ß: 'ss', æ: 'ae', Æ: 'AE', œ: 'oe', Œ: 'OE',
};
// Every letter outside ASCII is looked up; those not in the table stay as they are.
const NON_ASCII = /[\u0080-\u{10ffff}]/gu;

// What may not split a word for the judge even though the display keeps it: format characters
// (\p{Cf}), unassigned code points (\p{Cn}: no font draws them, and a later Unicode version may
// make them format characters) and unpaired surrogates. INVISIBLE_CLASS is named again so that
// text the display does not see (the NFKC form of it) is read with the same list.
const HIDDEN = `${INVISIBLE_CLASS}\\p{Cf}\\p{Cn}\\ud800-\\udfff`;
const NOT_SHOWN = new RegExp(`[${HIDDEN}]`, 'gu');
const INSIDE_WORD = new RegExp(`\\p{L}[${HIDDEN}]+\\p{L}`, 'u');
const CONTROL = /\p{Cc}/gu;
const MARKS = /\p{M}/gu;
// Three or more single letters separated by one space, dot, dash or underscore: "p a s s w o r d".
const SPELLED_OUT = /(?<![\p{L}\p{N}])\p{L}(?:[ ._-]\p{L}){3,}(?![\p{L}\p{N}])/gu;

/**
 * `text` as the judge reads it: NFKC, invisible characters removed, look-alike letters folded to
 * Latin, accents dropped, spelled-out letters joined. Case is kept (names are split at camelCase).
 */
export function foldForJudging(text: string): string {
  return visibleForJudging(text)
    .replace(NON_ASCII, (c) => CONFUSABLES[c] ?? c)
    .normalize('NFD')
    .replace(MARKS, '')
    .normalize('NFC')
    .replace(SPELLED_OUT, (run) => run.replace(/[ ._-]/g, ''));
}

/**
 * `text` with only what cannot be seen removed and compatibility forms unified, letters kept in
 * their own script: for words written in Cyrillic, Greek or other scripts, which folding to Latin
 * would break.
 */
export function visibleForJudging(text: string): string {
  return sanitizeForDisplay(text).normalize('NFKC').replace(NOT_SHOWN, '').replace(CONTROL, ' ');
}

/** True if `text` hides something from the reader: an invisible character, or a word mixing Latin with look-alike letters of another script. */
export function disguisedText(text: string): 'invisible' | 'mixed-script' | null {
  const nfkc = text.normalize('NFKC');
  // Only inside a word: a zero-width joiner in an emoji sequence hides nothing.
  if (INSIDE_WORD.test(nfkc)) return 'invisible';
  for (const word of nfkc.split(/[^\p{L}]+/u)) {
    if (/\p{Script=Latin}/u.test(word) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(word)) return 'mixed-script';
  }
  return null;
}
