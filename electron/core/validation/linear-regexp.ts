/**
 * Regular expressions from servers and from rules, evaluated in time linear in the input.
 *
 * JavaScript's engine backtracks: a server's inputSchema `pattern: "^(a+)+$"` takes time that
 * doubles with each character of an argument, and it runs on the main process, so one hostile
 * tool froze everything. Every pattern Warden evaluates on someone else's behalf goes through
 * here instead: it is parsed as the ECMAScript pattern it claims to be (@eslint-community/regexpp,
 * the parser ESLint uses), translated to the same language in RE2 syntax with JavaScript's meaning
 * spelled out (`.`, `\s`, `\w`, `\d` as JavaScript defines them), and run by re2js, a pure
 * JavaScript port of RE2 (an automaton, never backtracking). Pure JavaScript, so nothing has to be
 * rebuilt for Electron or compiled from source in CI.
 *
 * What an automaton cannot do (backreferences, lookahead, lookbehind) is refused with
 * `UnsafePatternError`, and the caller fails closed, naming the pattern.
 */
import { RegExpParser, type AST } from '@eslint-community/regexpp';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types';
import { RE2JS } from 're2js';

/** A pattern that cannot be evaluated in linear time (or is not a valid pattern at all). */
export class UnsafePatternError extends Error {
  readonly code = 'UNSAFE_PATTERN' as const;
  constructor(
    readonly pattern: string,
    /** What is wrong, as the end of a sentence: "uses a backreference (\\1), which ...". */
    readonly why: string,
  ) {
    super(`the pattern ${JSON.stringify(pattern)} ${why}`);
    this.name = 'UnsafePatternError';
  }
}

/** A compiled pattern: JavaScript `RegExp#test` semantics (found anywhere in the input). */
export interface LinearRegExp extends RegExpLike {
  readonly source: string;
  test(input: string): boolean;
  /** True if the whole input matches (for globs). */
  testExact(input: string): boolean;
  /** `/source/u`: ajv keys compiled patterns by it. */
  toString(): string;
}

const LINEAR_WHY = 'which Warden cannot evaluate in linear time';

/** Compiled patterns by source: tools list the same schemas again on every re-list. */
const compiled = new Map<string, LinearRegExp>();
const MAX_CACHED = 2_000;

/**
 * Compiles an ECMAScript pattern (unicode mode, as JSON Schema and ajv use) for linear-time matching.
 *
 * Throws UnsafePatternError for a pattern that is invalid, uses a backreference or lookaround, or is
 * too large for the automaton (RE2 caps counted repetition at 1000).
 */
export function compileLinear(source: string): LinearRegExp {
  const hit = compiled.get(source);
  if (hit) return hit;
  const re2Source = translate(source);
  let re: RE2JS;
  try {
    re = RE2JS.compile(re2Source);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new UnsafePatternError(source, `is not supported by Warden's linear-time engine (${detail})`);
  }
  const linear: LinearRegExp = {
    source,
    test: (input) => re.test(input),
    testExact: (input) => re.testExact(input),
    // ajv keys its compiled patterns by this string: it must differ between patterns.
    toString: () => `/${source}/u`,
  };
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(source, linear);
  return linear;
}

/**
 * The ajv `code.regExp` engine: every `pattern`, `patternProperties` key and format pattern of a
 * schema compiled with it runs in linear time.
 */
export const linearRegExpEngine: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    if (flags !== '' && flags !== 'u') throw new UnsafePatternError(pattern, `was asked for with flags "${flags}", which Warden does not evaluate`);
    return compileLinear(pattern);
  },
  // Only read by ajv's standalone code generation, which Warden does not use.
  { code: 'linearRegExpEngine' },
);

// ---- ECMAScript pattern → RE2 syntax ----------------------------------------------------------

const parser = new RegExpParser({ ecmaVersion: 2025 });

/** RE2 syntax for an ECMAScript pattern, with JavaScript's meaning. Throws UnsafePatternError. */
export function translate(source: string): string {
  let pattern: AST.Pattern;
  try {
    pattern = parser.parsePattern(source, 0, source.length, { unicode: true });
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : String(error);
    throw new UnsafePatternError(source, `is not a valid regular expression (${detail})`);
  }
  return alternatives(pattern.alternatives, source);
}

function alternatives(alts: readonly AST.Alternative[], source: string): string {
  return alts.map((a) => a.elements.map((e) => element(e, source)).join('')).join('|');
}

function element(node: AST.Element, source: string): string {
  switch (node.type) {
    case 'Character':
      return char(node.value);
    case 'CharacterSet':
      return characterSet(node, source);
    case 'CharacterClass':
      return characterClass(node, source);
    case 'ExpressionCharacterClass':
      throw new UnsafePatternError(source, `uses a class set expression (${node.raw}), which Warden does not evaluate`);
    case 'CapturingGroup':
      return `(?:${alternatives(node.alternatives, source)})`;
    case 'Group':
      if (node.modifiers) throw new UnsafePatternError(source, `uses inline modifiers (${node.raw.slice(0, 40)}), which Warden does not evaluate`);
      return `(?:${alternatives(node.alternatives, source)})`;
    case 'Quantifier':
      return quantifier(node, source);
    case 'Backreference':
      throw new UnsafePatternError(source, `uses a backreference (${node.raw}), ${LINEAR_WHY}`);
    case 'Assertion':
      switch (node.kind) {
        // Without the m flag both mean the ends of the whole input, in JavaScript and in RE2.
        case 'start':
          return '^';
        case 'end':
          return '$';
        // JavaScript's \b without the i flag uses the ASCII word characters, as RE2's does.
        case 'word':
          return node.negate ? '\\B' : '\\b';
        case 'lookahead':
        case 'lookbehind':
          throw new UnsafePatternError(source, `uses a ${node.kind} assertion (${node.raw.slice(0, 40)}), ${LINEAR_WHY}`);
      }
  }
  throw new UnsafePatternError(source, 'uses syntax Warden does not evaluate');
}

function quantifier(node: AST.Quantifier, source: string): string {
  const atom = element(node.element, source);
  const lazy = node.greedy ? '' : '?';
  const { min, max } = node;
  if (min > 1000 || (max !== Infinity && max > 1000)) {
    throw new UnsafePatternError(source, `repeats ${node.raw.slice(0, 40)} more than 1000 times, more than Warden's linear-time engine allows`);
  }
  if (min === 0 && max === Infinity) return `${atom}*${lazy}`;
  if (min === 1 && max === Infinity) return `${atom}+${lazy}`;
  if (min === 0 && max === 1) return `${atom}?${lazy}`;
  if (max === Infinity) return `${atom}{${min},}${lazy}`;
  if (min === max) return `${atom}{${min}}${lazy}`;
  return `${atom}{${min},${max}}${lazy}`;
}

/** One code point, written so that RE2 reads it as exactly that character. */
function char(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) return String.fromCodePoint(cp);
  return `\\x{${cp.toString(16)}}`;
}

type Range = readonly [number, number];

const MAX_CP = 0x10ffff;
const DIGIT: Range[] = [[0x30, 0x39]];
const WORD: Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** ECMAScript WhiteSpace and LineTerminator: what `\s` means in JavaScript (wider than RE2's). */
const SPACE: Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
/** What `.` excludes in JavaScript without the s flag (RE2's `.` excludes only \n). */
const LINE_TERMINATORS: Range[] = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

function rangesText(ranges: readonly Range[]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? char(lo) : `${char(lo)}-${char(hi)}`)).join('');
}

/** Class contents for an escape set (`\d`, `\S`, ...), or a property escape in RE2's words. */
function setContents(node: AST.CharacterSet, source: string): string {
  switch (node.kind) {
    case 'digit':
      return rangesText(node.negate ? complement(DIGIT) : DIGIT);
    case 'word':
      return rangesText(node.negate ? complement(WORD) : WORD);
    case 'space':
      return rangesText(node.negate ? complement(SPACE) : SPACE);
    case 'property': {
      if (node.strings) throw new UnsafePatternError(source, `uses a property of strings (${node.raw}), which Warden does not evaluate`);
      const key = node.key;
      // General categories and scripts are what RE2 knows; RE2 rejects the names it does not.
      const name = node.value === null ? key : key === 'General_Category' || key === 'gc' || key === 'Script' || key === 'sc' ? node.value : null;
      if (name === null) throw new UnsafePatternError(source, `uses the Unicode property ${node.raw}, which Warden's linear-time engine does not know`);
      return `\\${node.negate ? 'P' : 'p'}{${name}}`;
    }
    case 'any':
      return rangesText(complement(LINE_TERMINATORS));
  }
}

function characterSet(node: AST.CharacterSet, source: string): string {
  return `[${setContents(node, source)}]`;
}

function characterClass(node: AST.CharacterClass, source: string): string {
  if (node.unicodeSets) throw new UnsafePatternError(source, `uses a unicode-sets class (${node.raw.slice(0, 40)}), which Warden does not evaluate`);
  const parts: string[] = [];
  for (const e of node.elements as AST.ClassRangesCharacterClassElement[]) {
    if (e.type === 'Character') parts.push(char(e.value));
    else if (e.type === 'CharacterClassRange') parts.push(`${char(e.min.value)}-${char(e.max.value)}`);
    else parts.push(setContents(e, source));
  }
  const body = parts.join('');
  // RE2 has no empty class: [] matches nothing, [^] any character.
  if (body === '') return node.negate ? `[${rangesText([[0, MAX_CP]])}]` : `[^${rangesText([[0, MAX_CP]])}]`;
  return `[${node.negate ? '^' : ''}${body}]`;
}
