import { findOrgUsers } from './user-store.ts';

/** Reads of users for other domains: the users of an organization with these emails or usernames. */
export { findOrgUsers };
