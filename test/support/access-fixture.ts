import type { Actor } from '../../src/actor/actor.ts';
import { insertIdentity } from '../../src/identities/identity-store.ts';
import { insertIdentityOrgMembership, insertOrganization } from '../../src/orgs/org-store.ts';
import { bootstrap, type TestApp } from './test-app.ts';

export interface InjectOptions {
  token?: string | null;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** The client address the request comes from (inject's remoteAddress). */
  remoteAddress?: string;
  /** Send the body as application/x-www-form-urlencoded. */
  form?: boolean;
}

/** A request straight through the app, for what TestApp.request cannot express (client address, form bodies). */
export async function inject(app: TestApp, method: string, url: string, options: InjectOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | object | undefined = options.body as object | undefined;
  if (options.form && options.body) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    payload = new URLSearchParams(options.body as Record<string, string>).toString();
  }
  const response = await app.app.inject({
    method: method as 'GET',
    url,
    query: options.query,
    headers,
    remoteAddress: options.remoteAddress,
    ...(payload === undefined ? {} : { payload }),
  });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
}

/** A token-auth access token of the identity that never expires and has no use limit (or the limits given). */
export async function issueTestToken(app: TestApp, identityId: string, limits: { ttl?: number; maxTtl?: number; uses?: number } = {}): Promise<string> {
  const issued = await app.services.auth.issueIdentityToken(app.database.db, {
    identityId,
    authMethod: 'token-auth',
    name: null,
    accessTokenTtl: limits.ttl ?? 0,
    accessTokenMaxTtl: limits.maxTtl ?? 0,
    accessTokenNumUsesLimit: limits.uses ?? 0,
  });
  return issued.accessToken;
}

/** A second organization on the same server (written directly: bootstrap makes only the first), with an admin identity and its token. */
export async function otherOrganization(app: TestApp, slug: string) {
  const org = await insertOrganization(app.database.db, { name: `Org ${slug}`, slug });
  const created = await insertIdentity(app.database.db, { name: `${slug}-admin`, authMethod: 'token-auth' });
  await insertIdentityOrgMembership(app.database.db, { identityId: created.id, orgId: org.id, role: 'admin' });
  return { orgId: org.id, name: org.name, token: await issueTestToken(app, created.id) };
}

/**
 * A bootstrapped instance with one project, and helpers to make machine
 * identities with org and project roles and to log them in.
 */
export async function accessFixture(app: TestApp, projectSlug = 'access-project') {
  const admin = await bootstrap(app);
  const created = await app.request('POST', '/api/v2/workspace', { token: admin.token, body: { projectName: 'Access', slug: projectSlug } });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  const projectId: string = created.body.project.id;

  async function call(method: string, url: string, body?: unknown, token = admin.token) {
    const response = await app.request(method, url, { token, body });
    if (response.status !== 200) throw new Error(`${method} ${url} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  /** An identity with an org role and (when given) project roles, with a non-expiring token. */
  async function identity(name: string, orgRole = 'member', projectRoles?: unknown[] | string) {
    const { identity: created } = await call('POST', '/api/v1/identities', { name, organizationId: admin.orgId, role: orgRole });
    if (projectRoles) {
      const roles = typeof projectRoles === 'string' ? [{ role: projectRoles }] : projectRoles;
      await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${created.id}`, { roles });
    }
    const token = await issueToken(created.id);
    return { id: created.id as string, name, token };
  }

  async function issueToken(identityId: string, limits: { ttl?: number; maxTtl?: number; uses?: number } = {}) {
    return issueTestToken(app, identityId, limits);
  }

  /** Universal auth on an identity, and one client secret. */
  async function universalAuth(identityId: string, config: Record<string, unknown> = {}, secret: Record<string, unknown> = {}) {
    const { identityUniversalAuth } = await call('POST', `/api/v1/auth/universal-auth/identities/${identityId}`, config);
    const { clientSecret, clientSecretData } = await call('POST', `/api/v1/auth/universal-auth/identities/${identityId}/client-secrets`, secret);
    return { clientId: identityUniversalAuth.clientId as string, clientSecret: clientSecret as string, clientSecretId: clientSecretData.id as string };
  }

  function login(clientId: string, clientSecret: string, remoteAddress?: string) {
    return inject(app, 'POST', '/api/v1/auth/universal-auth/login', { body: { clientId, clientSecret }, remoteAddress });
  }

  async function foreignAdmin(slug: string): Promise<string> {
    return (await otherOrganization(app, slug)).token;
  }

  /** An org-admin identity acting in process as an operator of this server's own cluster (`local`), as a service call's Actor. */
  async function operatorActor(name: string): Promise<Actor> {
    const created = await identity(name, 'admin');
    return {
      kind: 'identity',
      id: created.id,
      name,
      orgId: admin.orgId,
      orgRole: 'admin',
      tokenId: null,
      authMethod: 'service',
      cluster: 'local',
      ip: null,
      userAgent: 'k8-operator/test',
      userAgentType: 'k8-operator',
    };
  }

  /** Registers the cluster `name` (once) and binds the identity to it: its tokens act for that cluster. */
  async function bindToCluster(identityId: string, name: string, token = admin.token): Promise<string> {
    const { clusters } = await call('GET', '/api/v1/clusters', undefined, token);
    const found = clusters.find((cluster: { name: string }) => cluster.name === name);
    const clusterId: string = found ? found.id : (await call('POST', '/api/v1/clusters', { name }, token)).cluster.id;
    await call('POST', `/api/v1/clusters/${clusterId}/identities`, { identityId }, token);
    return clusterId;
  }

  return { ...admin, projectId, projectSlug, call, identity, operatorActor, issueToken, universalAuth, login, foreignAdmin, bindToCluster };
}

export type AccessFixture = Awaited<ReturnType<typeof accessFixture>>;
