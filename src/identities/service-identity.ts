import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { insertIdentityOrgMembership } from '../orgs/org-store.ts';
import { insertIdentity } from './identity-store.ts';

/**
 * A machine identity the service itself acts as (the in-process operator),
 * created once per organization with the given org role.
 */
export async function ensureServiceIdentity(db: Kysely<DB>, orgId: string, name: string, role: string): Promise<{ id: string; name: string; role: string }> {
  const existing = await db
    .selectFrom('identities as i')
    .innerJoin('identityOrgMemberships as m', 'm.identityId', 'i.id')
    .select(['i.id', 'i.name', 'm.role'])
    .where('m.orgId', '=', orgId)
    .where('i.name', '=', name)
    .where('i.authMethod', '=', 'service')
    .executeTakeFirst();
  if (existing) return existing;
  return db.transaction().execute(async (trx) => {
    const identity = await insertIdentity(trx, { name, authMethod: 'service' });
    await insertIdentityOrgMembership(trx, { orgId, identityId: identity.id, role });
    return { id: identity.id, name: identity.name, role };
  });
}
