import type { Organization } from '../db/schema.ts';
import { listOrganizations } from './org-store.ts';
import type { ReadOnlyDb } from '../db/database.ts';

/** The organization with this slug, or the only one when no slug is given (undefined when ambiguous or absent). */
export async function findSingleOrganization(db: ReadOnlyDb, slug?: string): Promise<Organization | undefined> {
  const organizations = await listOrganizations(db, { slug, limit: 2 });
  return organizations.length === 1 ? organizations[0] : undefined;
}
