import { isUuid } from '../db/uuid.ts';
import type { UserSession } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertUserSession(
  db: Executor,
  values: { userId: string; orgId: string; expiresAt: Date; authMethod: string; ip: string | null; userAgent: string | null },
): Promise<UserSession> {
  return db.insertInto('userSessions').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The session with its user and the user's accepted membership in the session's organization. */
export async function findSessionWithUser(db: Executor, sessionId: string) {
  if (!isUuid(sessionId)) return undefined;
  return db
    .selectFrom('userSessions as s')
    .innerJoin('users as u', 'u.id', 's.userId')
    .leftJoin('orgMemberships as m', (join) => join.onRef('m.userId', '=', 's.userId').onRef('m.orgId', '=', 's.orgId').on('m.status', '=', 'accepted'))
    .select(['s.id', 's.userId', 's.orgId', 's.expiresAt', 's.isRevoked', 's.authMethod', 'u.email', 'm.role as orgRole'])
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
}

export async function revokeUserSession(db: Executor, sessionId: string): Promise<boolean> {
  const result = await db
    .updateTable('userSessions')
    .set({ isRevoked: true, updatedAt: new Date() })
    .where('id', '=', sessionId)
    .where('isRevoked', '=', false)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The session's last use (a table apart from user_sessions: no cache version moves). */
export async function recordSessionUse(db: Executor, sessionId: string, at: Date, ip: string | null): Promise<void> {
  await db
    .insertInto('userSessionActivity')
    .values({ sessionId, lastUsedAt: at, ip })
    .onConflict((conflict) => conflict.column('sessionId').doUpdateSet({ lastUsedAt: at, ip }))
    .execute();
}

/** The user's live sessions (optionally in one organization), newest first, with their last use. */
export async function listLiveSessions(db: ReadOnlyDb, userId: string, now: Date, orgId?: string) {
  let query = db
    .selectFrom('userSessions as s')
    .leftJoin('userSessionActivity as a', 'a.sessionId', 's.id')
    .select(['s.id', 's.orgId', 's.authMethod', 's.ip', 's.userAgent', 's.createdAt', 's.expiresAt', 'a.lastUsedAt', 'a.ip as lastIp'])
    .where('s.userId', '=', userId)
    .where('s.isRevoked', '=', false)
    .where('s.expiresAt', '>', now)
    .orderBy('s.createdAt', 'desc');
  if (orgId) query = query.where('s.orgId', '=', orgId);
  return query.execute();
}

/** Revokes the user's sessions (all, those in one organization, all but one, or just one); answers their ids. */
export async function revokeUserSessions(db: Executor, userId: string, scope: { orgId?: string; except?: string; only?: string } = {}): Promise<string[]> {
  let query = db.updateTable('userSessions').set({ isRevoked: true, updatedAt: new Date() }).where('userId', '=', userId).where('isRevoked', '=', false);
  if (scope.orgId) query = query.where('orgId', '=', scope.orgId);
  if (scope.except) query = query.where('id', '<>', scope.except);
  if (scope.only) query = query.where('id', '=', scope.only);
  const rows = await query.returning('id').execute();
  return rows.map((row) => row.id);
}

export async function findUserSession(db: Executor, sessionId: string) {
  if (!isUuid(sessionId)) return undefined;
  return db.selectFrom('userSessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
}
