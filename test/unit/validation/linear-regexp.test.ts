import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileLinear, UnsafePatternError } from '../../../electron/core/validation/linear-regexp';
import { compileGlob } from '../../../electron/core/policy/glob';

/** Small ECMAScript patterns without backreferences or lookaround, built from the syntax servers use. */
const atom: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('a', 'b', '.', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '[ab]', '[^a]', '[a-c\\s]', '[\\S]', '\\u00e9', '\\n', '\\.', '\\-', '\\b', '^', '$', '\\p{L}', '[^]'),
);
const pattern: fc.Arbitrary<string> = fc.letrec<{ p: string; seq: string; item: string }>((tie) => ({
  p: fc.array(tie('seq'), { minLength: 1, maxLength: 3 }).map((alts) => alts.join('|')),
  seq: fc.array(tie('item'), { minLength: 1, maxLength: 4 }).map((items) => items.join('')),
  item: fc.oneof(
    { weight: 4, arbitrary: atom },
    { weight: 1, arbitrary: fc.tuple(tie('p'), fc.constantFrom('', '*', '+', '?', '{1,2}', '*?')).map(([inner, q]) => `(${inner})${q}`) },
  ),
})).p;
const text = fc.array(fc.constantFrom('a', 'b', 'c', '1', ' ', '\n', '\r', '\u00a0', '\u2028', 'é', '😀', '-', '.', '_'), { maxLength: 8 }).map((cs) => cs.join(''));

describe('the linear-time engine', () => {
  it('gives the same answer as JavaScript on every pattern it accepts', () => {
    fc.assert(
      fc.property(pattern, text, (p, s) => {
        let native: RegExp;
        try {
          native = new RegExp(p, 'u');
        } catch {
          return; // not a valid pattern in unicode mode: both refuse (see below)
        }
        expect(compileLinear(p).test(s), `/${p}/u on ${JSON.stringify(s)}`).toBe(native.test(s));
      }),
      { numRuns: 400 },
    );
  }, 30_000);

  it('refuses backreferences, lookaround and invalid patterns with the pattern in the message', () => {
    for (const p of ['^(a+)\\1$', '(?=a)a', '(?!a)b', '(?<=a)b', '(?<!a)b', '\\k<x>(?<x>a)', '[', '(?i:a)', 'a{1001}']) {
      expect(() => compileLinear(p), p).toThrow(UnsafePatternError);
      expect(() => compileLinear(p), p).toThrow(JSON.stringify(p));
    }
  });

  it('decides a catastrophic pattern on a million characters in linear time', () => {
    const re = compileLinear('^(a+)+$');
    const started = performance.now();
    expect(re.test('a'.repeat(1_000_000) + '!')).toBe(false);
    expect(re.test('a'.repeat(1_000_000))).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('matches globs', () => {
  const cases: Array<[string, string, boolean]> = [
    ['feature/**', 'feature/x/y', true],
    ['feature/**', 'feature', true],
    ['feature/**', 'main', false],
    ['src/**/*.ts', 'src/a/b/c.ts', true],
    ['src/**/*.ts', 'src/c.ts', true],
    ['src/**/*.ts', 'src/../etc/x.ts', false],
    ['*.md', '.md', true],
    ['*.md', 'a/b.md', false],
    ['*', '', false],
    ['release-?.?', 'release-1.2', true],
    ['v{1,2}.{x,y}', 'v2.y', true],
    ['v{1,2}.{x,y}', 'v3.y', false],
    ['{a,{b,c}}d', 'cd', true],
    ['[a-c]x', 'bx', true],
    ['[!a-c]x', 'bx', false],
    ['[!a-c]x', 'dx', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['!main', 'main', false],
    ['!main', 'dev', true],
    ['+(a|aa)', '+(a|aa)', true],
    ['/abs/**', '/abs/x/y', true],
    // A leading globstar names any leading folders, an absolute path's root included (as in
    // picomatch and minimatch): a Disabled "**/.ssh/**" must hold for /home/me/.ssh/id_rsa.
    ['**/.ssh/**', '/home/me/.ssh/id_rsa', true],
    ['**/.ssh/**', 'home/me/.ssh/id_rsa', true],
    ['**/.ssh/**', '/home/me/.ssh', true],
    ['**/*.env', '/p/x.env', true],
    ['**/*.env', '/p/.env', true],
    ['**/x', '/x', true],
    ['**/x', '/a/xy', false],
    ['**/x', '/a/../x', false],
  ];
  it.each(cases)('%s against %j is %s', (glob, value, want) => {
    expect(compileGlob(glob).test(value)).toBe(want);
  });

  it('a catastrophic glob on a long argument stays linear', () => {
    const m = compileGlob('*a*a*a*a*a*a*a*a*c');
    const started = performance.now();
    expect(m.test('a'.repeat(200_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
