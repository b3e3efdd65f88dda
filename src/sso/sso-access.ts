import type { Logger } from 'pino';
import type { Executor } from '../db/database.ts';
import { orgRoleRank } from '../permissions/permission-rules.ts';
import { resolveRoleSlugs } from '../roles/role-lookup.ts';
import type { GroupMapping } from './oidc-config-schema.ts';
import { type SsoProjectRole, syncSsoGrantedRoles } from '../memberships/user-membership-service.ts';
import { setUserOrgRole } from '../orgs/org-membership-service.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { findProjectsOfOrg } from './sso-store.ts';
import { isUuid } from '../db/uuid.ts';

/** The values of the groups claim: an array of strings, or one string; anything else is no group. */
export function groupsOf(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  return Array.isArray(claim) ? claim.filter((group): group is string => typeof group === 'string') : [];
}

/**
 * The organization role the mappings give these groups: the highest mapped one, else `fallback`.
 * Undefined when no mapping names an organization role (the role is then managed by hand).
 */
export function mappedOrgRole(mappings: GroupMapping[], groups: string[], fallback: string): string | undefined {
  const orgMappings = mappings.filter((mapping) => 'orgRole' in mapping);
  if (orgMappings.length === 0) return undefined;
  const roles = orgMappings.filter((mapping) => groups.includes(mapping.group)).map((mapping) => mapping.orgRole);
  return roles.sort((a, b) => orgRoleRank(b) - orgRoleRank(a))[0] ?? fallback;
}

/** The project roles the mappings give these groups, as "projectId\0roleSlug". */
function mappedProjectRoles(mappings: GroupMapping[], groups: string[]): { projectId: string; projectRole: string }[] {
  const wanted = new Map<string, { projectId: string; projectRole: string }>();
  for (const mapping of mappings) {
    if ('projectId' in mapping && groups.includes(mapping.group)) wanted.set(`${mapping.projectId}\0${mapping.projectRole}`, mapping);
  }
  return [...wanted.values()];
}

/**
 * Brings what the mappings grant the user in line with the groups of this sign-in, in the sign-in's
 * unit of work: the org role (when mapped), and the project roles single sign-on gave (marked
 * `granted_by_sso`): those no group gives any more are removed, with a project membership left
 * without roles; the ones missing are added (memberships/user-membership-service.ts). Roles granted
 * by hand are never touched.
 */
export async function applyGroupMappings(
  tx: WriteContext,
  target: { orgId: string; userId: string; membershipId: string; orgRole: string },
  config: { groupMappings: GroupMapping[]; defaultOrgRole: string },
  groups: string[],
  logger?: Logger,
): Promise<{ orgRole: string; granted: string[]; removed: string[] }> {
  const orgRole = mappedOrgRole(config.groupMappings, groups, config.defaultOrgRole) ?? target.orgRole;
  if (orgRole !== target.orgRole) await setUserOrgRole(tx.db, target.membershipId, orgRole);

  const resolved = await resolveMappedRoles(tx.db, target.orgId, mappedProjectRoles(config.groupMappings, groups), logger);
  const { granted, removed } = await syncSsoGrantedRoles(tx, { orgId: target.orgId, userId: target.userId }, resolved);
  return { orgRole, granted, removed };
}

/** The mapped roles that exist, in projects of the organization; a mapping to a role since deleted is skipped (and logged). */
async function resolveMappedRoles(db: Executor, orgId: string, wanted: { projectId: string; projectRole: string }[], logger?: Logger) {
  const projects = new Set((await findProjectsOfOrg(db, orgId, [...new Set(wanted.map((role) => role.projectId))].filter(isUuid))).map((p) => p.id));
  const resolved: SsoProjectRole[] = [];
  for (const mapping of wanted) {
    if (!projects.has(mapping.projectId)) continue;
    try {
      const role = (await resolveRoleSlugs(db, mapping.projectId, [mapping.projectRole])).get(mapping.projectRole)!;
      resolved.push({ ...mapping, role: role.role, customRoleId: role.customRoleId });
    } catch {
      logger?.warn({ orgId, projectId: mapping.projectId, role: mapping.projectRole }, 'a group mapping names a role the project no longer has');
    }
  }
  return resolved;
}
