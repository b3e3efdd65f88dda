import { isDeepStrictEqual } from 'node:util';
import type { Ability, PermissionRule } from './permission-rules.ts';

/**
 * True when `holder` grants everything `rules` grant. Deliberately strict: a
 * conditional grant is covered only by an unconditional rule or one with the
 * very same conditions, and any restriction (`cannot`) the holder has on that
 * action and subject makes it uncovered.
 */
export function isAtLeastAsPrivileged(holder: Ability, rules: PermissionRule[]): boolean {
  return rules.every((rule) => rule.inverted || rule.action.every((action) => covers(holder, action, rule)));
}

function covers(holder: Ability, action: string, rule: PermissionRule): boolean {
  const relevant = holder.rulesFor(action, rule.subject);
  if (relevant.some((candidate) => candidate.inverted)) return false;
  return relevant.some((candidate) => !candidate.conditions || isDeepStrictEqual(candidate.conditions, rule.conditions));
}
