import type { Actor } from '../actor/actor.ts';
import type { OrgOidcConfig } from '../db/schema.ts';
import { isUuid } from '../db/uuid.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { ServiceDeps } from '../services/deps.ts';
import type { WriteContext } from '../services/unit-of-work.ts';
import { resolveRoleSlugs } from '../roles/role-lookup.ts';
import {
  type CreateOidcConfigInput,
  DEFAULT_GROUPS_CLAIM,
  DEFAULT_SCOPES,
  type GroupMapping,
  toOidcConfigResponse,
  type UpdateOidcConfigInput,
} from './oidc-config-schema.ts';
import { sealClientSecret } from './client-secret-cipher.ts';
import { findOidcConfig, findOrgBySlug, findProjectsOfOrg, insertOidcConfig, type OidcConfigValues, updateOidcConfig, updateOrgPolicy } from './sso-store.ts';
import type { Executor, ReadOnlyDb } from '../db/database.ts';

/** The redirect URI of every organization's sign-in: the provider sends the browser back here. */
export function callbackUrl(publicUrl: string): string {
  return new URL('/api/v1/sso/oidc/callback', publicUrl).toString();
}

/**
 * An organization's OIDC single sign-on settings and its sign-in policy (enforced SSO, required MFA),
 * managed by its admins (org `settings`: edit). The client secret is sealed under the root key and never answered.
 */
export class OidcConfigService {
  readonly #deps: ServiceDeps;
  readonly #publicUrl: string;

  constructor(deps: ServiceDeps, publicUrl: string) {
    this.#deps = deps;
    this.#publicUrl = publicUrl;
  }

  async get(actor: Actor, orgSlug: string) {
    const org = await this.#orgOf(this.#deps.db, actor, orgSlug);
    await this.#deps.permissions.assertOrg({ actor, orgId: org.id, action: 'read', subject: 'settings' });
    const row = await findOidcConfig(this.#deps.db, org.id);
    if (!row) throw new NotFoundError('This organization has no OIDC configuration', 'SsoNotConfigured');
    return this.#response(row);
  }

  async create(actor: Actor, input: CreateOidcConfigInput) {
    return this.#deps.unitOfWork.write(
      actor,
      async (tx) => {
        const org = await this.#authorize(tx, input.orgSlug);
        await assertMappings(tx.db, org.id, input.groupMappings);
        const values: OidcConfigValues = {
          issuer: input.discoveryURL,
          clientId: input.clientId,
          encryptedClientSecret: Buffer.alloc(0),
          scopes: input.scopes ?? DEFAULT_SCOPES,
          allowedEmailDomains: input.allowedEmailDomains,
          groupsClaim: input.groupsClaim ?? DEFAULT_GROUPS_CLAIM,
          groupMappings: input.groupMappings,
          defaultOrgRole: input.defaultOrgRole ?? 'member',
          isActive: input.isActive,
        };
        values.encryptedClientSecret = sealClientSecret(this.#deps.keyring, org.id, input.clientSecret);
        const row = await insertOidcConfig(tx.db, org.id, values);
        tx.audit({ orgId: org.id, type: 'create-oidc-config', metadata: describeChange(input) });
        return this.#response(row);
      },
      {
        conflicts: {
          org_oidc_configs_org_id_key: () => new ConflictError('This organization already has an OIDC configuration: update it with PATCH', 'SsoConfigExists'),
        },
      },
    );
  }

  async update(actor: Actor, input: UpdateOidcConfigInput) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      const org = await this.#authorize(tx, input.orgSlug);
      if (!(await findOidcConfig(tx.db, org.id))) throw new NotFoundError('This organization has no OIDC configuration', 'SsoNotConfigured');
      if (input.groupMappings) await assertMappings(tx.db, org.id, input.groupMappings);
      const values: Partial<OidcConfigValues> = {
        ...(input.discoveryURL !== undefined ? { issuer: input.discoveryURL } : {}),
        ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
        ...(input.clientSecret !== undefined ? { encryptedClientSecret: sealClientSecret(this.#deps.keyring, org.id, input.clientSecret) } : {}),
        ...(input.scopes !== undefined ? { scopes: input.scopes } : {}),
        ...(input.allowedEmailDomains !== undefined ? { allowedEmailDomains: input.allowedEmailDomains } : {}),
        ...(input.groupsClaim !== undefined ? { groupsClaim: input.groupsClaim } : {}),
        ...(input.groupMappings !== undefined ? { groupMappings: input.groupMappings } : {}),
        ...(input.defaultOrgRole !== undefined ? { defaultOrgRole: input.defaultOrgRole } : {}),
        ...(input.isActive !== undefined ? { isActive: input.isActive } : {}),
      };
      const row = await updateOidcConfig(tx.db, org.id, values);
      if (!row.isActive) await updateOrgPolicy(tx.db, org.id, { authEnforced: false });
      tx.audit({ orgId: org.id, type: 'update-oidc-config', metadata: describeChange(input) });
      return this.#response(row);
    });
  }

  /** Enforced SSO (needs an active configuration) and required MFA for password sign-ins. */
  async updatePolicy(actor: Actor, organizationId: string, input: { authEnforced?: boolean; enforceMfa?: boolean }) {
    return this.#deps.unitOfWork.write(actor, async (tx) => {
      await tx.authorizeOrg({ action: 'edit', subject: 'settings', orgId: organizationId });
      if (input.authEnforced) {
        const config = await findOidcConfig(tx.db, organizationId);
        if (!config?.isActive) throw new BadRequestError('Single sign-on can be enforced only with an active OIDC configuration', 'SsoNotConfigured');
      }
      const org = await updateOrgPolicy(tx.db, organizationId, input);
      tx.audit({ orgId: organizationId, type: 'update-org-auth-policy', metadata: { ...input } });
      return {
        organization: { id: org.id, name: org.name, slug: org.slug, authEnforced: org.authEnforced, enforceMfa: org.enforceMfa, updatedAt: org.updatedAt.toISOString() },
      };
    });
  }

  async #authorize(tx: WriteContext, orgSlug: string) {
    const org = await this.#orgOf(tx.db, tx.actor, orgSlug);
    await tx.authorizeOrg({ action: 'edit', subject: 'settings', orgId: org.id });
    return org;
  }

  /** The caller's own organization by slug; another organization's slug is refused like the caller's lack of access. */
  async #orgOf(db: ReadOnlyDb, actor: Actor, orgSlug: string) {
    const org = await findOrgBySlug(db, orgSlug);
    if (!org || org.id !== actor.orgId) throw new ForbiddenError('You are not a member of the organization that owns this resource', 'ForbiddenError');
    return org;
  }

  #response(row: OrgOidcConfig) {
    return toOidcConfigResponse(row, callbackUrl(this.#publicUrl));
  }
}

/** Each project mapping names a project of this organization and a role it has. */
async function assertMappings(db: Executor, orgId: string, mappings: GroupMapping[]): Promise<void> {
  const projectMappings = mappings.filter((mapping) => 'projectId' in mapping);
  const projectIds = [...new Set(projectMappings.map((mapping) => mapping.projectId))];
  const known = new Set((await findProjectsOfOrg(db, orgId, projectIds.filter(isUuid))).map((project) => project.id));
  for (const mapping of projectMappings) {
    if (!known.has(mapping.projectId))
      throw new BadRequestError(`Group mapping '${mapping.group}' names a project this organization does not have`, 'InvalidGroupMapping');
    try {
      await resolveRoleSlugs(db, mapping.projectId, [mapping.projectRole]);
    } catch {
      throw new BadRequestError(`Group mapping '${mapping.group}' names a role the project does not have`, 'InvalidGroupMapping');
    }
  }
}

/** What changed, for the audit log: field names and non-secret values; the client secret only as "changed". */
function describeChange(input: Partial<CreateOidcConfigInput>) {
  return {
    ...(input.discoveryURL !== undefined ? { issuer: input.discoveryURL } : {}),
    ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
    ...(input.clientSecret !== undefined ? { clientSecretChanged: true } : {}),
    ...(input.allowedEmailDomains !== undefined ? { allowedEmailDomains: input.allowedEmailDomains } : {}),
    ...(input.isActive !== undefined ? { isActive: input.isActive } : {}),
    ...(input.scopes !== undefined ? { scopes: input.scopes } : {}),
    ...(input.groupMappings !== undefined ? { groupMappings: input.groupMappings.length } : {}),
    ...(input.defaultOrgRole !== undefined ? { defaultOrgRole: input.defaultOrgRole } : {}),
  };
}
