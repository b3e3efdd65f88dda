import { findOrgPolicy } from './sso-store.ts';

/** An organization's sign-in policy (enforced SSO, required MFA), for the password login. */
export { findOrgPolicy };
