import { findIdentityMembership } from './membership-store.ts';

/** Reads of memberships for other domains: an identity's membership of a project (undefined when it is none). */
export { findIdentityMembership };
