import type { Executor } from '../db/database.ts';
import type { Organization } from '../db/schema.ts';
import { acceptedOrgIdsOfUser, acceptedOrgsOfUser, findInviteByDigest, findUserOrgMembership, listOrganizationIds } from './org-store.ts';

export { acceptedOrgIdsOfUser, acceptedOrgsOfUser, findInviteByDigest, findUserOrgMembership, listOrganizationIds };

/** The organization with this slug, or the only one when no slug is given (undefined when ambiguous or absent). */
export async function findSingleOrganization(db: Executor, slug?: string): Promise<Organization | undefined> {
  let query = db.selectFrom('organizations').selectAll().orderBy('createdAt').limit(2);
  if (slug) query = query.where('slug', '=', slug);
  const rows = await query.execute();
  return rows.length === 1 ? rows[0] : undefined;
}
