import { insertUser, publicUser } from './user-store.ts';

/** A new user account (bootstrap's admin), and how a user is shown: for other domains. */
export { insertUser as createUser, publicUser };
