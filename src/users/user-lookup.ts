import { findOrgUsers, findUserByEmail, findUserById } from './user-store.ts';

/** Reads of users for other domains: the users of an organization with these emails or usernames; one user by e-mail or id. */
export { findOrgUsers, findUserByEmail, findUserById };
