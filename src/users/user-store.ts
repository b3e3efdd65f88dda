import type { Executor } from '../db/database.ts';
import type { User } from '../db/schema.ts';

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
