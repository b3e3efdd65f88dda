import { isUuid } from '../db/uuid.ts';
import type { User } from '../db/schema.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

export async function insertUser(
  db: Executor,
  values: { email: string; username: string; firstName: string | null; lastName: string | null; passwordHash: string | null },
): Promise<User> {
  return db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The user fields every API response may show (never the password hash). */
export function publicUser(user: User) {
  return {
    id: user.id,
    email: user.email,
    username: user.username,
    firstName: user.firstName,
    lastName: user.lastName,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** Users of an organization (invited or accepted) with one of these emails or usernames. */
export async function findOrgUsers(db: Executor, orgId: string, emails: string[], usernames: string[]): Promise<User[]> {
  const lowered = emails.map((email) => email.toLowerCase());
  if (lowered.length === 0 && usernames.length === 0) return [];
  return db
    .selectFrom('users as u')
    .innerJoin('orgMemberships as m', 'm.userId', 'u.id')
    .selectAll('u')
    .where('m.orgId', '=', orgId)
    .where((eb) => {
      const matches = [];
      if (lowered.length > 0) matches.push(eb(eb.fn('lower', ['u.email']), 'in', lowered));
      if (usernames.length > 0) matches.push(eb('u.username', 'in', usernames));
      return eb.or(matches);
    })
    .execute();
}

export async function findUserByEmail(db: ReadOnlyDb, email: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}

export async function findUserById(db: Executor, id: string): Promise<User | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The organizations a user with this email has joined (none when unknown). */
export async function orgIdsOfEmail(db: Executor, email: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users as u')
    .innerJoin('orgMemberships as m', 'm.userId', 'u.id')
    .select('m.orgId')
    .where((eb) => eb(eb.fn('lower', ['u.email']), '=', email.toLowerCase()))
    .where('m.status', '=', 'accepted')
    .execute();
  return rows.map((row) => row.orgId);
}

export async function setUserPassword(db: Executor, userId: string, values: { passwordHash: string; firstName?: string | null; lastName?: string | null }) {
  await db
    .updateTable('users')
    .set({ ...values, updatedAt: new Date() })
    .where('id', '=', userId)
    .execute();
}
