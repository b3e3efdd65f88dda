import type { Executor } from '../db/database.ts';
import { ForbiddenError } from '../errors.ts';
import { findOrgPolicy } from './sso-store.ts';

export interface PasswordSignIn {
  /** The organization requires a second factor for password sign-ins. */
  mfaRequired: boolean;
  /** An org admin signed in with a password past enforced single sign-on (COFFER_SSO_BREAK_GLASS). */
  breakGlass: boolean;
}

/**
 * Whether a member with `orgRole` may sign in to (or set a password for) the organization with a password:
 * refused (403 SsoEnforced) where single sign-on is enforced, except for org admins when the installation
 * allows break-glass sign-in.
 */
export async function passwordSignInPolicy(db: Executor, orgId: string, orgRole: string | undefined, allowBreakGlass: boolean): Promise<PasswordSignIn> {
  const policy = await findOrgPolicy(db, orgId);
  if (!policy) return { mfaRequired: false, breakGlass: false };
  const breakGlass = policy.authEnforced && allowBreakGlass && orgRole === 'admin';
  if (policy.authEnforced && !breakGlass) {
    throw new ForbiddenError(`This organization requires single sign-on: sign in with GET /api/v1/sso/oidc/login?orgSlug=${policy.slug}`, 'SsoEnforced');
  }
  return { mfaRequired: policy.enforceMfa, breakGlass };
}
