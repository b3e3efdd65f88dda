import type { TestApp } from './test-app.ts';
import { issueTestToken } from './access-fixture.ts';

/**
 * The operator of one cluster, played through the operator API as an operator in another cluster calls it: a machine
 * identity, admin of the project, bound to the registered cluster; it keeps Integration records and reports their
 * syncs. For tests of what the API and the console make of those records without a control plane.
 */
export async function playedOperator(app: TestApp, admin: { token: string; orgId: string }, projectId: string, cluster: string) {
  const call = async (method: string, url: string, body?: unknown, token = admin.token) => {
    const response = await app.request(method, url, { token, body });
    if (response.status !== 200) throw new Error(`${method} ${url} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const { identity } = await call('POST', '/api/v1/identities', { name: `${cluster}-operator`, organizationId: admin.orgId, role: 'member' });
  await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${identity.id}`, { roles: [{ role: 'admin' }] });
  const clusterId = (await call('POST', '/api/v1/clusters', { name: cluster })).cluster.id;
  await call('POST', `/api/v1/clusters/${clusterId}/identities`, { identityId: identity.id });
  const token = await issueTestToken(app, identity.id);
  const environments = (await call('GET', `/api/v1/workspace/${projectId}`)).workspace.environments as { id: string; slug: string }[];
  const environmentIds = Object.fromEntries(environments.map((environment) => [environment.slug, environment.id]));

  return {
    /** Its token, acting for the cluster. */
    token,
    /** Keeps the record of Integration `shop/<name>` (its Secret `<name>-secret`); answers its id. */
    async record(name: string, environment: string, secretPath: string): Promise<string> {
      const body = { cluster, managedBy: `shop/${name}`, projectId, environment, secretPath, app: `${name}-secret`, owner: 'shop', targetEnvironment: 'shop' };
      return (await call('PUT', '/api/v1/operator/integrations', body, token)).integration.id as string;
    },
    /** Reports a sync (and, when given, the places it read). */
    async syncResult(id: string, result: Record<string, unknown>, places?: { environment: string; path: string; recursive?: boolean }[]): Promise<void> {
      const read = places?.map((place) => ({ environmentId: environmentIds[place.environment], path: place.path, recursive: place.recursive ?? false }));
      await call('POST', `/api/v1/operator/integrations/${id}/sync-result`, { ...result, ...(read ? { places: read } : {}) }, token);
    },
  };
}
