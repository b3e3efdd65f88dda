import type { Executor } from '../db/database.ts';
import type { Organization } from '../db/schema.ts';
import { listOrganizations } from './org-store.ts';

/** The organization with this slug, or the only one when no slug is given (undefined when ambiguous or absent). */
export async function findSingleOrganization(db: Executor, slug?: string): Promise<Organization | undefined> {
  const organizations = await listOrganizations(db, { slug, limit: 2 });
  return organizations.length === 1 ? organizations[0] : undefined;
}
