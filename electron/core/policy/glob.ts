/**
 * Globs of `matches` constraints, matched in time linear in the argument.
 *
 * A glob library that compiles to a JavaScript RegExp backtracks: with picomatch,
 * `*a*a*a*a*a*a*a*a*c` against 64 "a" took 28 s on the main process, and rules can be written by
 * the renderer (tightening needs no dialog). Globs are translated here to a regular language and
 * run by the same linear-time engine as server schemas (electron/core/validation/linear-regexp).
 *
 * Syntax (the familiar picomatch subset, dotfiles included):
 *   `*` any characters except `/` (a segment that is only `*` needs at least one);
 *   `**` as a whole segment: any number of segments, none included;
 *   `?` one character except `/`;  `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` one character of (not of) a set;
 *   `{a,b}` either alternative (may nest);  `\x` the character x;  a leading `!` negates the glob.
 * Wildcards never match a `.` or `..` segment (a glob that names one literally can).
 */
import { compileLinear, UnsafePatternError } from '../validation/linear-regexp';

/** Most alternatives one glob may expand to through its braces. */
const MAX_ALTERNATIVES = 256;

/** A compiled glob: `test` is whole-string, linear in the input. */
export interface GlobMatcher {
  test(value: string): boolean;
}

/** Compiles a glob. Throws UnsafePatternError for a glob too large to evaluate. */
export function compileGlob(glob: string): GlobMatcher {
  const negated = glob.startsWith('!') && !glob.startsWith('!(');
  const body = negated ? glob.slice(1) : glob;
  const alternatives = expandBraces(body, glob);
  const plain = alternatives.filter((a) => !hasDotSegment(a));
  const dotted = alternatives.filter((a) => hasDotSegment(a));
  const compile = (alts: string[]) => (alts.length === 0 ? null : compileLinear(`^(?:${alts.map(globToPattern).join('|')})$`));
  const forPlain = compile(plain);
  // Only a glob that names a `.` or `..` segment itself may match a value that has one.
  const forDotted = compile(dotted);
  const matches = (value: string): boolean => {
    if (hasDotSegment(value)) return forDotted !== null && forDotted.test(value);
    return (forPlain !== null && forPlain.test(value)) || (forDotted !== null && forDotted.test(value));
  };
  return { test: (value) => matches(value) !== negated };
}

function hasDotSegment(s: string): boolean {
  return /(^|\/)\.{1,2}(\/|$)/.test(s);
}

/** Expands `{a,b}` alternatives (nested too); a brace with no top-level comma is literal. */
function expandBraces(glob: string, whole: string): string[] {
  const open = findBrace(glob);
  if (!open) return [glob];
  const { start, end, options } = open;
  const out: string[] = [];
  for (const option of options) {
    for (const expanded of expandBraces(glob.slice(0, start) + option + glob.slice(end + 1), whole)) {
      out.push(expanded);
      if (out.length > MAX_ALTERNATIVES) throw new UnsafePatternError(whole, `expands to more than ${MAX_ALTERNATIVES} alternatives`);
    }
  }
  return out;
}

/** The first brace group with a top-level comma: its span and options. */
function findBrace(glob: string): { start: number; end: number; options: string[] } | null {
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '\\') {
      i++;
      continue;
    }
    if (glob[i] !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = i; j < glob.length; j++) {
      const c = glob[j];
      if (c === '\\') {
        j++;
        continue;
      }
      if (c === '{') depth++;
      else if (c === ',' && depth === 1) commas.push(j);
      else if (c === '}' && --depth === 0) {
        if (commas.length === 0) break;
        const cuts = [i, ...commas, j];
        const options = cuts.slice(0, -1).map((from, k) => glob.slice(from + 1, cuts[k + 1]));
        return { start: i, end: j, options };
      }
    }
  }
  return null;
}

/** One brace-free glob as an ECMAScript pattern (no lookaround, no backreference). */
function globToPattern(glob: string): string {
  // Consecutive globstars mean what one does.
  const segments = glob.split('/').filter((seg, i, all) => !(seg === '**' && all[i - 1] === '**'));
  if (segments.length === 1 && segments[0] === '**') return '.*';
  let out = '';
  let needSeparator = false;
  segments.forEach((segment, i) => {
    if (segment === '**') {
      // Last: "a/**" is a and everything below it. First: any leading segments, the empty one
      // before an absolute path's first "/" included, so "**/.ssh/**" names /home/me/.ssh/id_rsa
      // as it does in every glob library. Otherwise zero or more whole segments, each with the
      // separator after it.
      if (i === segments.length - 1) out += '(?:/.*)?';
      else if (i === 0) out += '(?:[^/]*/)*';
      else out += `${needSeparator ? '/' : ''}(?:[^/]+/)*`;
      needSeparator = false;
      return;
    }
    if (needSeparator) out += '/';
    out += segment === '*' ? '[^/]+' : segmentToPattern(segment);
    needSeparator = true;
  });
  return out;
}

function segmentToPattern(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '\\' && i + 1 < segment.length) {
      out += literal(segment[++i]!);
    } else if (c === '*') {
      while (segment[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = classEnd(segment, i);
      if (end === -1) {
        out += literal(c);
        continue;
      }
      let body = segment.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      const members = [...body].map((m) => (m === '-' ? '-' : literal(m))).join('');
      out += negate ? `[^/${members}]` : `[${members}]`;
      i = end;
    } else {
      out += literal(c);
    }
  }
  return out;
}

/** Index of the `]` closing the class opened at `start`, or -1 (a `]` right after `[` or `[!` is a member). */
function classEnd(segment: string, start: number): number {
  let j = start + 1;
  if (segment[j] === '!' || segment[j] === '^') j++;
  if (segment[j] === ']') j++;
  for (; j < segment.length; j++) if (segment[j] === ']') return j;
  return -1;
}

function literal(c: string): string {
  return /[A-Za-z0-9]/.test(c) ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`;
}
