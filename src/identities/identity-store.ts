import type { Executor } from '../db/database.ts';
import type { Identity } from '../db/schema.ts';

export async function insertIdentity(db: Executor, values: { name: string; authMethod: string | null }): Promise<Identity> {
  return db.insertInto('identities').values(values).returningAll().executeTakeFirstOrThrow();
}
