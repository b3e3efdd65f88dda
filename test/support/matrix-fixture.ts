import { TokenSigner } from '../../src/crypto/tokens.ts';
import { insertIdentity } from '../../src/identities/identity-store.ts';
import { insertIdentityOrgMembership, insertOrganization } from '../../src/orgs/org-store.ts';
import { accessFixture } from './access-fixture.ts';
import { adminQuery } from './postgres-server.ts';
import type { TestApp } from './test-app.ts';

export const ROLE_PERSONAS = ['viewer', 'member', 'admin', 'orgAdmin'] as const;
export type RolePersona = (typeof ROLE_PERSONAS)[number];
export const REJECTED_PERSONAS = ['noToken', 'malformed', 'expired', 'revoked', 'otherOrg'] as const;
export type Persona = RolePersona | (typeof REJECTED_PERSONAS)[number];

/** A valid OIDC configuration body for the organization `orgSlug`. */
export const oidcConfigBody = (orgSlug: string) => ({
  orgSlug,
  discoveryURL: 'https://issuer.example.com',
  clientId: 'matrix-client',
  clientSecret: 'matrix-client-secret',
  allowedEmailDomains: 'example.com',
});

let counter = 0;
/** A name no other call has used, for resources created per request. */
export const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

/**
 * One organization with a project holding an environment, folder, secrets, an
 * import, a tag, an identity member with universal auth and a privilege, a
 * custom role, a user member and an integration; four callers with the roles
 * under test, and the tokens that must be refused. `fresh.*` make a new
 * resource for a request that consumes one (all made by the org admin).
 */
export async function matrixFixture(app: TestApp) {
  const fx = await accessFixture(app, 'matrix-project');
  await ensureLeaseTarget();
  const { call, projectId } = fx;
  const personaIdentities = {
    viewer: await fx.identity('viewer', 'member', 'viewer'),
    member: await fx.identity('member', 'member', 'member'),
    admin: await fx.identity('admin', 'member', 'admin'),
    orgAdmin: await fx.identity('org-admin', 'admin'),
  };
  const devId: string = (await call('GET', `/api/v1/workspace/${projectId}`)).workspace.environments.find((env: { slug: string }) => env.slug === 'dev').id;

  const dynamicSecretPlace = { projectSlug: fx.projectSlug, environmentSlug: 'dev', path: '/' };
  const fresh = {
    async project() {
      const { project } = await call('POST', '/api/v2/workspace', { projectName: unique('p').slice(0, 60) });
      for (const role of ['viewer', 'member', 'admin'] as const) {
        await call('POST', `/api/v2/workspace/${project.id}/identity-memberships/${personaIdentities[role].id}`, { roles: [{ role }] });
      }
      return project.id as string;
    },
    async environment() {
      const slug = unique('env');
      return (await call('POST', `/api/v1/workspace/${projectId}/environments`, { name: slug, slug })).environment.id as string;
    },
    async folder() {
      const name = unique('f');
      return (await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'dev', path: '/', name })).folder as { id: string; name: string };
    },
    async secret(tagIds: string[] = []) {
      const name = unique('S').toUpperCase().replaceAll('-', '_');
      await call('POST', `/api/v3/secrets/raw/${name}`, { workspaceId: projectId, environment: 'dev', secretValue: 'value', tagIds });
      return name;
    },
    /** A secret written, and the revision the write committed (its Coffer-Revision header). */
    async revision() {
      const name = unique('R').toUpperCase().replaceAll('-', '_');
      const body = { workspaceId: projectId, environment: 'dev', secretValue: 'value' };
      const response = await app.request('POST', `/api/v3/secrets/raw/${name}`, { token: fx.token, body });
      return String(response.headers['coffer-revision']);
    },
    async import() {
      const body = { workspaceId: projectId, environment: 'dev', path: '/', import: { environment: 'staging', path: `/${unique('src')}` } };
      return (await call('POST', '/api/v1/secret-imports', body)).secretImport.id as string;
    },
    /** A dynamic secret at the project's dev root whose leases are roles on the matrix's own target database. */
    async dynamicSecret() {
      const name = unique('pg');
      await call('POST', '/api/v1/dynamic-secrets', { ...dynamicSecretPlace, name, provider: leaseProvider(), defaultTTL: '1h', maxTTL: '1d' });
      return name;
    },
    async lease() {
      const dynamicSecretName = await fresh.dynamicSecret();
      return (await call('POST', '/api/v1/dynamic-secrets/leases', { ...dynamicSecretPlace, dynamicSecretName })).lease.id as string;
    },
    async tag() {
      return (await call('POST', `/api/v1/workspace/${projectId}/tags`, { slug: unique('t'), color: '#000000' })).workspaceTag.id as string;
    },
    async identity() {
      return (await call('POST', '/api/v1/identities', { name: unique('i'), organizationId: fx.orgId })).identity.id as string;
    },
    async universalAuthIdentity() {
      const id = await fresh.identity();
      const ua = await fx.universalAuth(id);
      return { id, ...ua };
    },
    /** An identity with Kubernetes Auth (nothing is called until a login). */
    async kubernetesAuthIdentity() {
      const id = await fresh.identity();
      await call('POST', `/api/v1/auth/kubernetes-auth/identities/${id}`, { kubernetesHost: 'https://kubernetes.default.svc', tokenReviewerJwt: 'reviewer' });
      return id;
    },
    /** An identity with JWT Auth (a JWKS URL: nothing is fetched until a login). */
    async jwtAuthIdentity() {
      const id = await fresh.identity();
      await call('POST', `/api/v1/auth/jwt-auth/identities/${id}`, { configurationType: 'jwks', jwksUrl: 'https://issuer.example.com/jwks' });
      return id;
    },
    async identityMember() {
      const id = await fresh.identity();
      await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${id}`, { roles: [{ role: 'viewer' }] });
      return id;
    },
    async privilege(identityId: string) {
      const body = {
        identityId,
        projectSlug: fx.projectSlug,
        slug: unique('pv'),
        permissions: [{ subject: 'secrets', action: ['read'], conditions: { environment: 'dev' } }],
      };
      return (await call('POST', '/api/v1/additional-privilege/identity/permanent', body)).privilege.slug as string;
    },
    async role() {
      return (await call('POST', `/api/v1/workspace/${projectId}/roles`, { slug: unique('r'), name: 'Role', permissions: [{ subject: 'secrets', action: ['read'] }] }))
        .role.id as string;
    },
    async userMembership() {
      const email = `${unique('u')}@example.com`;
      await call('POST', '/api/v1/invite-org/signup', { inviteeEmails: [email], organizationId: fx.orgId });
      return (await call('POST', `/api/v2/workspace/${projectId}/memberships`, { emails: [email] })).memberships[0].id as string;
    },
    /** The organization's slug, with an OIDC configuration in place (nothing is fetched until a sign-in). */
    async oidcConfig() {
      const db = app.database.db;
      const { slug } = await db.selectFrom('organizations').select('slug').where('id', '=', fx.orgId).executeTakeFirstOrThrow();
      if (!(await db.selectFrom('orgOidcConfigs').select('id').where('orgId', '=', fx.orgId).executeTakeFirst())) {
        // several requests may be built at once: one makes it, the others' 409 says it is there
        const made = await app.request('POST', '/api/v1/sso/oidc/config', { token: fx.token, body: oidcConfigBody(slug) });
        if (made.status !== 200 && made.status !== 409) throw new Error(`OIDC configuration: ${made.status} ${JSON.stringify(made.body)}`);
      }
      return slug;
    },
    /** The organization's slug, with no OIDC configuration. */
    async noOidcConfig() {
      const db = app.database.db;
      await db.deleteFrom('orgOidcConfigs').where('orgId', '=', fx.orgId).execute();
      return (await db.selectFrom('organizations').select('slug').where('id', '=', fx.orgId).executeTakeFirstOrThrow()).slug;
    },
    async invitedEmail() {
      const email = `${unique('u')}@example.com`;
      await call('POST', '/api/v1/invite-org/signup', { inviteeEmails: [email], organizationId: fx.orgId });
      return email;
    },
    async integrationAuth(integration = 'github') {
      return (await call('POST', '/api/v1/integration-auth/access-token', { workspaceId: projectId, integration, accessToken: 'provider-token' })).integrationAuth
        .id as string;
    },
    async namespaceGrant() {
      return (await call('POST', `/api/v1/workspace/${projectId}/namespace-grants`, { namespace: unique('ns') })).grant.id as string;
    },
    /** A user of the organization who is a member (role `member`) of the matrix project. */
    async projectUser() {
      const email = `${unique('u')}@example.com`;
      await call('POST', '/api/v1/invite-org/signup', { inviteeEmails: [email], organizationId: fx.orgId });
      await call('POST', `/api/v2/workspace/${projectId}/memberships`, { emails: [email] });
      return (await app.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
    },
    /** An approval policy on a prod path nothing else writes to. */
    async approvalPolicy(approverId: string, secretPath = `/${unique('gated')}`) {
      const body = { workspaceId: projectId, name: unique('policy'), environment: 'prod', secretPath, approvers: [{ type: 'user', id: approverId }], approvals: 1 };
      return (await call('POST', '/api/v1/secret-approvals', body)).approval.id as string;
    },
    /** A fresh folder of dev with one secret, and the revision of that write (a snapshot of the folder). */
    async snapshot() {
      const folder = await fresh.folder();
      const body = { workspaceId: projectId, environment: 'dev', secretPath: `/${folder.name}`, secretValue: 'value' };
      const response = await app.request('POST', '/api/v3/secrets/raw/SNAPSHOTTED', { token: fx.token, body });
      return { path: `/${folder.name}`, revision: String(response.headers['coffer-revision']) };
    },
    async webhook() {
      const body = { workspaceId: projectId, environment: 'dev', secretPath: '/', webhookUrl: 'http://127.0.0.1:9/hook' };
      return (await call('POST', '/api/v1/webhooks', body)).webhook.id as string;
    },
    async integration() {
      const integrationAuthId = await fresh.integrationAuth();
      return (await call('POST', '/api/v1/integration', { integrationAuthId, sourceEnvironment: 'dev', app: unique('app') })).integration.id as string;
    },
  };

  const tagSlug = unique('tag');
  const tagId = (await call('POST', `/api/v1/workspace/${projectId}/tags`, { slug: tagSlug, color: '#ff0000' })).workspaceTag.id as string;
  const folder = await fresh.folder();
  const secretName = await fresh.secret();
  const target = await fresh.universalAuthIdentity();
  await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${target.id}`, { roles: [{ role: 'viewer' }] });
  const approverUserId = await fresh.projectUser();
  const ids = {
    ...fx,
    approverUserId,
    webhookId: await fresh.webhook(),
    approvalRequestId: await approvalRequest(app, fx, fresh, approverUserId),
    devId,
    tagId,
    tagSlug,
    folder,
    secretName,
    importId: await fresh.import(),
    target,
    privilegeSlug: await fresh.privilege(target.id),
    integrationAuthId: await fresh.integrationAuth(),
    integrationId: await fresh.integration(),
  };

  // the org admin persona is also the operator of the registered cluster `matrix` (the operator routes' only allowed caller)
  await fx.bindToCluster(personaIdentities.orgAdmin.id, 'matrix');
  const { tokens, otherOrgIdentityId } = await personaTokens(app, fx, personaIdentities);
  return { ids, fresh, personaIdentities, tokens, otherOrgIdentityId, issueToken: fx.issueToken, request: app.request.bind(app) };
}

/** A token of a real token row (max TTL 1 s), signed by the instance's key a minute ago: expired now, without waiting for it. */
/** An open change request in the matrix project: a member user's write to a prod folder a policy protects. */
async function approvalRequest(
  app: TestApp,
  fx: Awaited<ReturnType<typeof accessFixture>>,
  fresh: { projectUser(): Promise<string>; approvalPolicy(approverId: string, secretPath: string): Promise<string> },
  approverId: string,
) {
  const name = unique('gated');
  await fx.call('POST', '/api/v1/folders', { workspaceId: fx.projectId, environment: 'prod', path: '/', name });
  await fresh.approvalPolicy(approverId, `/${name}`);
  const committer = await fresh.projectUser();
  const actor = {
    kind: 'user' as const,
    id: committer,
    name: 'committer',
    orgId: fx.orgId,
    orgRole: 'member',
    tokenId: null,
    authMethod: 'email',
    ip: '127.0.0.1',
    userAgent: null,
    userAgentType: 'other' as const,
  };
  const request = await app.services.approvalRequests.proposeIfProtected(actor, { projectId: fx.projectId, environment: 'prod', secretPath: `/${name}` }, [
    { op: 'create', secretName: 'GATED', secretValue: 'value' },
  ]);
  return request!.id;
}

async function expiredToken(app: TestApp, identityId: string): Promise<string> {
  const row = await app.services.auth.issueIdentityToken(app.database.db, {
    identityId,
    authMethod: 'token-auth',
    name: null,
    accessTokenTtl: 0,
    accessTokenMaxTtl: 1,
    accessTokenNumUsesLimit: 0,
  });
  const aMinuteAgo = new TokenSigner(app.keys.authSecret, () => Date.now() - 60_000);
  return aMinuteAgo.sign({ authTokenType: 'identityAccessToken', identityId, identityAccessTokenId: row.tokenId }, 1);
}

async function personaTokens(app: TestApp, fx: Awaited<ReturnType<typeof accessFixture>>, personas: Record<RolePersona, { id: string; token: string }>) {
  const revoked = await fx.issueToken(personas.viewer.id);
  await fx.call('POST', '/api/v1/auth/token/revoke', { accessToken: revoked });
  const expired = await expiredToken(app, personas.orgAdmin.id);
  const other = await otherOrganization(app, fx.issueToken);
  const tokens = {
    viewer: personas.viewer.token,
    member: personas.member.token,
    admin: personas.admin.token,
    orgAdmin: personas.orgAdmin.token,
    noToken: null,
    malformed: 'not.a.token',
    expired,
    revoked,
    otherOrg: other.token,
  } satisfies Record<Persona, string | null>;
  return { tokens, otherOrgIdentityId: other.identityId };
}

/** A second organization (there is no API for one: bootstrap runs once) with an admin identity. */
async function otherOrganization(app: TestApp, issueToken: (identityId: string) => Promise<string>) {
  const db = app.database.db;
  const org = await insertOrganization(db, { name: 'Other', slug: 'other-org' });
  const identity = await insertIdentity(db, { name: 'other-admin', authMethod: 'token-auth' });
  await insertIdentityOrgMembership(db, { orgId: org.id, identityId: identity.id, role: 'admin' });
  const token = await issueToken(identity.id);
  const project = await app.request('POST', '/api/v2/workspace', { token, body: { projectName: 'Other project' } });
  if (project.status !== 200) throw new Error(JSON.stringify(project.body));
  return { orgId: org.id, identityId: identity.id, token };
}

export type MatrixFixture = Awaited<ReturnType<typeof matrixFixture>>;

/**
 * The database the matrix's dynamic secrets make their lease roles on (the local PostgreSQL server, trust auth);
 * each role carries a comment naming it, so dropLeaseTarget() finds every one, whoever created it.
 */
const LEASE_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';
const leaseTarget = `coffer_matrix_${process.pid}_${Date.now().toString(36)}`;
let leaseTargetMade: Promise<unknown> | undefined;

export function leaseProvider() {
  return {
    type: 'sql-database',
    inputs: {
      client: 'postgres',
      host: '127.0.0.1',
      port: 5432,
      database: leaseTarget,
      username: 'postgres',
      password: '',
      creationStatement: `CREATE ROLE "{{username}}" WITH LOGIN VALID UNTIL '{{expiration}}'; COMMENT ON ROLE "{{username}}" IS '${leaseTarget}';`,
      revocationStatement: 'DROP ROLE IF EXISTS "{{username}}";',
    },
  };
}

/** Creates the target database once, before the first dynamic secret. */
export async function ensureLeaseTarget(): Promise<void> {
  leaseTargetMade ??= adminQuery(LEASE_SERVER, `CREATE DATABASE ${leaseTarget}`);
  await leaseTargetMade;
}

/** Drops every role the matrix's leases made, and the target database. */
export async function dropLeaseTarget(): Promise<void> {
  if (!leaseTargetMade) return;
  // the next file in this worker (the api projects share modules between files) makes it again
  leaseTargetMade = undefined;
  const roles = await adminQuery(LEASE_SERVER, `SELECT rolname FROM pg_roles WHERE shobj_description(oid, 'pg_authid') = '${leaseTarget}'`);
  for (const { rolname } of roles.rows as { rolname: string }[]) await adminQuery(LEASE_SERVER, `DROP ROLE IF EXISTS "${rolname}"`);
  await adminQuery(LEASE_SERVER, `DROP DATABASE IF EXISTS ${leaseTarget}`);
}
