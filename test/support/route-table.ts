import pg from 'pg';
import { leaseProvider, type MatrixFixture, oidcConfigBody, type Persona, type RolePersona, unique } from './matrix-fixture.ts';

export interface RouteRequest {
  url: string;
  body?: unknown;
  query?: Record<string, string>;
  /** Replaces the persona's token (for routes that consume the caller's own token). */
  token?: string;
}

export interface RouteEntry {
  /** Personas that succeed (2xx); the other role personas get 403. */
  allow: readonly RolePersona[];
  /** A valid request; resources it consumes are made fresh per call. */
  build: (persona: Persona) => Promise<RouteRequest>;
  /** The route acts within the caller's own organization: another organization's caller succeeds there. */
  ownOrg?: boolean;
  /** Answers allowed callers with an endless event stream: only refusals are checked here. */
  streams?: boolean;
  /** Acts on a project no role persona is a member of: the denied ones are told it does not exist (404, not 403). */
  notMember?: boolean;
}

/** Roles made on the machine's PostgreSQL server (trust auth) for PostgreSQL credential rotations; dropRotatedRoles removes them. */
const rotatedRoles: string[] = [];

async function onLocalServer(statement: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Two new login roles a PostgreSQL credential rotation may take turns with. */
async function rotatedRolePair(): Promise<[string, string]> {
  const pair = [unique('coffer_matrix'), unique('coffer_matrix')].map((name) => name.replaceAll('-', '_')) as [string, string];
  for (const role of pair) {
    await onLocalServer(`CREATE ROLE ${role} LOGIN`);
    rotatedRoles.push(role);
  }
  return pair;
}

/** Drops the roles the table's calls made (a test file's afterAll). */
export async function dropRotatedRoles(): Promise<void> {
  for (const role of rotatedRoles.splice(0)) await onLocalServer(`DROP ROLE IF EXISTS ${role}`);
}

/** Signs in to the machine's PostgreSQL server: with trust auth any password does. */
export const LOCAL_SERVER_CREDENTIALS = { host: '127.0.0.1', port: 5432, database: 'postgres', username: 'postgres', password: 'unused-with-trust' };

const ALL = ['viewer', 'member', 'admin', 'orgAdmin'] as const;
const WRITERS = ['member', 'admin', 'orgAdmin'] as const;
const ADMINS = ['admin', 'orgAdmin'] as const;
const ORG_ADMIN = ['orgAdmin'] as const;

/** Every protected route with a valid request and who may call it. Public routes are listed in the test. */
export function routeTable(fx: MatrixFixture): Record<string, RouteEntry> {
  const { ids, fresh } = fx;
  const p = ids.projectId;
  const dev = { workspaceId: p, environment: 'dev' };
  const ds = { projectSlug: ids.projectSlug, environmentSlug: 'dev', path: '/' };
  const ua = '/api/v1/auth/universal-auth/identities';
  const k8s = '/api/v1/auth/kubernetes-auth/identities';
  const jwt = '/api/v1/auth/jwt-auth/identities';
  const identityMemberships = `/api/v2/workspace/${p}/identity-memberships`;
  const privilegeTarget = { identityId: ids.target.id, projectSlug: ids.projectSlug };
  const at =
    (url: string, extra: Omit<RouteRequest, 'url'> = {}) =>
    async () => ({ url, ...extra });
  /** A fresh token of the calling persona's own identity (a rejected caller gets the viewer's). */
  const ownToken = (persona: Persona) => fx.issueToken(fx.personaIdentities[persona in fx.personaIdentities ? (persona as RolePersona) : 'viewer'].id);

  /** A call as the org admin persona, whose identity acts for the registered cluster `matrix` (the operator of the table). */
  const asOperator = async (method: string, url: string, body?: unknown) => {
    const response = await fx.request(method, url, { token: fx.tokens.orgAdmin, body });
    if (response.status !== 200) throw new Error(`${method} ${url} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  /** A SecretsProject's claim and the project slug it asks for, fresh per call (the cluster is the caller's own). */
  const claimBody = () => {
    const slug = unique('claimed').slice(0, 36);
    return { claimant: { namespace: unique('ns'), name: 'project', uid: unique('uid') }, slug, name: 'Matrix claimed' };
  };
  /** A claim the operator declared (creating its project, which no persona but the org admin is a member of). */
  const declared = async () => {
    const body = claimBody();
    await asOperator('POST', '/api/v1/operator/project-claims', body);
    return body;
  };
  const managedBody = (namespace: string) => ({
    managedBy: `${namespace}/app`,
    projectId: p,
    environment: 'dev',
    app: 'app-secrets',
    owner: namespace,
    targetEnvironment: namespace,
  });
  /** The record of an Integration of cluster `matrix`, as its operator keeps it. */
  const managedRecord = async () => (await asOperator('PUT', '/api/v1/operator/integrations', managedBody(unique('ns')))).integration.id as string;
  const cluster = async () => (await ids.call('POST', '/api/v1/clusters', { name: unique('c') })).cluster.id as string;
  /** Deletes the organization's streams, so the next call may make one (at most 10 an organization); builds run at once, so one may find another's stream gone (404). */
  const dropAuditLogStreams = async () => {
    for (const stream of (await ids.call('GET', '/api/v1/audit-log-streams')).auditLogStreams as { id: string }[]) {
      await fx.request('DELETE', `/api/v1/audit-log-streams/${stream.id}`, { token: fx.tokens.orgAdmin });
    }
  };
  const auditLogStream = async () => {
    await dropAuditLogStreams();
    return (await ids.call('POST', '/api/v1/audit-log-streams', { url: 'http://127.0.0.1:9/audit' })).auditLogStream.id as string;
  };

  return {
    // projects
    'POST /api/v2/workspace': { allow: ALL, ownOrg: true, build: at('/api/v2/workspace', { body: { projectName: 'Matrix made' } }) },
    'GET /api/v1/workspace': { allow: ALL, ownOrg: true, build: at('/api/v1/workspace') },
    'GET /api/v1/workspace/:workspaceId': { allow: ALL, build: at(`/api/v1/workspace/${p}`) },
    'GET /api/v1/workspace/:workspaceId/effective-permissions': { allow: ALL, build: at(`/api/v1/workspace/${p}/effective-permissions`) },
    'GET /api/v2/workspace/:slug': { allow: ALL, build: at(`/api/v2/workspace/${ids.projectSlug}`) },
    'GET /api/v1/projects/slug/:slug': { allow: ALL, build: at(`/api/v1/projects/slug/${ids.projectSlug}`) },
    'GET /api/v1/workspace/slug/:slug': { allow: ALL, build: at(`/api/v1/workspace/slug/${ids.projectSlug}`) },
    'PATCH /api/v1/workspace/:workspaceId': { allow: WRITERS, build: at(`/api/v1/workspace/${p}`, { body: { autoCapitalization: true } }) },
    'DELETE /api/v1/workspace/:workspaceId': { allow: ADMINS, build: async () => ({ url: `/api/v1/workspace/${await fresh.project()}` }) },
    // namespace grants
    'POST /api/v1/workspace/:workspaceId/namespace-grants': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/workspace/${p}/namespace-grants`, body: { namespace: unique('ns'), cluster: 'matrix' } }),
    },
    'GET /api/v1/workspace/:workspaceId/namespace-grants': { allow: ALL, build: at(`/api/v1/workspace/${ids.projectSlug}/namespace-grants`) },
    'DELETE /api/v1/workspace/:workspaceId/namespace-grants/:grantId': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/workspace/${p}/namespace-grants/${await fresh.namespaceGrant()}` }),
    },
    // environments
    'POST /api/v1/workspace/:workspaceId/environments': {
      allow: WRITERS,
      build: async () => {
        const slug = unique('e');
        return { url: `/api/v1/workspace/${p}/environments`, body: { name: slug, slug } };
      },
    },
    'PATCH /api/v1/workspace/:workspaceId/environments/:id': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/workspace/${p}/environments/${await fresh.environment()}`, body: { name: unique('renamed') } }),
    },
    'DELETE /api/v1/workspace/:workspaceId/environments/:id': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/workspace/${p}/environments/${await fresh.environment()}` }),
    },
    'GET /api/v1/workspace/:workspaceId/environments/:id': { allow: ALL, build: at(`/api/v1/workspace/${p}/environments/${ids.devId}`) },
    'GET /api/v1/workspace/environments/:envId': { allow: ALL, build: at(`/api/v1/workspace/environments/${ids.devId}`) },
    // folders
    'POST /api/v1/folders': { allow: WRITERS, build: async () => ({ url: '/api/v1/folders', body: { ...dev, path: '/', name: unique('f') } }) },
    'GET /api/v1/folders': { allow: ALL, build: at('/api/v1/folders', { query: { ...dev, path: '/' } }) },
    'GET /api/v1/folders/:id': { allow: ALL, build: at(`/api/v1/folders/${ids.folder.id}`) },
    'PATCH /api/v1/folders/:folderId': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/folders/${(await fresh.folder()).id}`, body: { ...dev, path: '/', name: unique('g') } }),
    },
    'DELETE /api/v1/folders/:folderIdOrName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/folders/${(await fresh.folder()).id}`, body: { ...dev, path: '/' } }),
    },
    // secrets
    'GET /api/v3/secrets/raw': { allow: ALL, build: at('/api/v3/secrets/raw', { query: { ...dev, recursive: 'true', include_imports: 'true' } }) },
    'GET /api/v3/secrets/raw/:secretName': { allow: ALL, build: at(`/api/v3/secrets/raw/${ids.secretName}`, { query: dev }) },
    'POST /api/v3/secrets/raw/:secretName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v3/secrets/raw/${unique('N').replaceAll('-', '_')}`, body: { ...dev, secretValue: 'v' } }),
    },
    'PATCH /api/v3/secrets/raw/:secretName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v3/secrets/raw/${await fresh.secret()}`, body: { ...dev, secretValue: 'changed' } }),
    },
    'DELETE /api/v3/secrets/raw/:secretName': { allow: WRITERS, build: async () => ({ url: `/api/v3/secrets/raw/${await fresh.secret()}`, body: dev }) },
    'POST /api/v3/secrets/batch/raw': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v3/secrets/batch/raw', body: { ...dev, secrets: [{ secretKey: unique('B').replaceAll('-', '_'), secretValue: 'v' }] } }),
    },
    'PATCH /api/v3/secrets/batch/raw': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v3/secrets/batch/raw', body: { ...dev, secrets: [{ secretKey: await fresh.secret(), secretValue: 'changed' }] } }),
    },
    'DELETE /api/v3/secrets/batch/raw': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v3/secrets/batch/raw', body: { ...dev, secrets: [{ secretKey: await fresh.secret(), type: 'shared' }] } }),
    },
    'POST /api/v3/secrets/tags/:secretName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v3/secrets/tags/${await fresh.secret()}`, body: { projectSlug: ids.projectSlug, environment: 'dev', tagSlugs: [ids.tagSlug] } }),
    },
    'DELETE /api/v3/secrets/tags/:secretName': {
      allow: WRITERS,
      build: async () => ({
        url: `/api/v3/secrets/tags/${await fresh.secret([ids.tagId])}`,
        body: { projectSlug: ids.projectSlug, environment: 'dev', tagSlugs: [ids.tagSlug] },
      }),
    },
    // imports
    'POST /api/v1/secret-imports': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v1/secret-imports', body: { ...dev, path: '/', import: { environment: 'prod', path: `/${unique('src')}` } } }),
    },
    'GET /api/v1/secret-imports': { allow: ALL, build: at('/api/v1/secret-imports', { query: { ...dev, path: '/' } }) },
    'GET /api/v1/secret-imports/:secretImportId': { allow: ALL, build: at(`/api/v1/secret-imports/${ids.importId}`) },
    'PATCH /api/v1/secret-imports/:secretImportId': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/secret-imports/${await fresh.import()}`, body: { ...dev, path: '/', import: { path: `/${unique('moved')}` } } }),
    },
    'DELETE /api/v1/secret-imports/:secretImportId': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/secret-imports/${await fresh.import()}`, body: { ...dev, path: '/' } }),
    },
    // secrets, v4 (the current CLI and operator)
    'GET /api/v4/secrets': { allow: ALL, build: at('/api/v4/secrets', { query: { projectId: p, environment: 'dev', recursive: 'true' } }) },
    'GET /api/v4/secrets/:secretName': { allow: ALL, build: at(`/api/v4/secrets/${ids.secretName}`, { query: { projectId: p, environment: 'dev' } }) },
    'POST /api/v4/secrets/:secretName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v4/secrets/${unique('N').replaceAll('-', '_')}`, body: { projectId: p, environment: 'dev', secretValue: 'v' } }),
    },
    'PATCH /api/v4/secrets/:secretName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v4/secrets/${await fresh.secret()}`, body: { projectId: p, environment: 'dev', secretValue: 'changed' } }),
    },
    'DELETE /api/v4/secrets/:secretName': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v4/secrets/${await fresh.secret()}`, body: { projectId: p, environment: 'dev' } }),
    },
    'POST /api/v4/secrets/batch': {
      allow: WRITERS,
      build: async () => ({
        url: '/api/v4/secrets/batch',
        body: { projectId: p, environment: 'dev', secrets: [{ secretKey: unique('B').replaceAll('-', '_'), secretValue: 'v' }] },
      }),
    },
    'PATCH /api/v4/secrets/batch': {
      allow: WRITERS,
      build: async () => ({
        url: '/api/v4/secrets/batch',
        body: { projectId: p, environment: 'dev', secrets: [{ secretKey: await fresh.secret(), secretValue: 'changed' }] },
      }),
    },
    'DELETE /api/v4/secrets/batch': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v4/secrets/batch', body: { projectId: p, environment: 'dev', secrets: [{ secretKey: await fresh.secret() }] } }),
    },
    // project events (allowed callers get a stream: test/api/project-events.test.ts serves them over a real socket)
    'POST /api/v1/events/subscribe/project-events': {
      allow: ALL,
      streams: true,
      build: at('/api/v1/events/subscribe/project-events', { body: { projectId: p, register: [{ event: 'secret:update' }] } }),
    },
    // the change stream, narrowed to the project (test/api/change-stream.test.ts serves it over a real socket)
    'GET /api/v1/changes/stream': { allow: ALL, streams: true, build: at('/api/v1/changes/stream', { query: { projectId: p } }) },
    // the revision barrier (test/api/revision-barrier.test.ts); another organization's caller gets 404
    'GET /api/v1/changes/wait': { allow: ALL, build: async () => ({ url: '/api/v1/changes/wait', query: { revision: await fresh.revision(), timeout: '1ms' } }) },
    // approval policies and change requests (review, status and merge take a user: every identity persona gets 403)
    'POST /api/v1/secret-approvals': {
      allow: ADMINS,
      build: async () => ({
        url: '/api/v1/secret-approvals',
        body: { workspaceId: p, name: unique('policy'), environment: 'prod', secretPath: `/${unique('gated')}`, approvers: [{ id: ids.approverUserId }], approvals: 1 },
      }),
    },
    'GET /api/v1/secret-approvals': { allow: ALL, build: at('/api/v1/secret-approvals', { query: { workspaceId: p } }) },
    'PATCH /api/v1/secret-approvals/:policyId': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/secret-approvals/${await fresh.approvalPolicy(ids.approverUserId)}`, body: { enforcementLevel: 'soft' } }),
    },
    'DELETE /api/v1/secret-approvals/:policyId': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/secret-approvals/${await fresh.approvalPolicy(ids.approverUserId)}` }),
    },
    'GET /api/v1/secret-approval-requests': { allow: ALL, build: at('/api/v1/secret-approval-requests', { query: { workspaceId: p } }) },
    'GET /api/v1/secret-approval-requests/count': { allow: ALL, build: at('/api/v1/secret-approval-requests/count', { query: { workspaceId: p } }) },
    'GET /api/v1/secret-approval-requests/:requestId': { allow: ALL, build: at(`/api/v1/secret-approval-requests/${ids.approvalRequestId}`) },
    'POST /api/v1/secret-approval-requests/:requestId/review': {
      allow: [],
      build: at(`/api/v1/secret-approval-requests/${ids.approvalRequestId}/review`, { body: { status: 'approved' } }),
    },
    'POST /api/v1/secret-approval-requests/:requestId/status': {
      allow: [],
      build: at(`/api/v1/secret-approval-requests/${ids.approvalRequestId}/status`, { body: { status: 'close' } }),
    },
    'POST /api/v1/secret-approval-requests/:requestId/merge': { allow: [], build: at(`/api/v1/secret-approval-requests/${ids.approvalRequestId}/merge`, { body: {} }) },
    // snapshots and point-in-time restore (each restore on a fresh folder of its own)
    'GET /api/v1/workspace/:workspaceId/secret-snapshots': {
      allow: ALL,
      build: at(`/api/v1/workspace/${p}/secret-snapshots`, { query: { environment: 'dev', path: '/' } }),
    },
    'GET /api/v1/workspace/:workspaceId/secret-snapshots/count': {
      allow: ALL,
      build: at(`/api/v1/workspace/${p}/secret-snapshots/count`, { query: { environment: 'dev', path: '/' } }),
    },
    'GET /api/v1/secret-snapshot/:snapshotId': { allow: ALL, build: async () => ({ url: `/api/v1/secret-snapshot/${(await fresh.snapshot()).revision}` }) },
    'POST /api/v1/secret-snapshot/:snapshotId/rollback': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/secret-snapshot/${(await fresh.snapshot()).revision}/rollback` }),
    },
    'POST /api/v1/workspace/:workspaceId/secrets/restore': {
      allow: WRITERS,
      build: async () => {
        const { path, revision } = await fresh.snapshot();
        return { url: `/api/v1/workspace/${p}/secrets/restore`, body: { environment: 'dev', secretPath: path, revision: Number(revision) } };
      },
    },
    // webhooks (a project holds at most 20: the table's calls stay below that)
    'POST /api/v1/webhooks': {
      allow: WRITERS,
      build: at('/api/v1/webhooks', { body: { workspaceId: p, environment: 'dev', webhookUrl: 'http://127.0.0.1:9/hook' } }),
    },
    'GET /api/v1/webhooks': { allow: ALL, build: at('/api/v1/webhooks', { query: { workspaceId: p } }) },
    'PATCH /api/v1/webhooks/:webhookId': { allow: WRITERS, build: async () => ({ url: `/api/v1/webhooks/${ids.webhookId}`, body: { isDisabled: true } }) },
    'POST /api/v1/webhooks/:webhookId/replay': { allow: WRITERS, build: async () => ({ url: `/api/v1/webhooks/${ids.webhookId}/replay`, body: { fromRevision: 0 } }) },
    'POST /api/v1/webhooks/:webhookId/test': { allow: WRITERS, build: async () => ({ url: `/api/v1/webhooks/${ids.webhookId}/test` }) },
    'DELETE /api/v1/webhooks/:webhookId': { allow: WRITERS, build: async () => ({ url: `/api/v1/webhooks/${await fresh.webhook()}` }) },
    'GET /api/v1/webhooks/:webhookId/deliveries': { allow: ALL, build: async () => ({ url: `/api/v1/webhooks/${ids.webhookId}/deliveries` }) },
    // tags
    'POST /api/v1/workspace/:projectId/tags': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/workspace/${p}/tags`, body: { slug: unique('t'), color: '#00ff00' } }),
    },
    'GET /api/v1/workspace/:projectId/tags': { allow: ALL, build: at(`/api/v1/workspace/${p}/tags`) },
    'GET /api/v1/workspace/:projectId/tags/:tagId': { allow: ALL, build: at(`/api/v1/workspace/${p}/tags/${ids.tagId}`) },
    'GET /api/v1/workspace/:projectId/tags/slug/:tagSlug': { allow: ALL, build: at(`/api/v1/workspace/${p}/tags/slug/${ids.tagSlug}`) },
    'PATCH /api/v1/workspace/:projectId/tags/:tagId': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/workspace/${p}/tags/${await fresh.tag()}`, body: { color: '#0000ff' } }),
    },
    'DELETE /api/v1/workspace/:projectId/tags/:tagId': { allow: WRITERS, build: async () => ({ url: `/api/v1/workspace/${p}/tags/${await fresh.tag()}` }) },
    'POST /api/v1/projects/:projectId/tags': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/projects/${p}/tags`, body: { slug: unique('t'), color: '#00ff00' } }),
    },
    'GET /api/v1/projects/:projectId/tags/slug/:tagSlug': { allow: ALL, build: at(`/api/v1/projects/${p}/tags/slug/${ids.tagSlug}`) },
    // dynamic secrets (configuring is the project admin's; leasing the members')
    'POST /api/v1/dynamic-secrets': {
      allow: ADMINS,
      build: async () => ({ url: '/api/v1/dynamic-secrets', body: { ...ds, name: unique('pg'), provider: leaseProvider(), defaultTTL: '1h' } }),
    },
    'PATCH /api/v1/dynamic-secrets/:name': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/dynamic-secrets/${await fresh.dynamicSecret()}`, body: { ...ds, data: { defaultTTL: '2h' } } }),
    },
    'DELETE /api/v1/dynamic-secrets/:name': { allow: ADMINS, build: async () => ({ url: `/api/v1/dynamic-secrets/${await fresh.dynamicSecret()}`, body: ds }) },
    'GET /api/v1/dynamic-secrets/:name': { allow: ALL, build: async () => ({ url: `/api/v1/dynamic-secrets/${await fresh.dynamicSecret()}`, query: ds }) },
    'GET /api/v1/dynamic-secrets': { allow: ALL, build: at('/api/v1/dynamic-secrets', { query: ds }) },
    'GET /api/v1/dynamic-secrets/:name/leases': { allow: ALL, build: async () => ({ url: `/api/v1/dynamic-secrets/${await fresh.dynamicSecret()}/leases`, query: ds }) },
    'POST /api/v1/dynamic-secrets/leases': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v1/dynamic-secrets/leases', body: { ...ds, dynamicSecretName: await fresh.dynamicSecret() } }),
    },
    'DELETE /api/v1/dynamic-secrets/leases/:leaseId': { allow: WRITERS, build: async () => ({ url: `/api/v1/dynamic-secrets/leases/${await fresh.lease()}`, body: ds }) },
    'POST /api/v1/dynamic-secrets/leases/:leaseId/renew': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/dynamic-secrets/leases/${await fresh.lease()}/renew`, body: { ...ds, ttl: '1m' } }),
    },
    'GET /api/v1/dynamic-secrets/leases/:leaseId': { allow: ALL, build: async () => ({ url: `/api/v1/dynamic-secrets/leases/${await fresh.lease()}`, query: ds }) },
    // integrations
    'POST /api/v1/integration-auth/access-token': {
      allow: WRITERS,
      build: at('/api/v1/integration-auth/access-token', { body: { workspaceId: p, integration: 'github', accessToken: 'provider-token' } }),
    },
    'GET /api/v1/integration-auth/:integrationAuthId': { allow: ALL, build: at(`/api/v1/integration-auth/${ids.integrationAuthId}`) },
    'DELETE /api/v1/integration-auth/:integrationAuthId': { allow: WRITERS, build: async () => ({ url: `/api/v1/integration-auth/${await fresh.integrationAuth()}` }) },
    'DELETE /api/v1/integration-auth': {
      allow: WRITERS,
      build: async () => (await fresh.integrationAuth('gitlab'), { url: '/api/v1/integration-auth', query: { integration: 'gitlab', projectId: p } }),
    },
    'GET /api/v1/workspace/:workspaceId/authorizations': { allow: ALL, build: at(`/api/v1/workspace/${p}/authorizations`) },
    'POST /api/v1/integration': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v1/integration', body: { integrationAuthId: ids.integrationAuthId, sourceEnvironment: 'dev', app: unique('app') } }),
    },
    'GET /api/v1/integration/:integrationId': { allow: ALL, build: at(`/api/v1/integration/${ids.integrationId}`) },
    'PATCH /api/v1/integration/:integrationId': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v1/integration/${await fresh.integration()}`, body: { isActive: false } }),
    },
    'DELETE /api/v1/integration/:integrationId': { allow: WRITERS, build: async () => ({ url: `/api/v1/integration/${await fresh.integration()}` }) },
    'POST /api/v1/integration/:integrationId/sync': { allow: WRITERS, build: at(`/api/v1/integration/${ids.integrationId}/sync`) },
    'GET /api/v1/workspace/:workspaceId/integrations': { allow: ALL, build: at(`/api/v1/workspace/${p}/integrations`) },
    'GET /api/v1/workspace/:workspaceId/integrations/syncing': {
      allow: ALL,
      build: at(`/api/v1/workspace/${p}/integrations/syncing`, { query: { environment: 'dev', secretPath: '/' } }),
    },
    // the operator of another cluster (test/api/operator-api.test.ts follows the calls through)
    'GET /api/v1/operator/installation': { allow: ALL, ownOrg: true, build: at('/api/v1/operator/installation') },
    // an operator's writes and claims: only a credential bound to a registered cluster (test/api/registered-clusters.test.ts)
    'POST /api/v1/operator/project-claims': { allow: ORG_ADMIN, build: async () => ({ url: '/api/v1/operator/project-claims', body: claimBody() }) },
    'POST /api/v1/operator/project-claims/release': {
      allow: ORG_ADMIN,
      build: async () => ({ url: '/api/v1/operator/project-claims/release', body: { claimant: (await declared()).claimant, deleteProject: false } }),
    },
    'POST /api/v1/operator/project-claims/authorize-use': {
      allow: ORG_ADMIN,
      build: async () => {
        const { claimant } = await declared();
        return {
          url: '/api/v1/operator/project-claims/authorize-use',
          body: { declaring: { ...claimant, allowedNamespaces: [] }, using: { namespace: claimant.namespace } },
        };
      },
    },
    // who claimed what: the claim's own operator and project admins; anyone else is told there is none
    'GET /api/v1/operator/project-claims': {
      allow: ORG_ADMIN,
      notMember: true,
      build: async () => {
        const { slug } = await declared();
        return { url: '/api/v1/operator/project-claims', query: { cluster: 'matrix', slug } };
      },
    },
    'PUT /api/v1/operator/integrations': { allow: ORG_ADMIN, build: async () => ({ url: '/api/v1/operator/integrations', body: managedBody(unique('ns')) }) },
    'GET /api/v1/operator/integrations': { allow: ORG_ADMIN, build: at('/api/v1/operator/integrations', { query: { namespace: 'shop' } }) },
    'DELETE /api/v1/operator/integrations': {
      allow: ORG_ADMIN,
      build: async () => {
        const namespace = unique('ns');
        await asOperator('PUT', '/api/v1/operator/integrations', managedBody(namespace));
        return { url: '/api/v1/operator/integrations', query: { managedBy: `${namespace}/app` } };
      },
    },
    'POST /api/v1/operator/integrations/:integrationId/sync-result': {
      allow: ORG_ADMIN,
      build: async () => ({ url: `/api/v1/operator/integrations/${await managedRecord()}/sync-result`, body: { isSynced: true, syncMessage: null, syncedRevision: 1 } }),
    },
    'POST /api/v1/operator/integrations/:integrationId/reload-result': {
      allow: ORG_ADMIN,
      build: async () => ({ url: `/api/v1/operator/integrations/${await managedRecord()}/reload-result`, body: { reloadedRevision: 1 } }),
    },
    // audit log streams (an organization holds at most 10: each call that makes one deletes it again)
    'POST /api/v1/audit-log-streams': {
      allow: ORG_ADMIN,
      ownOrg: true,
      build: async () => {
        await dropAuditLogStreams();
        return { url: '/api/v1/audit-log-streams', body: { url: 'http://127.0.0.1:9/audit' } };
      },
    },
    'GET /api/v1/audit-log-streams': { allow: ORG_ADMIN, ownOrg: true, build: at('/api/v1/audit-log-streams') },
    'GET /api/v1/audit-log-streams/:id': { allow: ORG_ADMIN, build: async () => ({ url: `/api/v1/audit-log-streams/${await auditLogStream()}` }) },
    'PATCH /api/v1/audit-log-streams/:id': {
      allow: ORG_ADMIN,
      build: async () => ({ url: `/api/v1/audit-log-streams/${await auditLogStream()}`, body: { url: 'http://127.0.0.1:9/other' } }),
    },
    'DELETE /api/v1/audit-log-streams/:id': { allow: ORG_ADMIN, build: async () => ({ url: `/api/v1/audit-log-streams/${await auditLogStream()}` }) },
    // registered clusters
    'POST /api/v1/clusters': { allow: ORG_ADMIN, ownOrg: true, build: async () => ({ url: '/api/v1/clusters', body: { name: unique('c') } }) },
    'GET /api/v1/clusters': { allow: ALL, ownOrg: true, build: at('/api/v1/clusters') },
    'GET /api/v1/clusters/:clusterId': { allow: ALL, build: async () => ({ url: `/api/v1/clusters/${await cluster()}` }) },
    'DELETE /api/v1/clusters/:clusterId': { allow: ORG_ADMIN, build: async () => ({ url: `/api/v1/clusters/${await cluster()}` }) },
    'POST /api/v1/clusters/:clusterId/identities': {
      allow: ORG_ADMIN,
      build: async () => ({ url: `/api/v1/clusters/${await cluster()}/identities`, body: { identityId: await fresh.identity() } }),
    },
    // dropping an orphaned claim: organization admins only (test/api/orphaned-claims.test.ts)
    'DELETE /api/v1/project-claims': {
      allow: ORG_ADMIN,
      build: async () => {
        const { claimant } = await declared();
        return { url: '/api/v1/project-claims', query: { cluster: 'matrix', namespace: claimant.namespace, name: claimant.name } };
      },
    },
    'DELETE /api/v1/clusters/:clusterId/identities/:identityId': {
      allow: ORG_ADMIN,
      build: async () => {
        const [clusterId, identityId] = [await cluster(), await fresh.identity()];
        await ids.call('POST', `/api/v1/clusters/${clusterId}/identities`, { identityId });
        return { url: `/api/v1/clusters/${clusterId}/identities/${identityId}` };
      },
    },
    'GET /api/v1/operator/secrets': { allow: ALL, build: at('/api/v1/operator/secrets', { query: { projectId: p, environment: 'dev' } }) },
    // PostgreSQL connections and secret rotations
    ...rotationRoutes(fx),
    // audit log
    'GET /api/v1/workspace/:workspaceId/audit-logs': { allow: ALL, build: at(`/api/v1/workspace/${p}/audit-logs`) },
    'GET /api/v1/organization/audit-logs': { allow: ALL, ownOrg: true, build: at('/api/v1/organization/audit-logs') },
    // identities
    'POST /api/v1/identities': { allow: ALL, build: async () => ({ url: '/api/v1/identities', body: { name: unique('made'), organizationId: ids.orgId } }) },
    'GET /api/v1/identities': { allow: ALL, build: at('/api/v1/identities', { query: { orgId: ids.orgId } }) },
    'GET /api/v1/identities/:identityId': { allow: ALL, build: at(`/api/v1/identities/${ids.target.id}`) },
    'PATCH /api/v1/identities/:identityId': {
      allow: ALL,
      build: async () => ({ url: `/api/v1/identities/${await fresh.identity()}`, body: { name: unique('renamed') } }),
    },
    'DELETE /api/v1/identities/:identityId': { allow: ALL, build: async () => ({ url: `/api/v1/identities/${await fresh.identity()}` }) },
    // universal auth
    'POST /api/v1/auth/universal-auth/identities/:identityId': { allow: ALL, build: async () => ({ url: `${ua}/${await fresh.identity()}`, body: {} }) },
    'GET /api/v1/auth/universal-auth/identities/:identityId': { allow: ALL, build: at(`${ua}/${ids.target.id}`) },
    'PATCH /api/v1/auth/universal-auth/identities/:identityId': { allow: ALL, build: at(`${ua}/${ids.target.id}`, { body: { accessTokenNumUsesLimit: 0 } }) },
    'DELETE /api/v1/auth/universal-auth/identities/:identityId': { allow: ALL, build: async () => ({ url: `${ua}/${(await fresh.universalAuthIdentity()).id}` }) },
    'POST /api/v1/auth/universal-auth/identities/:identityId/client-secrets': {
      allow: ALL,
      build: at(`${ua}/${ids.target.id}/client-secrets`, { body: { description: 'matrix' } }),
    },
    'GET /api/v1/auth/universal-auth/identities/:identityId/client-secrets': { allow: ALL, build: at(`${ua}/${ids.target.id}/client-secrets`) },
    'GET /api/v1/auth/universal-auth/identities/:identityId/client-secrets/:clientSecretId': {
      allow: ALL,
      build: at(`${ua}/${ids.target.id}/client-secrets/${ids.target.clientSecretId}`),
    },
    'POST /api/v1/auth/universal-auth/identities/:identityId/client-secrets/:clientSecretId/revoke': {
      allow: ALL,
      build: async () => {
        const identity = await fresh.universalAuthIdentity();
        return { url: `${ua}/${identity.id}/client-secrets/${identity.clientSecretId}/revoke` };
      },
    },
    // Kubernetes Auth and JWT Auth (test/api/kubernetes-auth.test.ts, test/api/jwt-auth.test.ts)
    'POST /api/v1/auth/kubernetes-auth/identities/:identityId': {
      allow: ALL,
      build: async () => ({ url: `${k8s}/${await fresh.identity()}`, body: { kubernetesHost: 'https://kubernetes.default.svc' } }),
    },
    'GET /api/v1/auth/kubernetes-auth/identities/:identityId': { allow: ALL, build: async () => ({ url: `${k8s}/${await fresh.kubernetesAuthIdentity()}` }) },
    'PATCH /api/v1/auth/kubernetes-auth/identities/:identityId': {
      allow: ALL,
      build: async () => ({ url: `${k8s}/${await fresh.kubernetesAuthIdentity()}`, body: { allowedNamespaces: 'apps' } }),
    },
    'DELETE /api/v1/auth/kubernetes-auth/identities/:identityId': { allow: ALL, build: async () => ({ url: `${k8s}/${await fresh.kubernetesAuthIdentity()}` }) },
    'POST /api/v1/auth/jwt-auth/identities/:identityId': {
      allow: ALL,
      build: async () => ({ url: `${jwt}/${await fresh.identity()}`, body: { configurationType: 'jwks', jwksUrl: 'https://issuer.example.com/jwks' } }),
    },
    'GET /api/v1/auth/jwt-auth/identities/:identityId': { allow: ALL, build: async () => ({ url: `${jwt}/${await fresh.jwtAuthIdentity()}` }) },
    'PATCH /api/v1/auth/jwt-auth/identities/:identityId': {
      allow: ALL,
      build: async () => ({ url: `${jwt}/${await fresh.jwtAuthIdentity()}`, body: { boundSubject: 'matrix' } }),
    },
    'DELETE /api/v1/auth/jwt-auth/identities/:identityId': { allow: ALL, build: async () => ({ url: `${jwt}/${await fresh.jwtAuthIdentity()}` }) },
    // tokens
    'POST /api/v1/auth/logout': {
      allow: ALL,
      ownOrg: true,
      build: async (persona) => {
        if (persona in fx.personaIdentities) return { url: '/api/v1/auth/logout', token: await ownToken(persona) };
        // The other organization's caller logs out a token of its own, never the one the matrix keeps using.
        return { url: '/api/v1/auth/logout', ...(persona === 'otherOrg' ? { token: await fx.issueToken(fx.otherOrgIdentityId) } : {}) };
      },
    },
    // single sign-on (test/api/sso-oidc.test.ts)
    'GET /api/v1/sso/oidc/config': { allow: ALL, build: async () => ({ url: '/api/v1/sso/oidc/config', query: { orgSlug: await fresh.oidcConfig() } }) },
    'POST /api/v1/sso/oidc/config': {
      allow: ORG_ADMIN,
      build: async () => ({ url: '/api/v1/sso/oidc/config', body: oidcConfigBody(await fresh.noOidcConfig()) }),
    },
    'PATCH /api/v1/sso/oidc/config': {
      allow: ORG_ADMIN,
      build: async () => ({ url: '/api/v1/sso/oidc/config', body: { orgSlug: await fresh.oidcConfig(), scopes: 'openid email' } }),
    },
    'PATCH /api/v1/organization/:organizationId': { allow: ORG_ADMIN, build: at(`/api/v1/organization/${ids.orgId}`, { body: { enforceMfa: false } }) },
    // sessions: users only, every persona here is an identity (test/api/mfa-sessions.test.ts)
    'GET /api/v1/auth/sessions': { allow: [], build: at('/api/v1/auth/sessions') },
    'DELETE /api/v1/auth/sessions': { allow: [], build: at('/api/v1/auth/sessions') },
    'DELETE /api/v1/auth/sessions/:sessionId': { allow: [], build: at('/api/v1/auth/sessions/00000000-0000-4000-8000-000000000000') },
    'DELETE /api/v1/organization/:organizationId/users/:userId/sessions': {
      allow: ORG_ADMIN,
      build: at(`/api/v1/organization/${ids.orgId}/users/${ids.userId}/sessions`),
    },
    // the console's session: users only (test/console/console-server.test.ts)
    'GET /api/v1/console/session': { allow: [], build: at('/api/v1/console/session') },
    'DELETE /api/v1/console/session': { allow: [], build: at('/api/v1/console/session') },
    'PUT /api/v1/console/session/organization': { allow: [], build: at('/api/v1/console/session/organization', { body: { organizationId: ids.orgId } }) },
    'DELETE /api/v1/organization/:organizationId/users/:userId/mfa': { allow: ORG_ADMIN, build: at(`/api/v1/organization/${ids.orgId}/users/${ids.userId}/mfa`) },
    // users and memberships
    'POST /api/v1/invite-org/signup': {
      allow: ORG_ADMIN,
      build: async () => ({ url: '/api/v1/invite-org/signup', body: { inviteeEmails: [`${unique('inv')}@example.com`], organizationId: ids.orgId } }),
    },
    'GET /api/v2/organizations/:organizationId/memberships': { allow: ALL, build: at(`/api/v2/organizations/${ids.orgId}/memberships`) },
    'POST /api/v2/workspace/:projectId/memberships': {
      allow: WRITERS,
      build: async () => ({ url: `/api/v2/workspace/${p}/memberships`, body: { emails: [await fresh.invitedEmail()] } }),
    },
    'GET /api/v1/workspace/:workspaceId/memberships': { allow: ALL, build: at(`/api/v1/workspace/${p}/memberships`) },
    'PATCH /api/v1/workspace/:workspaceId/memberships/:membershipId': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/workspace/${p}/memberships/${await fresh.userMembership()}`, body: { roles: [{ role: 'viewer' }] } }),
    },
    'DELETE /api/v1/workspace/:workspaceId/memberships/:membershipId': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/workspace/${p}/memberships/${await fresh.userMembership()}` }),
    },
    'POST /api/v2/workspace/:projectId/identity-memberships/:identityId': {
      allow: WRITERS,
      build: async () => ({ url: `${identityMemberships}/${await fresh.identity()}`, body: { roles: [{ role: 'viewer' }] } }),
    },
    'GET /api/v2/workspace/:projectId/identity-memberships': { allow: ALL, build: at(identityMemberships) },
    'GET /api/v2/workspace/:projectId/identity-memberships/:identityId': { allow: ALL, build: at(`${identityMemberships}/${ids.target.id}`) },
    'PATCH /api/v2/workspace/:projectId/identity-memberships/:identityId': {
      allow: WRITERS,
      build: async () => ({ url: `${identityMemberships}/${await fresh.identityMember()}`, body: { roles: [{ role: 'no-access' }] } }),
    },
    'DELETE /api/v2/workspace/:projectId/identity-memberships/:identityId': {
      allow: WRITERS,
      build: async () => ({ url: `${identityMemberships}/${await fresh.identityMember()}` }),
    },
    // roles
    'POST /api/v1/workspace/:workspaceId/roles': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/workspace/${p}/roles`, body: { slug: unique('role'), name: 'R', permissions: [{ subject: 'secrets', action: ['read'] }] } }),
    },
    'GET /api/v1/workspace/:workspaceId/roles': { allow: ALL, build: at(`/api/v1/workspace/${ids.projectSlug}/roles`) },
    'GET /api/v1/workspace/:workspaceId/roles/slug/:roleSlug': { allow: ALL, build: at(`/api/v1/workspace/${p}/roles/slug/viewer`) },
    'PATCH /api/v1/workspace/:workspaceId/roles/:roleId': {
      allow: ADMINS,
      build: async () => ({ url: `/api/v1/workspace/${p}/roles/${await fresh.role()}`, body: { name: 'Renamed' } }),
    },
    'DELETE /api/v1/workspace/:workspaceId/roles/:roleId': { allow: ADMINS, build: async () => ({ url: `/api/v1/workspace/${p}/roles/${await fresh.role()}` }) },
    // additional privileges
    'POST /api/v1/additional-privilege/identity/permanent': {
      allow: WRITERS,
      build: async () => ({
        url: '/api/v1/additional-privilege/identity/permanent',
        body: {
          identityId: await fresh.identityMember(),
          projectSlug: ids.projectSlug,
          privilegePermission: { actions: ['read'], subject: 'secrets', conditions: { environment: 'dev' } },
        },
      }),
    },
    'POST /api/v1/additional-privilege/identity/temporary': {
      allow: WRITERS,
      build: async () => ({
        url: '/api/v1/additional-privilege/identity/temporary',
        body: {
          identityId: await fresh.identityMember(),
          projectSlug: ids.projectSlug,
          permissions: [{ subject: 'secrets', action: ['read'] }],
          temporaryMode: 'relative',
          temporaryRange: '1h',
          temporaryAccessStartTime: new Date().toISOString(),
        },
      }),
    },
    'PATCH /api/v1/additional-privilege/identity': {
      allow: WRITERS,
      build: async () => ({
        url: '/api/v1/additional-privilege/identity',
        body: { ...privilegeTarget, privilegeSlug: await fresh.privilege(ids.target.id), privilegeDetails: { slug: unique('pv2') } },
      }),
    },
    'DELETE /api/v1/additional-privilege/identity': {
      allow: WRITERS,
      build: async () => ({ url: '/api/v1/additional-privilege/identity', body: { ...privilegeTarget, privilegeSlug: await fresh.privilege(ids.target.id) } }),
    },
    'GET /api/v1/additional-privilege/identity/:privilegeSlug': {
      allow: WRITERS,
      build: at(`/api/v1/additional-privilege/identity/${ids.privilegeSlug}`, { query: privilegeTarget }),
    },
    'GET /api/v1/additional-privilege/identity': { allow: ALL, build: at('/api/v1/additional-privilege/identity', { query: privilegeTarget }) },
  };
}

/** `/api/v1/app-connections/postgres` and `/api/v2/secret-rotations`: connections are the project admins', rotations the writers'. */
function rotationRoutes(fx: MatrixFixture): Record<string, RouteEntry> {
  const { ids } = fx;
  const p = ids.projectId;
  const connections = '/api/v1/app-connections/postgres';
  const connection = async () =>
    (await ids.call('POST', connections, { name: unique('conn'), projectId: p, credentials: LOCAL_SERVER_CREDENTIALS })).appConnection as { id: string; name: string };
  const generatedBody = () => ({
    name: unique('gen'),
    projectId: p,
    environment: 'dev',
    secretPath: '/',
    rotationInterval: 1,
    parameters: { kind: 'uuid' },
    secretsMapping: { value: unique('GEN').replaceAll('-', '_') },
  });
  const generated = async () => (await ids.call('POST', '/api/v2/secret-rotations/generated-secret', generatedBody())).secretRotation as { id: string; name: string };
  const postgresBody = async () => {
    const [username1, username2] = await rotatedRolePair();
    const key = unique('PG').replaceAll('-', '_');
    return {
      name: unique('pg'),
      projectId: p,
      connectionId: (await connection()).id,
      environment: 'dev',
      secretPath: '/',
      rotationInterval: 1,
      parameters: { username1, username2 },
      secretsMapping: { username: `${key}_USER`, password: `${key}_PASSWORD` },
    };
  };
  const postgres = async () =>
    (await ids.call('POST', '/api/v2/secret-rotations/postgres-credentials', await postgresBody())).secretRotation as { id: string; name: string };
  const entries: Record<string, RouteEntry> = {
    [`GET ${connections}`]: { allow: ALL, build: async () => ({ url: connections, query: { projectId: p } }) },
    [`GET ${connections}/:connectionId`]: { allow: ALL, build: async () => ({ url: `${connections}/${(await connection()).id}` }) },
    [`GET ${connections}/connection-name/:connectionName`]: {
      allow: ALL,
      build: async () => ({ url: `${connections}/connection-name/${(await connection()).name}`, query: { projectId: p } }),
    },
    [`POST ${connections}`]: {
      allow: ADMINS,
      build: async () => ({ url: connections, body: { name: unique('conn'), projectId: p, credentials: LOCAL_SERVER_CREDENTIALS } }),
    },
    [`PATCH ${connections}/:connectionId`]: {
      allow: ADMINS,
      build: async () => ({ url: `${connections}/${(await connection()).id}`, body: { description: 'changed' } }),
    },
    [`DELETE ${connections}/:connectionId`]: { allow: ADMINS, build: async () => ({ url: `${connections}/${(await connection()).id}` }) },
    'GET /api/v2/secret-rotations': { allow: ALL, build: async () => ({ url: '/api/v2/secret-rotations', query: { projectId: p } }) },
  };
  const kinds = [
    ['generated-secret', generated, async () => generatedBody()],
    ['postgres-credentials', postgres, postgresBody],
  ] as const;
  for (const [type, existing, body] of kinds) {
    const base = `/api/v2/secret-rotations/${type}`;
    Object.assign(entries, {
      [`GET ${base}`]: { allow: ALL, build: async () => ({ url: base, query: { projectId: p } }) },
      [`GET ${base}/:rotationId`]: { allow: ALL, build: async () => ({ url: `${base}/${(await existing()).id}` }) },
      [`GET ${base}/rotation-name/:rotationName`]: {
        allow: ALL,
        build: async () => ({ url: `${base}/rotation-name/${(await existing()).name}`, query: { projectId: p, environment: 'dev', secretPath: '/' } }),
      },
      [`POST ${base}`]: { allow: WRITERS, build: async () => ({ url: base, body: await body() }) },
      [`PATCH ${base}/:rotationId`]: { allow: WRITERS, build: async () => ({ url: `${base}/${(await existing()).id}`, body: { rotationInterval: 2 } }) },
      [`DELETE ${base}/:rotationId`]: { allow: WRITERS, build: async () => ({ url: `${base}/${(await existing()).id}` }) },
      [`GET ${base}/:rotationId/generated-credentials`]: { allow: ALL, build: async () => ({ url: `${base}/${(await existing()).id}/generated-credentials` }) },
      [`POST ${base}/:rotationId/rotate-secrets`]: { allow: WRITERS, build: async () => ({ url: `${base}/${(await existing()).id}/rotate-secrets` }) },
    } satisfies Record<string, RouteEntry>);
  }
  entries['POST /api/v2/secret-rotations/postgres-credentials/:rotationId/retire-now'] = {
    allow: WRITERS,
    build: async () => {
      // a rotation that ran twice has a previous credential to retire
      const { id } = await postgres();
      await ids.call('POST', `/api/v2/secret-rotations/postgres-credentials/${id}/rotate-secrets`);
      return { url: `/api/v2/secret-rotations/postgres-credentials/${id}/retire-now` };
    },
  };
  return entries;
}
