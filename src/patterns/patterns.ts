import { RE2JS } from 're2js';
import { translateNameGlob } from './name-glob.ts';
import { translatePathGlob } from './path-glob.ts';
import { PATTERN_LIMITS, PatternError } from './pattern-limits.ts';

export { PATTERN_LIMITS, PatternError } from './pattern-limits.ts';

/**
 * The one place user-supplied patterns become matchers: role and privilege
 * `$glob` conditions, event subscriptions' path globs, and an Integration's
 * key selection (globs and rename regexes). Everything compiles to RE2
 * (re2js): no backtracking, time linear in the text matched, under the bounds
 * in PATTERN_LIMITS. No other module compiles a pattern that came from a
 * request or a resource (`npm run lint` refuses picomatch, minimatch,
 * micromatch and `RegExp(…)` elsewhere in src/).
 */
export interface Matcher {
  readonly matches: (text: string) => boolean;
}

/** A compiled secret-path glob. */
export interface PathGlob extends Matcher {
  /** False for a plain path. */
  readonly isGlob: boolean;
  /** The literal folders before the first wildcard ("" when it starts with one, or is negated). */
  readonly base: string;
}

/** A secret-path glob (picomatch's meaning on secret paths, path-glob.ts); throws PatternError. */
export function compilePathGlob(glob: string): PathGlob {
  const translated = translatePathGlob(glob);
  const pattern = compileBounded(translated.source, RE2JS.DOTALL);
  const { negated, isGlob, base } = translated;
  return { isGlob, base, matches: negated ? (path) => !pattern.matches(path) : (path) => pattern.matches(path) };
}

/** A glob over key names (name-glob.ts); throws PatternError. */
export function compileNameGlob(glob: string): Matcher {
  const pattern = compileBounded(translateNameGlob(glob), RE2JS.DOTALL);
  return { matches: (name) => pattern.matches(name) };
}

/** An RE2 regular expression (RE2 syntax: no backreferences or lookaround); throws PatternError. */
export function compileRegex(regex: string): RE2JS {
  if (regex.length > PATTERN_LIMITS.maxLength) throw new PatternError(`is longer than ${PATTERN_LIMITS.maxLength} characters`);
  // RE2 writes a counted repetition out in full when it compiles (`(?:…){1000}` is 1,000 copies): refused before the work
  const copies = [...regex.matchAll(COUNTED_REPETITION)].reduce((product, [, min, max]) => product * Math.max(1, Number(max || min)), 1);
  if (copies * regex.length > PATTERN_LIMITS.maxProgramSize) {
    throw new PatternError(`repeats too much: its length times its counted repetitions ({n,m}) is more than ${PATTERN_LIMITS.maxProgramSize}`);
  }
  return compileBounded(regex, 0);
}

/** `{n}`, `{n,}`, `{n,m}` (over-counted inside a class, which only refuses sooner). */
const COUNTED_REPETITION = /(?<!\\)\{(\d{1,7})(?:,(\d{0,7}))?\}/g;

/** Why a path glob is refused, or undefined when it compiles (for input validation). */
export function pathGlobProblem(glob: string): string | undefined {
  try {
    compilePathGlob(glob);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

function compileBounded(source: string, flags: number): RE2JS {
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(source, flags);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/:.*$/s, '') : 'unknown reason';
    throw new PatternError(`does not compile (${reason})`);
  }
  if (pattern.programSize() > PATTERN_LIMITS.maxProgramSize) {
    throw new PatternError(`compiles to more than ${PATTERN_LIMITS.maxProgramSize} instructions`);
  }
  return pattern;
}
