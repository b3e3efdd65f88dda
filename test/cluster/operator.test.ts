import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * The operator end to end: `coffer serve` processes against PostgreSQL and
 * the real control plane. One process serves the API only (it keeps taking
 * changes while the operator is killed); another runs the operator.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let other: TestNamespace;
let environment: Record<string, string>;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
const slug = `shop-${Date.now().toString(36)}`;

const call = (method: string, path: string, body?: unknown) => callCoffer(api, method, path, token, body);
const createSecret = (key: string, value: string, environmentSlug = 'dev', secretPath = '/') =>
  call('POST', `/api/v3/secrets/raw/${key}`, { workspaceId: projectId, environment: environmentSlug, secretPath, secretValue: value });
const updateSecret = (key: string, value: string, secretPath = '/') =>
  call('PATCH', `/api/v3/secrets/raw/${key}`, { workspaceId: projectId, environment: 'dev', secretPath, secretValue: value });
const deleteSecret = (key: string, secretPath = '/') => call('DELETE', `/api/v3/secrets/raw/${key}`, { workspaceId: projectId, environment: 'dev', secretPath });

function integration(name: string, target: Record<string, unknown>, spec: Record<string, unknown> = {}) {
  return { kind: 'Integration', metadata: { name }, spec: { projectRef: { name: 'shop' }, environment: 'dev', target, ...spec } };
}

const waitForData = (ns: string, name: string, expected: Record<string, string>, what: string, timeoutMs?: number) =>
  cluster.waitForData(ns, name, expected, what, timeoutMs);

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('operator');
  other = await createTestNamespace('tenant');
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
}, 180_000);

afterEach((context) => {
  // On failure, show what the operator said (log lines carry no secret values).
  if (context.task.result?.state === 'fail') process.stderr.write(`--- operator log tail ---\n${operator?.output.join('').split('\n').slice(-40).join('\n')}\n`);
});

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
  await other?.cleanup();
});

describe('SecretsProject, SecretImport and Integration', () => {
  test('apply → project with environments, an import, and a Secret with exactly the expected keys', async () => {
    await cluster.apply('secretsprojects', namespace.name, {
      kind: 'SecretsProject',
      metadata: { name: 'shop' },
      spec: { name: 'Shop', slug, environments: [{ name: 'QA', slug: 'qa' }], allowedNamespaces: [] },
    });
    const project = await cluster.waitReady('secretsprojects', namespace.name, 'shop');
    projectId = project.status.projectId;
    expect(project.status.slug).toBe(slug);
    expect(project.status.environments.map((environment: { slug: string }) => environment.slug)).toEqual(['dev', 'staging', 'prod', 'qa']);
    const fromApi = await call('GET', `/api/v1/workspace/${projectId}`);
    expect(fromApi.body.workspace).toMatchObject({ name: 'Shop', slug });

    expect((await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'staging', name: 'shared' })).status).toBe(200);
    expect((await createSecret('SHARED_TOKEN', 'from-staging', 'staging', '/shared')).status).toBe(200);
    expect((await createSecret('DB_PASSWORD', 'imported-loses', 'staging', '/shared')).status).toBe(200);
    expect((await createSecret('DB_PASSWORD', 's3cret')).status).toBe(200);
    expect((await createSecret('API_URL', 'https://api.example.com')).status).toBe(200);

    await cluster.apply('secretimports', namespace.name, {
      kind: 'SecretImport',
      metadata: { name: 'shared' },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', path: '/', import: { environment: 'staging', path: '/shared' } },
    });
    const secretImport = await cluster.waitReady('secretimports', namespace.name, 'shared');
    const imports = await callCoffer(api, 'GET', `/api/v1/secret-imports?workspaceId=${projectId}&environment=dev&path=/`, token);
    expect(imports.body.secretImports.map((entry: { id: string }) => entry.id)).toEqual([secretImport.status.secretImportId]);

    await cluster.apply('integrations', namespace.name, integration('app', { name: 'app-secrets' }));
    await cluster.waitReady('integrations', namespace.name, 'app', 'Synced');
    await waitForData(namespace.name, 'app-secrets', { API_URL: 'https://api.example.com', DB_PASSWORD: 's3cret', SHARED_TOKEN: 'from-staging' }, 'the first sync');
    const secret = await cluster.secret(namespace.name, 'app-secrets');
    expect(secret!.metadata!.labels!['app.kubernetes.io/managed-by']).toBe('coffer');
    expect(secret!.metadata!.ownerReferences![0]).toMatchObject({ kind: 'Integration', name: 'app', controller: true });
    expect(JSON.stringify(secret!.metadata!.annotations)).not.toContain('s3cret');
    expect(secret!.metadata!.managedFields!.some((field) => field.manager === 'coffer')).toBe(true);
    const status = (await cluster.get('integrations', namespace.name, 'app')).status;
    expect(status).toMatchObject({ secretCount: 3, projectSlug: slug, integrationId: expect.any(String), syncedRevision: expect.any(Number) });
  });

  test('secrets created, updated and deleted through the API reach the Secret without any CR change or resync', async () => {
    await createSecret('NEW_FLAG', 'on');
    await updateSecret('DB_PASSWORD', 'rotated');
    await deleteSecret('API_URL');
    await waitForData(namespace.name, 'app-secrets', { DB_PASSWORD: 'rotated', NEW_FLAG: 'on', SHARED_TOKEN: 'from-staging' }, 'instant sync', 15_000);
    // A change to the imported folder travels through the import.
    await call('PATCH', '/api/v3/secrets/raw/SHARED_TOKEN', { workspaceId: projectId, environment: 'staging', secretPath: '/shared', secretValue: 'rotated-too' });
    await waitForData(namespace.name, 'app-secrets', { DB_PASSWORD: 'rotated', NEW_FLAG: 'on', SHARED_TOKEN: 'rotated-too' }, 'sync through the import', 15_000);
  });

  test('drift is repaired: an edited and a deleted Secret are put back, with an Event', async () => {
    const expected = { DB_PASSWORD: 'rotated', NEW_FLAG: 'on', SHARED_TOKEN: 'rotated-too' };
    await cluster.core.patchNamespacedSecret(
      { namespace: namespace.name, name: 'app-secrets', body: { data: { DB_PASSWORD: Buffer.from('tampered').toString('base64') } } },
      (await import('@kubernetes/client-node')).setHeaderOptions('Content-Type', 'application/merge-patch+json'),
    );
    await waitForData(namespace.name, 'app-secrets', expected, 'the edited Secret to be restored', 15_000);
    await cluster.core.deleteNamespacedSecret({ namespace: namespace.name, name: 'app-secrets' });
    await waitForData(namespace.name, 'app-secrets', expected, 'the deleted Secret to be recreated', 15_000);
    const events = await waitFor('a DriftRepaired event', async () => {
      const list = await cluster.core.listNamespacedEvent({ namespace: namespace.name });
      const found = list.items.filter((event) => event.reason === 'DriftRepaired' && event.involvedObject.name === 'app');
      return found.length >= 2 ? found : false;
    });
    expect(events.every((event) => !event.message!.includes('rotated'))).toBe(true);
  });

  test('PATCH isActive false pauses the sync; true catches up', async () => {
    const integrationId = (await cluster.get('integrations', namespace.name, 'app')).status.integrationId;
    expect((await call('PATCH', `/api/v1/integration/${integrationId}`, { isActive: false })).status).toBe(200);
    await waitFor('status Paused', async () => {
      const status = (await cluster.get('integrations', namespace.name, 'app')).status;
      return status.conditions.find((condition: { type: string }) => condition.type === 'Synced')?.reason === 'Paused';
    });
    // a witness reading the same place: its sync of the change is the positive event after the one the paused Integration must not make
    await cluster.apply('integrations', namespace.name, integration('witness', { name: 'witness-secrets' }));
    await waitFor('the witness to sync', async () => (await cluster.secretData(namespace.name, 'witness-secrets'))?.NEW_FLAG === 'on');
    await updateSecret('NEW_FLAG', 'off');
    await waitFor('the witness to sync the change', async () => (await cluster.secretData(namespace.name, 'witness-secrets'))?.NEW_FLAG === 'off');
    expect((await cluster.secretData(namespace.name, 'app-secrets'))!.NEW_FLAG).toBe('on');
    await cluster.remove('integrations', namespace.name, 'witness');
    const record = await call('GET', `/api/v1/integration/${integrationId}`);
    expect(record.body.integration).toMatchObject({ isActive: false, integration: 'kubernetes', app: 'app-secrets', owner: namespace.name, secretPath: '/' });

    expect((await call('PATCH', `/api/v1/integration/${integrationId}`, { isActive: true })).status).toBe(200);
    await waitForData(namespace.name, 'app-secrets', { DB_PASSWORD: 'rotated', NEW_FLAG: 'off', SHARED_TOKEN: 'rotated-too' }, 'catching up', 15_000);
  });

  test('creationPolicy Owner, Orphan and Merge behave as documented on deletion', async () => {
    await cluster.core.createNamespacedSecret({ namespace: namespace.name, body: { metadata: { name: 'existing' }, stringData: { KEEP_ME: 'mine' } } });
    await cluster.apply('integrations', namespace.name, integration('orphan', { name: 'orphan-secrets', creationPolicy: 'Orphan' }));
    await cluster.apply('integrations', namespace.name, integration('merge', { name: 'existing', creationPolicy: 'Merge' }));
    await cluster.waitReady('integrations', namespace.name, 'orphan', 'Synced');
    await cluster.waitReady('integrations', namespace.name, 'merge', 'Synced');
    const merged = await cluster.secretData(namespace.name, 'existing');
    expect(merged).toEqual({ KEEP_ME: 'mine', DB_PASSWORD: 'rotated', NEW_FLAG: 'off', SHARED_TOKEN: 'rotated-too' });

    for (const name of ['app', 'orphan', 'merge']) await cluster.remove('integrations', namespace.name, name);
    await waitFor('the owned Secret to be deleted', async () => (await cluster.secret(namespace.name, 'app-secrets')) === undefined);
    await waitForData(namespace.name, 'existing', { KEEP_ME: 'mine' }, 'merged keys to be removed');
    expect(await cluster.secretData(namespace.name, 'orphan-secrets')).toMatchObject({ NEW_FLAG: 'off' });
    await waitFor('the integration records to be deleted', async () => {
      const list = await call('GET', `/api/v1/workspace/${projectId}/integrations`);
      return list.body.integrations.length === 0;
    });
  });

  test('an Integration pointing at another namespace’s project is refused and reads nothing', async () => {
    const reads = async () =>
      (await call('GET', `/api/v1/workspace/${projectId}/audit-logs?eventType=get-secrets&userAgentType=k8-operator&limit=1000`)).body.auditLogs.length;
    const before = await reads();
    await cluster.apply('integrations', other.name, {
      kind: 'Integration',
      metadata: { name: 'steal' },
      spec: { projectSlug: slug, environment: 'dev', target: { name: 'stolen' } },
    });
    const refused = await waitFor('Ready=False Forbidden', async () => {
      const resource = await cluster.get('integrations', other.name, 'steal');
      return resource.status?.conditions?.find((condition: { type: string; reason: string }) => condition.type === 'Ready' && condition.reason === 'Forbidden');
    });
    expect(refused.status).toBe('False');
    expect(await cluster.secret(other.name, 'stolen')).toBeUndefined();
    expect(await reads()).toBe(before);

    // Allowing the namespace on the SecretsProject lets it through.
    await cluster.custom.patchNamespacedCustomObject(
      {
        group: 'coffer.dev',
        version: 'v1alpha1',
        namespace: namespace.name,
        plural: 'secretsprojects',
        name: 'shop',
        body: { spec: { allowedNamespaces: [other.name] } },
      },
      (await import('@kubernetes/client-node')).setHeaderOptions('Content-Type', 'application/merge-patch+json'),
    );
    await cluster.waitReady('integrations', other.name, 'steal', 'Synced');
    expect(await cluster.secretData(other.name, 'stolen')).toMatchObject({ NEW_FLAG: 'off' });
    await cluster.remove('integrations', other.name, 'steal');
  });
});

describe('first sync and Events', () => {
  test('a Secret of the target name that Coffer does not manage is never overwritten: Ready=False SecretConflict and a Warning Event', async () => {
    await cluster.core.createNamespacedSecret({ namespace: namespace.name, body: { metadata: { name: 'foreign' }, stringData: { OWNED_BY: 'someone-else' } } });
    await cluster.apply('integrations', namespace.name, integration('clash', { name: 'foreign' }));
    const conflict = await waitFor('Ready=False SecretConflict', async () => {
      const resource = await cluster.get('integrations', namespace.name, 'clash');
      return resource.status?.conditions?.find((condition: { type: string; reason: string }) => condition.type === 'Ready' && condition.reason === 'SecretConflict');
    });
    expect(conflict.status).toBe('False');
    await waitFor('a SecretConflict Warning event', async () => {
      const list = await cluster.core.listNamespacedEvent({ namespace: namespace.name });
      return list.items.some((event) => event.type === 'Warning' && event.reason === 'SecretConflict' && event.involvedObject.name === 'clash');
    });
    const foreign = await cluster.secret(namespace.name, 'foreign');
    expect(await cluster.secretData(namespace.name, 'foreign')).toEqual({ OWNED_BY: 'someone-else' });
    expect(foreign!.metadata!.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
    expect(foreign!.metadata!.managedFields!.some((field) => field.manager === 'coffer')).toBe(false);
    await cluster.remove('integrations', namespace.name, 'clash');
    await waitFor('the Integration to be gone', async () => !(await cluster.get('integrations', namespace.name, 'clash').catch(() => undefined)));
    expect(await cluster.secretData(namespace.name, 'foreign')).toEqual({ OWNED_BY: 'someone-else' });
  });

  test('a first sync creates the Secret with Coffer as its only field manager and records no Event (the status says it); an update records Synced; dropped Events are counted in the metrics', async () => {
    await cluster.apply('integrations', namespace.name, integration('fresh', { name: 'fresh-secrets' }));
    await cluster.waitReady('integrations', namespace.name, 'fresh', 'Synced');
    const secret = await cluster.secret(namespace.name, 'fresh-secrets');
    expect(secret!.metadata!.managedFields!.map((field) => `${field.manager} ${field.operation}`)).toEqual(['coffer Apply']);
    await createSecret('FRESH_CHANGE', 'changed');
    await waitFor('the change in the Secret', async () => (await cluster.secretData(namespace.name, 'fresh-secrets'))?.FRESH_CHANGE === 'changed');
    const synced = await waitFor('a Synced event', async () => {
      const list = await cluster.core.listNamespacedEvent({ namespace: namespace.name });
      const found = list.items.filter((item) => item.type === 'Normal' && item.reason === 'Synced' && item.involvedObject.name === 'fresh');
      return found.length > 0 && found;
    });
    // Events are posted in order: the one of the update is there, and none came before it for the creation
    expect(synced.map((event) => event.message)).toEqual([expect.stringMatching(/^Secret 'fresh-secrets' updated to revision \d+ \(\d+ keys\)$/)]);
    await deleteSecret('FRESH_CHANGE');
    const metrics = await (await fetch(`${operator.probes}/metrics`)).text();
    expect(metrics).toContain('# TYPE coffer_operator_events_dropped_total counter');
    await cluster.remove('integrations', namespace.name, 'fresh');
  });
});

describe('resilience', () => {
  test('killing the operator while changes keep arriving: after a restart the Secret converges with no missing key', async () => {
    await cluster.apply('integrations', namespace.name, integration('burst', { name: 'burst-secrets' }, { secretPath: '/burst' }));
    expect((await call('POST', '/api/v1/folders', { workspaceId: projectId, environment: 'dev', name: 'burst' })).status).toBe(200);
    await cluster.waitReady('integrations', namespace.name, 'burst', 'Synced');
    const expected: Record<string, string> = {};
    for (let index = 0; index < 30; index++) {
      if (index === 10) await stopCoffer(operator, 'SIGKILL');
      expect((await createSecret(`KEY_${index}`, `value-${index}`, 'dev', '/burst')).status).toBe(200);
      expected[`KEY_${index}`] = `value-${index}`;
    }
    operator = await startOperatorProcess(environment);
    await waitForData(namespace.name, 'burst-secrets', expected, 'convergence after the restart', 60_000);
  });

  test('a second replica stays passive and takes over when the leader stops', async () => {
    const second = await startOperatorProcess(environment);
    try {
      const holder = async () =>
        (
          await cluster.kc
            .makeApiClient((await import('@kubernetes/client-node')).CoordinationV1Api)
            .readNamespacedLease({ namespace: namespace.name, name: 'coffer-operator' })
        ).spec?.holderIdentity;
      const first = await waitFor('a lease holder', holder);
      expect(await stopCoffer(operator)).toBe(0);
      const next = await waitFor('another holder', async () => {
        const current = await holder();
        return current && current !== first ? current : false;
      });
      expect(next).toBeTruthy();
      await createSecret('AFTER_FAILOVER', 'yes', 'dev', '/burst');
      await waitFor('the new leader to sync', async () => (await cluster.secretData(namespace.name, 'burst-secrets'))?.AFTER_FAILOVER === 'yes', { timeoutMs: 30_000 });
    } finally {
      operator = second;
    }
  });

  test('the audit export shows the operator’s reads as k8-operator', async () => {
    const response = await call('GET', `/api/v1/workspace/${projectId}/audit-logs?eventType=get-secrets&userAgentType=k8-operator&limit=5`);
    expect(response.body.auditLogs.length).toBeGreaterThan(0);
    for (const entry of response.body.auditLogs) {
      expect(entry).toMatchObject({ userAgentType: 'k8-operator', actor: { type: 'identity', metadata: { name: 'coffer-operator' } }, event: { type: 'get-secrets' } });
      expect(entry.userAgent).toMatch(/^k8-operator\//);
    }
  });

  test('deletionPolicy: Retain keeps the project, Delete removes it', async () => {
    await cluster.apply('secretsprojects', namespace.name, {
      kind: 'SecretsProject',
      metadata: { name: 'scratch' },
      spec: { name: 'Scratch', deletionPolicy: 'Delete' },
    });
    const scratch = await cluster.waitReady('secretsprojects', namespace.name, 'scratch');
    expect(scratch.status.slug).toBe(`${namespace.name}-scratch`.slice(0, 36).replace(/-+$/, ''));
    await cluster.remove('secretsprojects', namespace.name, 'scratch');
    await waitFor('the scratch project to be deleted', async () => (await call('GET', `/api/v1/workspace/${scratch.status.projectId}`)).status === 404);

    await cluster.remove('integrations', namespace.name, 'burst');
    await cluster.remove('secretimports', namespace.name, 'shared');
    await cluster.remove('secretsprojects', namespace.name, 'shop');
    await waitFor('the shop resource to be gone', async () => {
      try {
        await cluster.get('secretsprojects', namespace.name, 'shop');
        return false;
      } catch (error) {
        return (error as { code?: number }).code === 404;
      }
    });
    expect((await call('GET', `/api/v1/workspace/${projectId}`)).status).toBe(200);
  });
});
