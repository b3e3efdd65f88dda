import type { Executor } from '../db/database.ts';

/** Whether the one-time bootstrap has run (its row exists). */
export async function isInstanceClaimed(db: Executor): Promise<boolean> {
  return (await db.selectFrom('instanceState').select('id').executeTakeFirst()) !== undefined;
}

/** Claims the instance for the one-time bootstrap; false when another one claimed it first. */
export async function claimInstance(db: Executor): Promise<boolean> {
  const claimed = await db
    .insertInto('instanceState')
    .values({ id: 1 })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return claimed !== undefined;
}
