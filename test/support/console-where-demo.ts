import { callCoffer, type CofferProcess } from './coffer-process.ts';

/**
 * The operators of a few clusters, played over HTTP for the console's screenshots (scripts/console-screenshots.ts):
 * each a machine identity with universal auth, admin of the project, bound to its registered cluster; it keeps
 * Integration records and reports their syncs as an operator in another cluster does.
 */
export async function playedClusters(server: CofferProcess, admin: { token: string; orgId: string }, projectId: string, clusters: string[]) {
  const call = async (method: string, path: string, body?: unknown, token = admin.token) => {
    const answer = await callCoffer(server, method, path, token, body);
    if (answer.status !== 200) throw new Error(`${method} ${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const tokens = new Map<string, string>();
  for (const cluster of clusters) {
    const { identity } = await call('POST', '/api/v1/identities', { name: `${cluster}-operator`, organizationId: admin.orgId, role: 'member' });
    await call('POST', `/api/v2/workspace/${projectId}/identity-memberships/${identity.id}`, { roles: [{ role: 'admin' }] });
    const { identityUniversalAuth } = await call('POST', `/api/v1/auth/universal-auth/identities/${identity.id}`, {});
    const { clientSecret } = await call('POST', `/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, {});
    const login = await call('POST', '/api/v1/auth/universal-auth/login', { clientId: identityUniversalAuth.clientId, clientSecret }, '');
    const { cluster: registered } = await call('POST', '/api/v1/clusters', { name: cluster });
    await call('POST', `/api/v1/clusters/${registered.id}/identities`, { identityId: identity.id });
    tokens.set(cluster, login.accessToken as string);
  }
  return {
    /** Keeps the record of Integration `<namespace>/<name>` of `cluster`, writing Secret `secretName`; answers its id. */
    async record(cluster: string, namespace: string, name: string, secretName: string, place: { environment: string; secretPath: string }): Promise<string> {
      const body = { cluster, managedBy: `${namespace}/${name}`, projectId, ...place, app: secretName, owner: namespace, targetEnvironment: namespace };
      return (await call('PUT', '/api/v1/operator/integrations', body, tokens.get(cluster))).integration.id as string;
    },
    async syncResult(
      cluster: string,
      id: string,
      result: { isSynced: boolean; syncMessage: string | null; syncedRevision?: number; targetKeys?: unknown },
    ): Promise<void> {
      await call('POST', `/api/v1/operator/integrations/${id}/sync-result`, result, tokens.get(cluster));
    },
  };
}
