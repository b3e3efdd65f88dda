import type { Logger } from 'pino';
import type { Executor } from '../db/database.ts';
import { orgRoleRank } from '../permissions/permission-rules.ts';
import { resolveRoleSlugs } from '../roles/role-lookup.ts';
import type { GroupMapping } from './oidc-config-schema.ts';
import {
  deleteEmptyMemberships,
  deleteProjectRoles,
  findOrCreateProjectMembership,
  findProjectsOfOrg,
  insertSsoProjectRole,
  listSsoProjectRoles,
  setOrgRole,
} from './sso-store.ts';
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
 * transaction: the org role (when mapped), and the project roles single sign-on gave (marked
 * `granted_by_sso`): those no group gives any more are removed, with a project membership left
 * without roles; the ones missing are added. Roles granted by hand are never touched.
 */
export async function applyGroupMappings(
  db: Executor,
  target: { orgId: string; userId: string; membershipId: string; orgRole: string },
  config: { groupMappings: GroupMapping[]; defaultOrgRole: string },
  groups: string[],
  logger?: Logger,
): Promise<{ orgRole: string; granted: string[]; removed: string[] }> {
  const orgRole = mappedOrgRole(config.groupMappings, groups, config.defaultOrgRole) ?? target.orgRole;
  if (orgRole !== target.orgRole) await setOrgRole(db, target.membershipId, orgRole);

  const wanted = mappedProjectRoles(config.groupMappings, groups);
  const projects = new Set((await findProjectsOfOrg(db, target.orgId, [...new Set(wanted.map((role) => role.projectId))].filter(isUuid))).map((p) => p.id));
  const resolved: { projectId: string; projectRole: string; role: string; customRoleId: string | null }[] = [];
  for (const mapping of wanted) {
    if (!projects.has(mapping.projectId)) continue;
    try {
      const role = (await resolveRoleSlugs(db, mapping.projectId, [mapping.projectRole])).get(mapping.projectRole)!;
      resolved.push({ ...mapping, role: role.role, customRoleId: role.customRoleId });
    } catch {
      logger?.warn({ orgId: target.orgId, projectId: mapping.projectId, role: mapping.projectRole }, 'a group mapping names a role the project no longer has');
    }
  }
  const keyOf = (role: { projectId: string; role: string; customRoleId: string | null }) => `${role.projectId}\0${role.role}\0${role.customRoleId ?? ''}`;
  const held = await listSsoProjectRoles(db, target.orgId, target.userId);
  const wantedKeys = new Set(resolved.map(keyOf));
  const stale = held.filter((role) => !wantedKeys.has(keyOf(role)));
  await deleteProjectRoles(
    db,
    stale.map((role) => role.id),
  );
  await deleteEmptyMemberships(db, [...new Set(stale.map((role) => role.membershipId))]);
  const heldKeys = new Set(held.map(keyOf));
  const missing = resolved.filter((role) => !heldKeys.has(keyOf(role)));
  for (const role of missing) {
    const membershipId = await findOrCreateProjectMembership(db, role.projectId, target.userId);
    await insertSsoProjectRole(db, membershipId, role);
  }
  return {
    orgRole,
    granted: missing.map((role) => `${role.projectId}:${role.projectRole}`),
    removed: stale.map((role) => `${role.projectId}:${role.customRoleId ?? role.role}`),
  };
}
