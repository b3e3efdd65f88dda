import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { V1Secret } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { type KubeClients, kubeClients, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, startCoffer } from './coffer-process.ts';
import { adminQuery, databaseUrl } from './postgres-server.ts';

export const GROUP = 'coffer.dev';
export const VERSION = 'v1alpha1';

/** Settings shared by every `coffer serve` of one test file: one fresh PostgreSQL database, one key pair. */
export async function cofferEnvironment(leaseNamespace: string): Promise<Record<string, string>> {
  const adminUrl = inject('postgresAdminUrl');
  const name = `${inject('postgresRunPrefix')}_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  return {
    DATABASE_URL: databaseUrl(adminUrl, name),
    COFFER_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    COFFER_AUTH_SECRET: randomBytes(48).toString('base64'),
    KUBECONFIG: inject('kubeconfig'),
    COFFER_OPERATOR_NAMESPACE: leaseNamespace,
    // Instant sync must not depend on the safety-net resync.
    COFFER_RESYNC_INTERVAL: '1h',
    COFFER_LOG_LEVEL: 'info',
  };
}

/** Creates the secret, or updates it when it exists; answers the revision the write committed (its Coffer-Revision header). */
export async function putSecret(
  api: CofferProcess,
  token: string,
  place: { projectId: string; environment: string; secretPath: string },
  key: string,
  value: string,
): Promise<number> {
  const body = { workspaceId: place.projectId, environment: place.environment, secretPath: place.secretPath, secretValue: value };
  let response = await callCoffer(api, 'POST', `/api/v3/secrets/raw/${key}`, token, body);
  if (response.status !== 200) response = await callCoffer(api, 'PATCH', `/api/v3/secrets/raw/${key}`, token, body);
  if (response.status !== 200) throw new Error(`writing ${key} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return Number(response.headers.get('coffer-revision'));
}

/** An API-only server (no operator) and helpers to drive it. */
export async function startApi(environment: Record<string, string>) {
  const api = await startCoffer({ ...environment, COFFER_OPERATOR: 'false' });
  const boot = await callCoffer(api, 'POST', '/api/v1/admin/bootstrap', undefined, {
    email: 'ops@example.com',
    password: 'operator test password',
    organization: 'Cluster Org',
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  return { api, token: boot.body.identity.credentials.token as string };
}

/** The sum of an operator metric's samples whose labels include `labels` (its /metrics, on the probe port). */
export async function operatorMetric(operator: Pick<CofferProcess, 'probes'>, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${operator.probes}/metrics`)).text();
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && wanted.every((pair) => line.includes(pair))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export function startOperatorProcess(
  environment: Record<string, string>,
  extra: Record<string, string> = {},
  probe: '/readyz' | '/healthz' = '/readyz',
): Promise<CofferProcess> {
  return startCoffer({ ...environment, COFFER_OPERATOR: 'true', ...extra }, 60_000, probe);
}

export interface Cluster extends KubeClients {
  apply(plural: string, namespace: string, body: object): Promise<void>;
  get(plural: string, namespace: string, name: string): Promise<any>;
  remove(plural: string, namespace: string, name: string): Promise<void>;
  secret(namespace: string, name: string): Promise<V1Secret | undefined>;
  secretData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  waitReady(plural: string, namespace: string, name: string, condition?: string, timeoutMs?: number): Promise<any>;
  /** Waits until the Secret holds exactly `expected` (decoded). */
  waitForData(namespace: string, name: string, expected: Record<string, string>, what: string, timeoutMs?: number): Promise<Record<string, string>>;
}

/** Clients of the test control plane, or of another one (its kubeconfig). */
export function clusterClients(kubeconfigPath?: string): Cluster {
  const clients = kubeClients(kubeconfigPath);
  const { custom, core } = clients;
  const cluster: Cluster = {
    ...clients,
    async apply(plural, namespace, body) {
      await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, body: { apiVersion: `${GROUP}/${VERSION}`, ...body } });
    },
    get: (plural, namespace, name) => custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, name }),
    async remove(plural, namespace, name) {
      await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural, name });
    },
    async secret(namespace, name) {
      try {
        return await core.readNamespacedSecret({ namespace, name });
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    },
    async secretData(namespace, name) {
      const secret = await cluster.secret(namespace, name);
      if (!secret) return undefined;
      return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
    },
    waitForData(namespace, name, expected, what, timeoutMs = 30_000) {
      return waitFor(
        what,
        async () => {
          const data = await cluster.secretData(namespace, name);
          if (data && isDeepStrictEqual(data, expected)) return data;
          throw new Error(`data keys ${JSON.stringify(Object.keys(data ?? {}).sort())}`);
        },
        { timeoutMs },
      );
    },
    waitReady(plural, namespace, name, condition = 'Ready', timeoutMs = 60_000) {
      return waitFor(
        `${plural} ${namespace}/${name} to be ${condition}`,
        async () => {
          const resource = await cluster.get(plural, namespace, name);
          const found = resource.status?.conditions?.find((entry: { type: string }) => entry.type === condition);
          if (found?.status === 'True' && resource.status.observedGeneration === resource.metadata.generation) return resource;
          throw new Error(`conditions: ${JSON.stringify(resource.status?.conditions ?? [])}`);
        },
        { timeoutMs },
      );
    },
  };
  return cluster;
}
