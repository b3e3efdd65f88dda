import { describe, expect, test } from 'vitest';
import { compileNameGlob, compilePathGlob, compileRegex, PATTERN_LIMITS, pathGlobProblem, PatternError } from '../../../src/patterns/patterns.ts';

/**
 * The one compiler of user-supplied patterns. Path globs keep the meaning
 * picomatch gave them on secret paths (Infisical's `$glob`, and event
 * subscriptions until now): each row below was checked against picomatch 4.0.7
 * (`isMatch(path, glob, { strictSlashes: false })`) on the normalised paths here.
 */
const PATHS = ['/', '/app', '/app/db', '/app/db/x', '/apps', '/ops', '/a', '/ab', '/app-1', '/x/app', '/x/y/app', '/APP', '/db', '/x/db', '/1', '/b', '/app/x', '/A_1'];

const PATH_TABLE: [string, string[]][] = [
  ['/', ['/']],
  ['/**', PATHS],
  ['**', PATHS],
  ['*', ['/']],
  ['/*', ['/app', '/apps', '/ops', '/a', '/ab', '/app-1', '/APP', '/db', '/1', '/b', '/A_1']],
  ['/app', ['/app']],
  ['/app/', []],
  ['/app/**', ['/app', '/app/db', '/app/db/x', '/app/x']],
  ['/app/*', ['/app/db', '/app/x']],
  ['/app*', ['/app', '/apps', '/app-1']],
  ['/app/**/x', ['/app/db/x', '/app/x']],
  ['/**/app', ['/x/app', '/x/y/app']],
  ['/**/db', ['/app/db', '/x/db']],
  ['**/db', ['/app/db', '/db', '/x/db']],
  ['/*/db', ['/app/db', '/x/db']],
  ['/a*/**', ['/app/db', '/app/db/x', '/app/x']],
  ['/**/*', ['/app/db', '/app/db/x', '/x/app', '/x/y/app', '/x/db', '/app/x']],
  ['/app/**/**', ['/app', '/app/db', '/app/db/x', '/app/x']],
  ['/?', ['/a', '/1', '/b']],
  ['/a?', ['/ab']],
  ['/[ab]', ['/a', '/b']],
  ['/[^a]*', ['/ops', '/APP', '/db', '/1', '/b', '/A_1']],
  ['/[a-c]*', ['/app', '/apps', '/a', '/ab', '/app-1', '/b']],
  ['/[[:digit:]]', ['/1']],
  ['/[A-Z]_[0-9]', ['/A_1']],
  ['/{app,ops}', ['/app', '/ops']],
  ['/{app,ops}/**', ['/app', '/app/db', '/app/db/x', '/ops', '/app/x']],
  ['/app{,/**}', ['/app', '/app/db', '/app/db/x', '/app/x']],
  ['/app/{db,**}', ['/app/db', '/app/db/x', '/app/x']],
  ['/{a,b{c,d}}', ['/a']],
  ['/@(app|ops)', ['/app', '/ops']],
  ['/+(a|b)', ['/a', '/ab', '/b']],
  ['/*(a|b)', ['/', '/a', '/ab', '/b']],
  ['/?(a|b)', ['/', '/a', '/b']],
  ['!/app', PATHS.filter((path) => path !== '/app')],
  ['!!/app', ['/app']],
  ['app/**', []],
  ['/app\\*', []],
];

describe('path globs (role conditions, event subscriptions)', () => {
  test.each(PATH_TABLE)('%s matches what picomatch matched', (glob, matching) => {
    const pattern = compilePathGlob(glob);
    expect(PATHS.filter((path) => pattern.matches(path))).toEqual(matching);
  });

  test('a plain path is not a glob; a glob knows the folders before its first wildcard', () => {
    expect(compilePathGlob('/app/db')).toMatchObject({ isGlob: false, base: '/app/db' });
    expect(compilePathGlob('/app/**')).toMatchObject({ isGlob: true, base: '/app' });
    expect(compilePathGlob('/app/d*/x')).toMatchObject({ isGlob: true, base: '/app' });
    expect(compilePathGlob('/{a,b}/x')).toMatchObject({ isGlob: true, base: '' });
    expect(compilePathGlob('!/app')).toMatchObject({ isGlob: true, base: '' });
  });

  test.each([
    ['/!(app)', /'!\(…\)'/],
    ['/[!a]*', /'\[!'/],
    ['/v{1..3}', /brace range/],
    ['/{app}', /without a ','/],
    ['/(app|ops)', /outside an extglob/],
    ['/a|b', /outside an extglob/],
    ['/a}', /without an opening/],
    ['/{a,b', /without a closing/],
    ['/@(a|b', /without a closing/],
    ['/[ab', /without a closing/],
    ['/[a/b]', /inside a \[…\] class/],
    ['/[[:nope:]]', /unknown/],
    ['/[z-a]', /does not compile/],
    ['/**{a,b}', /directly before a group/],
    ['/a\\', /lone/],
  ])('%s is refused with the reason, not given another meaning', (glob, reason) => {
    expect(() => compilePathGlob(glob)).toThrow(reason);
    expect(pathGlobProblem(glob)).toMatch(reason);
  });
});

describe('bounds', () => {
  const hostile = (repetitions: number) => `${'/**/@(*|*)'.repeat(repetitions)}!`;

  test('the backtracking subscription glob of issue 26 is answered at once up to the wildcard bound and refused beyond', () => {
    // 8 and 9 repetitions held picomatch's regex 4.9 s and 40 s on one path; RE2 answers in one pass
    for (const repetitions of [8, 9]) {
      const pattern = compilePathGlob(hostile(repetitions));
      expect(pattern.matches(`/${'a/'.repeat(40)}b`)).toBe(false);
      expect(pattern.matches(`${'/x'.repeat(repetitions + 1)}!`)).toBe(true);
    }
    for (const repetitions of [12, 100]) expect(() => compilePathGlob(hostile(repetitions))).toThrow(`more than ${PATTERN_LIMITS.maxWildcards} wildcards`);
  });

  test('length, wildcards, alternatives and nesting are bounded; each refusal is a 422 naming the reason and not the pattern', () => {
    const cases: [string, RegExp][] = [
      [`/${'a'.repeat(PATTERN_LIMITS.maxLength)}`, /longer than 4096 characters/],
      ['/*'.repeat(PATTERN_LIMITS.maxWildcards + 1), /more than 32 wildcards/],
      [`/{${Array.from({ length: PATTERN_LIMITS.maxAlternatives + 1 }, (_, index) => `a${index}`).join(',')}}`, /more than 64 alternatives/],
      ['/{a,{b,{c,{d,e}}}}', /nests groups more than 3 deep/],
    ];
    for (const [glob, reason] of cases) {
      let caught: unknown;
      try {
        compilePathGlob(glob);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PatternError);
      expect(caught).toMatchObject({ statusCode: 422, error: 'ValidationFailure', message: expect.stringMatching(reason) });
      expect((caught as Error).message).not.toContain(glob);
    }
    expect(compilePathGlob(`/${'a'.repeat(PATTERN_LIMITS.maxLength - 1)}`).matches(`/${'a'.repeat(PATTERN_LIMITS.maxLength - 1)}`)).toBe(true);
  });

  test('matching is linear by construction (RE2): the worst bounded glob against the longest path answers in one pass', () => {
    // every bound at once: a backtracking engine would take longer than the test timeout on these
    const glob = `/${'*a'.repeat(PATTERN_LIMITS.maxWildcards - 1)}*b`;
    expect(compilePathGlob(glob).matches(`/${'a'.repeat(4000)}`)).toBe(false);
    expect(compileNameGlob(`${'*a'.repeat(31)}*b`).matches('a'.repeat(100_000))).toBe(false);
    expect(new RegExp(`^${'.*a'.repeat(3)}.*b$`).test('a'.repeat(50))).toBe(false);
  });
});

describe('key-name globs (Integration key selection)', () => {
  test.each([
    ['DB_*', ['DB_HOST', 'DB_', 'DB_a.b/c'], ['db_HOST', 'XDB_HOST', 'DB']],
    ['*_URL', ['API_URL', '_URL'], ['API_URL_2']],
    ['?_KEY', ['A_KEY'], ['AB_KEY', '_KEY']],
    ['[AB]_*', ['A_1', 'B_2'], ['C_3']],
    ['[!AB]_*', ['C_3'], ['A_1']],
    ['[a-c]x', ['bx'], ['dx']],
    ['{API,WEB}_TOKEN', ['API_TOKEN', 'WEB_TOKEN'], ['DB_TOKEN', 'API,WEB_TOKEN']],
    ['a.b', ['a.b'], ['axb']],
    ['\\*literal', ['*literal'], ['xliteral']],
    ['x+(y)|z$^', ['x+(y)|z$^'], ['xy']],
  ])('glob %s matches whole names only', (glob, matching, notMatching) => {
    const pattern = compileNameGlob(glob);
    for (const name of matching) expect(pattern.matches(name), name).toBe(true);
    for (const name of notMatching) expect(pattern.matches(name), name).toBe(false);
  });

  test('unbalanced classes and braces, and patterns past the bounds, are refused', () => {
    expect(() => compileNameGlob('[AB')).toThrow(/without a closing/);
    expect(() => compileNameGlob('{A,B')).toThrow(/without a closing/);
    expect(() => compileNameGlob('[z-a]')).toThrow(PatternError);
    expect(() => compileNameGlob('*'.repeat(1) + '?'.repeat(32))).toThrow(/more than 32 wildcards/);
    expect(() => compileNameGlob('{a,{b,{c,{d,e}}}}')).toThrow(/nests groups/);
  });
});

describe('regular expressions (key rename rewrites)', () => {
  test('RE2 syntax compiles; backreferences, lookaround and oversized programs are refused', () => {
    expect(compileRegex('^DB_(\\w+)$').matcher('DB_HOST').replaceAll('$1', true)).toBe('HOST');
    expect(() => compileRegex('(a)\\1')).toThrow(PatternError);
    expect(() => compileRegex('(?=a)')).toThrow(PatternError);
    expect(() => compileRegex('(a{1000}){1000}')).toThrow(PatternError);
    expect(() => compileRegex(`(?:${'a'.repeat(250)}){1000}`)).toThrow(/repeats too much/);
    expect(compileRegex('^\\d{4}-\\d{2}-[a-z]{1,63}$').matches('2026-11-xyz')).toBe(true);
    expect(() => compileRegex('a'.repeat(PATTERN_LIMITS.maxLength + 1))).toThrow(/longer than/);
  });

  test('a regex that backtracks exponentially in JavaScript answers at once', () => {
    expect(compileRegex('^(a+)+$').matches(`${'a'.repeat(10_000)}!`)).toBe(false);
  });
});
