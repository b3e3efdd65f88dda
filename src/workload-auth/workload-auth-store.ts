import type { Executor } from '../db/database.ts';
import { isUuid } from '../db/uuid.ts';

/** The organization of an identity (none when unknown): where a lockout of its logins is audited. */
export async function orgIdsOfIdentity(db: Executor, identityId: string): Promise<string[]> {
  if (!isUuid(identityId)) return [];
  const rows = await db.selectFrom('identityOrgMemberships').select('orgId').where('identityId', '=', identityId).execute();
  return rows.map((row) => row.orgId);
}
