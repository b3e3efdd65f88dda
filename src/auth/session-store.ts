import type { Executor } from '../db/database.ts';
import { isUuid } from '../db/uuid.ts';
import type { UserSession } from '../db/schema.ts';

export async function insertUserSession(db: Executor, values: { userId: string; orgId: string; expiresAt: Date }): Promise<UserSession> {
  return db.insertInto('userSessions').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The session with its user and the user's accepted membership in the session's organization. */
export async function findSessionWithUser(db: Executor, sessionId: string) {
  if (!isUuid(sessionId)) return undefined;
  return db
    .selectFrom('userSessions as s')
    .innerJoin('users as u', 'u.id', 's.userId')
    .leftJoin('orgMemberships as m', (join) => join.onRef('m.userId', '=', 's.userId').onRef('m.orgId', '=', 's.orgId').on('m.status', '=', 'accepted'))
    .select(['s.id', 's.userId', 's.orgId', 's.expiresAt', 's.isRevoked', 'u.email', 'm.role as orgRole'])
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
