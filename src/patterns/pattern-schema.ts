import type { z } from 'zod';
import { pathGlobProblem, PATTERN_LIMITS } from './patterns.ts';

/** What a request's path glob says about its bounds (README "Patterns"), for the API reference. */
export const PATH_GLOB_RULES = `A secret-path glob (\`*\`, \`**\`, \`?\`, \`[a-z]\`, \`{a,b}\`, \`@(a|b)\`, a leading \`!\`): at most ${PATTERN_LIMITS.maxLength} characters, ${PATTERN_LIMITS.maxWildcards} wildcards, ${PATTERN_LIMITS.maxAlternatives} alternatives and groups ${PATTERN_LIMITS.maxGroupDepth} deep; anything else is a 422.`;

/** Refuses, as a 422 naming the field, a path glob that does not compile or breaks the bounds. */
export function asPathGlob<T extends z.ZodType<string | undefined>>(field: T): T {
  return field.superRefine((value, context) => {
    if (value === undefined) return;
    const problem = pathGlobProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
}
