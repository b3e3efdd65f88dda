import slugify from '@sindresorhus/slugify';
import type { Kysely } from 'kysely';
import type { AuthService } from '../auth/auth-service.ts';
import { hashPassword } from '../crypto/passwords.ts';
import type { DB } from '../db/schema.ts';
import type { UnitOfWork } from '../services/unit-of-work.ts';
import { BadRequestError } from '../errors.ts';
import { createIdentity } from '../identities/identity-service.ts';
import { addIdentityToOrg, addUserToOrg, createOrganization } from '../orgs/org-membership-service.ts';
import { createUser, publicUser } from '../users/user-accounts.ts';
import { claimInstance, isInstanceClaimed } from './bootstrap-store.ts';

export interface BootstrapInput {
  email: string;
  password: string;
  organization: string;
}

export const ADMIN_IDENTITY_NAME = 'coffer-admin';

/**
 * First start of an empty instance: the admin user, the organization and an
 * org-admin machine identity with a non-expiring (revocable) access token.
 */
export class BootstrapService {
  readonly #db: Kysely<DB>;
  readonly #unitOfWork: UnitOfWork;
  readonly #auth: AuthService;

  constructor(db: Kysely<DB>, unitOfWork: UnitOfWork, auth: AuthService) {
    this.#db = db;
    this.#unitOfWork = unitOfWork;
    this.#auth = auth;
  }

  /** True once the one-time bootstrap has run. */
  async isBootstrapped(): Promise<boolean> {
    return isInstanceClaimed(this.#db);
  }

  async bootstrap(input: BootstrapInput) {
    const passwordHash = await hashPassword(input.password);
    return this.#unitOfWork.write(null, async (tx) => {
      tx.authorizedBy('the one-time set-up of an instance with no organization');
      const trx = tx.db;
      if (!(await claimInstance(trx))) throw new BadRequestError('This instance has already been set up', 'BootstrapError');

      const organization = await createOrganization(trx, { name: input.organization, slug: slugify(input.organization) || 'org' });
      const user = await createUser(trx, { email: input.email, username: input.email, firstName: null, lastName: null, passwordHash });
      await addUserToOrg(trx, { orgId: organization.id, userId: user.id, role: 'admin', status: 'accepted', inviteEmail: null });
      const identity = await createIdentity(trx, { name: ADMIN_IDENTITY_NAME, authMethod: 'token-auth' });
      await addIdentityToOrg(trx, { orgId: organization.id, identityId: identity.id, role: 'admin' });
      const token = await this.#auth.issueIdentityToken(trx, {
        identityId: identity.id,
        authMethod: 'token-auth',
        name: 'bootstrap',
        accessTokenTtl: 0,
        accessTokenMaxTtl: 0,
        accessTokenNumUsesLimit: 0,
      });
      return {
        message: 'Successfully bootstrapped instance',
        user: publicUser(user),
        organization: {
          id: organization.id,
          name: organization.name,
          slug: organization.slug,
          createdAt: organization.createdAt.toISOString(),
          updatedAt: organization.updatedAt.toISOString(),
        },
        identity: { id: identity.id, name: identity.name, credentials: { token: token.accessToken } },
      };
    });
  }
}
