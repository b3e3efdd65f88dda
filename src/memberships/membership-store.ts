import { isUuid } from '../db/uuid.ts';
import type { ProjectMembershipRole } from '../db/schema.ts';
import type { MemberKind } from '../permissions/permission-rules.ts';
import type { TemporaryAccess } from '../permissions/temporary-access.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export type MembershipRoleRow = ProjectMembershipRole & { customRoleSlug: string | null; customRoleName: string | null };
export interface NewRoleRow extends TemporaryAccess {
  role: string;
  customRoleId: string | null;
}

const ownerColumn = (kind: MemberKind) => (kind === 'identity' ? 'identityProjectMembershipId' : 'projectMembershipId');

/** The roles of each membership (every id is a key), permanent first. */
export async function rolesOfMemberships(db: ReadOnlyDb, kind: MemberKind, membershipIds: string[]): Promise<Map<string, MembershipRoleRow[]>> {
  const byMembership = new Map<string, MembershipRoleRow[]>(membershipIds.map((id) => [id, []]));
  if (membershipIds.length === 0) return byMembership;
  const rows = await db
    .selectFrom('projectMembershipRoles as r')
    .leftJoin('projectRoles as pr', 'pr.id', 'r.customRoleId')
    .selectAll('r')
    .select(['pr.slug as customRoleSlug', 'pr.name as customRoleName'])
    .where(`r.${ownerColumn(kind)}`, 'in', membershipIds)
    .orderBy('r.isTemporary')
    .orderBy('r.createdAt')
    .orderBy('r.id')
    .execute();
  for (const row of rows) byMembership.get((kind === 'identity' ? row.identityProjectMembershipId : row.projectMembershipId)!)?.push(row);
  return byMembership;
}

/** Replaces every role of the membership. */
export async function replaceMembershipRoles(db: Executor, kind: MemberKind, membershipId: string, roles: NewRoleRow[]): Promise<void> {
  await db.deleteFrom('projectMembershipRoles').where(ownerColumn(kind), '=', membershipId).execute();
  await db
    .insertInto('projectMembershipRoles')
    .values(roles.map((role) => ({ ...role, [ownerColumn(kind)]: membershipId })))
    .execute();
}

export async function insertUserMembership(db: Executor, projectId: string, userId: string) {
  return db.insertInto('projectMemberships').values({ projectId, userId }).returningAll().executeTakeFirstOrThrow();
}

function selectUserMemberships(db: ReadOnlyDb) {
  return db
    .selectFrom('projectMemberships as m')
    .innerJoin('users as u', 'u.id', 'm.userId')
    .selectAll('m')
    .select(['u.email', 'u.username', 'u.firstName', 'u.lastName']);
}

export async function findUserMembership(db: Executor, projectId: string, membershipId: string) {
  if (!isUuid(membershipId)) return undefined;
  return selectUserMemberships(db).where('m.projectId', '=', projectId).where('m.id', '=', membershipId).executeTakeFirst();
}

export async function listUserMemberships(db: ReadOnlyDb, projectId: string) {
  return selectUserMemberships(db).where('m.projectId', '=', projectId).orderBy('u.email').execute();
}

export async function deleteUserMembership(db: Executor, membershipId: string): Promise<void> {
  await db.deleteFrom('projectMemberships').where('id', '=', membershipId).execute();
}

export async function insertIdentityMembership(db: Executor, projectId: string, identityId: string) {
  return db.insertInto('identityProjectMemberships').values({ projectId, identityId }).returningAll().executeTakeFirstOrThrow();
}

function selectIdentityMemberships(db: ReadOnlyDb) {
  return db
    .selectFrom('identityProjectMemberships as m')
    .innerJoin('identities as i', 'i.id', 'm.identityId')
    .selectAll('m')
    .select(['i.name as identityName', 'i.authMethod']);
}

export async function findIdentityMembership(db: ReadOnlyDb, projectId: string, identityId: string) {
  if (!isUuid(identityId)) return undefined;
  return selectIdentityMemberships(db).where('m.projectId', '=', projectId).where('m.identityId', '=', identityId).executeTakeFirst();
}

export async function listIdentityMemberships(db: ReadOnlyDb, projectId: string) {
  return selectIdentityMemberships(db).where('m.projectId', '=', projectId).orderBy('i.name').orderBy('i.id').execute();
}

export async function deleteIdentityMembership(db: Executor, membershipId: string): Promise<void> {
  await db.deleteFrom('identityProjectMemberships').where('id', '=', membershipId).execute();
}

// ---- the roles single sign-on's group mappings give (marked granted_by_sso) ----

/** The project roles single sign-on gave the user in the organization's projects. */
export async function listSsoGrantedRoles(db: Executor, orgId: string, userId: string) {
  return db
    .selectFrom('projectMembershipRoles as r')
    .innerJoin('projectMemberships as m', 'm.id', 'r.projectMembershipId')
    .innerJoin('projects as p', 'p.id', 'm.projectId')
    .select(['r.id', 'r.role', 'r.customRoleId', 'm.id as membershipId', 'm.projectId'])
    .where('p.orgId', '=', orgId)
    .where('m.userId', '=', userId)
    .where('r.grantedBySso', '=', true)
    .execute();
}

export async function deleteMembershipRoles(db: Executor, roleIds: string[]): Promise<void> {
  if (roleIds.length === 0) return;
  await db.deleteFrom('projectMembershipRoles').where('id', 'in', roleIds).execute();
}

/** The user memberships among `membershipIds` left without any role: deleted. */
export async function deleteRolelessUserMemberships(db: Executor, membershipIds: string[]): Promise<void> {
  if (membershipIds.length === 0) return;
  await db
    .deleteFrom('projectMemberships')
    .where('id', 'in', membershipIds)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('projectMembershipRoles as r').select('r.id').whereRef('r.projectMembershipId', '=', 'projectMemberships.id'))))
    .execute();
}

export async function findOrInsertUserMembership(db: Executor, projectId: string, userId: string): Promise<string> {
  const found = await db.selectFrom('projectMemberships').select('id').where('projectId', '=', projectId).where('userId', '=', userId).executeTakeFirst();
  return found?.id ?? (await insertUserMembership(db, projectId, userId)).id;
}

export async function insertSsoGrantedRole(db: Executor, membershipId: string, role: { role: string; customRoleId: string | null }): Promise<void> {
  await db
    .insertInto('projectMembershipRoles')
    .values({ projectMembershipId: membershipId, role: role.role, customRoleId: role.customRoleId, grantedBySso: true })
    .execute();
}
