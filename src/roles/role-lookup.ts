import type { Executor } from '../db/database.ts';
import { NotFoundError } from '../errors.ts';
import { BUILT_IN_PROJECT_ROLES, type PermissionRule } from '../permissions/permission-rules.ts';
import { findRolesBySlugs } from './role-store.ts';

/** A role slug as stored on a membership: built-in by name, custom as `custom` + its id. */
export interface ResolvedRole {
  role: string;
  customRoleId: string | null;
  rules: PermissionRule[];
}

/** Resolves built-in and custom role slugs of a project; 404 when any is unknown. */
export async function resolveRoleSlugs(db: Executor, projectId: string, slugs: string[]): Promise<Map<string, ResolvedRole>> {
  const resolved = new Map<string, ResolvedRole>();
  const custom = [...new Set(slugs.filter((slug) => !Object.hasOwn(BUILT_IN_PROJECT_ROLES, slug)))];
  for (const slug of slugs) {
    const builtIn = BUILT_IN_PROJECT_ROLES[slug];
    if (builtIn && Object.hasOwn(BUILT_IN_PROJECT_ROLES, slug)) resolved.set(slug, { role: slug, customRoleId: null, rules: builtIn.rules });
  }
  const found = await findRolesBySlugs(db, projectId, custom);
  if (found.length !== custom.length) throw new NotFoundError('One or more custom roles not found');
  for (const role of found) resolved.set(role.slug, { role: 'custom', customRoleId: role.id, rules: role.permissions as PermissionRule[] });
  return resolved;
}
