import { findOrgIdentity, type OrgIdentity } from './identity-store.ts';

/** Reads of identities for other domains: an identity of an organization (undefined when not there). */
export { findOrgIdentity, type OrgIdentity };
