import { PATTERN_LIMITS, PatternError } from './pattern-limits.ts';

/** Counts what a pattern asks for while it is translated, and refuses past the bounds. */
export class PatternBudget {
  #wildcards = 0;
  #alternatives = 0;
  #depth = 0;

  static check(source: string): PatternBudget {
    if (source.length > PATTERN_LIMITS.maxLength) throw new PatternError(`is longer than ${PATTERN_LIMITS.maxLength} characters`);
    return new PatternBudget();
  }

  wildcard(): void {
    if (++this.#wildcards > PATTERN_LIMITS.maxWildcards) throw new PatternError(`has more than ${PATTERN_LIMITS.maxWildcards} wildcards (*, **, ?, […])`);
  }

  alternatives(count: number): void {
    this.#alternatives += count;
    if (this.#alternatives > PATTERN_LIMITS.maxAlternatives)
      throw new PatternError(`has more than ${PATTERN_LIMITS.maxAlternatives} alternatives in {…} and @(…) groups`);
  }

  enterGroup(): void {
    if (++this.#depth > PATTERN_LIMITS.maxGroupDepth) throw new PatternError(`nests groups more than ${PATTERN_LIMITS.maxGroupDepth} deep`);
  }

  /** Closes a group of `alternatives`. */
  leaveGroup(alternatives: number): void {
    this.#depth--;
    this.alternatives(alternatives);
  }
}
