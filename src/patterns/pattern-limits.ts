import { AppError } from '../errors.ts';

/**
 * The bounds every user-supplied pattern is held to (README "Patterns"). RE2
 * matches in time linear in the text; these keep the work per character (the
 * size of the compiled program and the threads alive in it) small, whoever
 * wrote the pattern.
 */
export const PATTERN_LIMITS = {
  /** Characters in one pattern: a secret path's own bound, so any literal path is a valid glob. */
  maxLength: 4096,
  /** `*`, `**`, `?` and `[…]`, each counted once. */
  maxWildcards: 32,
  /** Alternatives across all `{a,b}` and `@(a|b)` groups of one pattern. */
  maxAlternatives: 64,
  /** Groups inside groups. */
  maxGroupDepth: 3,
  /** Instructions in the compiled RE2 program (a backstop for what the counts above do not see). */
  maxProgramSize: 20_000,
} as const;

/** A pattern that does not compile or breaks a bound (422); the message names the reason, never the pattern. */
export class PatternError extends AppError {
  readonly reason: string;

  /** `reason` continues "the pattern …": "has more than 32 wildcards". */
  constructor(reason: string) {
    super(422, 'ValidationFailure', `the pattern ${reason}`);
    this.reason = reason;
  }
}
