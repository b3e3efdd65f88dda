import { CoordinationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, startCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * Issue 14 parts 1-2 on the real control plane: a SecretsProject never takes
 * a project it was not granted (nothing renamed, read or deleted; rows
 * compared), a grant given, used and revoked; a second installation on the
 * same cluster never writes to what the first manages (its apiserver writes
 * counted), and a kubeconfig alone does not start an operator.
 */
let cluster: Cluster;
let home: TestNamespace;
let attacker: TestNamespace;
let environment: Record<string, string>;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let victimId: string;
const victimSlug = `prod-app-${Date.now().toString(36)}`;
const mergePatch = setHeaderOptions('Content-Type', 'application/merge-patch+json');

const call = (method: string, path: string, body?: unknown) => callCoffer(api, method, path, token, body);

async function query<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Every row that makes up the victim project, as text (the project, its environments, folders, secrets, versions, members, grants, claims). */
async function projectRows(projectId: string): Promise<string[]> {
  const tables = [
    ['projects', 'id = $1'],
    ['project_environments', 'project_id = $1'],
    ['secret_folders', 'env_id IN (SELECT id FROM project_environments WHERE project_id = $1)'],
    ['secrets', 'folder_id IN (SELECT f.id FROM secret_folders f JOIN project_environments e ON e.id = f.env_id WHERE e.project_id = $1)'],
    ['identity_project_memberships', 'project_id = $1'],
    ['namespace_grants', 'project_id = $1'],
    ['project_claims', 'project_id = $1'],
    ['integrations', 'env_id IN (SELECT id FROM project_environments WHERE project_id = $1)'],
  ];
  const rows: string[] = [];
  for (const [table, where] of tables) {
    const found = await query<{ row: string }>(environment.DATABASE_URL!, `SELECT row_to_json(t)::text AS row FROM ${table} t WHERE ${where} ORDER BY 1`, [projectId]);
    rows.push(...found.map((entry) => `${table} ${entry.row}`));
  }
  return rows;
}

const operatorReads = async () =>
  (await call('GET', `/api/v1/workspace/${victimId}/audit-logs?eventType=get-secrets&userAgentType=k8-operator&limit=1000`)).body.auditLogs.length;

async function condition(plural: string, namespace: string, name: string, type = 'Ready') {
  const resource = await cluster.get(plural, namespace, name);
  return resource.status?.conditions?.find((entry: { type: string }) => entry.type === type);
}

/** Changes the attacker's Integration's spec and waits until the operator has reconciled that generation and refused it. */
async function reconciledRefused(name: string, spec: Record<string, unknown>): Promise<void> {
  await cluster.custom.patchNamespacedCustomObject(
    { group: 'coffer.dev', version: 'v1alpha1', namespace: attacker.name, plural: 'integrations', name, body: { spec } },
    mergePatch,
  );
  await waitFor(`integrations ${attacker.name}/${name}: the new generation reconciled and refused`, async () => {
    const resource = await cluster.get('integrations', attacker.name, name);
    const ready = resource.status?.conditions?.find((entry: { type: string }) => entry.type === 'Ready');
    return resource.status?.observedGeneration === resource.metadata.generation && ready?.status === 'False';
  });
}

const waitForReason = (plural: string, namespace: string, name: string, reason: string, type = 'Ready') =>
  waitFor(
    `${plural} ${namespace}/${name} ${type} reason ${reason}`,
    async () => {
      const found = await condition(plural, namespace, name, type);
      return found?.reason === reason ? found : false;
    },
    { timeoutMs: 60_000 },
  );

beforeAll(async () => {
  cluster = clusterClients();
  home = await createTestNamespace('trust-home');
  attacker = await createTestNamespace('trust-attacker');
  environment = await cofferEnvironment(home.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
  const created = await call('POST', '/api/v2/workspace', { projectName: 'Prod App', slug: victimSlug });
  victimId = created.body.project.id;
  for (const [key, value] of [
    ['DB_PASSWORD', 'prod-db-password'],
    ['API_TOKEN', 'prod-api-token'],
  ]) {
    expect((await call('POST', `/api/v3/secrets/raw/${key}`, { workspaceId: victimId, environment: 'prod', secretValue: value })).status).toBe(200);
  }
}, 180_000);

afterEach((context) => {
  if (context.task.result?.state === 'fail') process.stderr.write(`--- operator log tail ---\n${operator?.output.join('').split('\n').slice(-40).join('\n')}\n`);
});

afterAll(async () => {
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await home?.cleanup();
  await attacker?.cleanup();
});

describe('project grants', () => {
  test('a SecretsProject naming an existing project without a grant: Ready=False GrantMissing with the call that gives one; the project row for row unchanged; nothing read or synced', async () => {
    const before = await projectRows(victimId);
    const reads = await operatorReads();
    await cluster.apply('secretsprojects', attacker.name, {
      kind: 'SecretsProject',
      metadata: { name: 'steal' },
      spec: { name: 'Renamed by attacker', slug: victimSlug, deletionPolicy: 'Delete', environments: [{ name: 'Loot', slug: 'loot' }] },
    });
    await cluster.apply('integrations', attacker.name, {
      kind: 'Integration',
      metadata: { name: 'loot' },
      spec: { projectRef: { name: 'steal' }, environment: 'prod', target: { name: 'loot' } },
    });
    const refused = await waitForReason('secretsprojects', attacker.name, 'steal', 'GrantMissing');
    expect(refused.status).toBe('False');
    expect(refused.message).toContain(`POST /api/v1/workspace/${victimSlug}/namespace-grants {"cluster":"local","namespace":"${attacker.name}"}`);
    await waitFor('the Integration to be refused', async () => (await condition('integrations', attacker.name, 'loot'))?.status === 'False');
    await waitFor('a GrantMissing Warning event', async () => {
      const events = await cluster.core.listNamespacedEvent({ namespace: attacker.name });
      return events.items.some((event) => event.type === 'Warning' && event.reason === 'GrantMissing' && event.involvedObject.name === 'steal');
    });
    expect(await cluster.secret(attacker.name, 'loot')).toBeUndefined();
    expect(await projectRows(victimId)).toEqual(before);
    expect(await operatorReads()).toBe(reads);
  });

  test('a status written by hand (projectId of the victim) does not let an Integration read it', async () => {
    const before = await projectRows(victimId);
    await cluster.custom.patchNamespacedCustomObjectStatus(
      {
        group: 'coffer.dev',
        version: 'v1alpha1',
        namespace: attacker.name,
        plural: 'secretsprojects',
        name: 'steal',
        body: { status: { projectId: victimId, slug: victimSlug } },
      },
      mergePatch,
    );
    await cluster.apply('integrations', attacker.name, {
      kind: 'Integration',
      metadata: { name: 'by-slug' },
      spec: { projectSlug: victimSlug, environment: 'prod', target: { name: 'by-slug' } },
    });
    await waitFor('the by-slug Integration to be refused', async () => (await condition('integrations', attacker.name, 'by-slug'))?.status === 'False');
    // the positive event for 'loot' too: a reconcile of a new generation since the forged status, refused (a status is
    // written after anything its reconcile did, so a wrong Secret would be in place)
    await reconciledRefused('loot', { isActive: true });
    expect(await cluster.secret(attacker.name, 'loot')).toBeUndefined();
    expect(await cluster.secret(attacker.name, 'by-slug')).toBeUndefined();
    expect(await projectRows(victimId)).toEqual(before);
    await cluster.remove('integrations', attacker.name, 'by-slug');
  });

  test('a grant given: the SecretsProject claims the project at once and its Integration syncs', async () => {
    const grant = await call('POST', `/api/v1/workspace/${victimSlug}/namespace-grants`, { namespace: attacker.name });
    expect(grant.status).toBe(200);
    const ready = await cluster.waitReady('secretsprojects', attacker.name, 'steal');
    expect(ready.status.projectId).toBe(victimId);
    await cluster.waitReady('integrations', attacker.name, 'loot', 'Synced');
    expect(await cluster.secretData(attacker.name, 'loot')).toEqual({ DB_PASSWORD: 'prod-db-password', API_TOKEN: 'prod-api-token' });
    const claims = await query(environment.DATABASE_URL!, 'SELECT namespace, name, created_project FROM project_claims WHERE project_id = $1', [victimId]);
    expect(claims).toEqual([{ namespace: attacker.name, name: 'steal', created_project: false }]);
  });

  test('revoked: Ready=False GrantRevoked, the copy in the namespace deleted, and later changes no longer read for it', async () => {
    const grants = (await call('GET', `/api/v1/workspace/${victimId}/namespace-grants`)).body.grants;
    const grantId = grants.find((grant: { namespace: string }) => grant.namespace === attacker.name).id;
    expect((await call('DELETE', `/api/v1/workspace/${victimId}/namespace-grants/${grantId}`)).status).toBe(200);
    await waitForReason('secretsprojects', attacker.name, 'steal', 'GrantRevoked');
    await waitForReason('integrations', attacker.name, 'loot', 'GrantRevoked', 'Synced');
    await waitFor('the copy to be deleted', async () => (await cluster.secret(attacker.name, 'loot')) === undefined);
    const reads = await operatorReads();
    expect((await call('PATCH', '/api/v3/secrets/raw/DB_PASSWORD', { workspaceId: victimId, environment: 'prod', secretValue: 'rotated-after-revoke' })).status).toBe(
      200,
    );
    // the positive event: a reconcile of a new generation since the change, refused without reading
    await reconciledRefused('loot', { recursive: true });
    expect(await cluster.secret(attacker.name, 'loot')).toBeUndefined();
    expect(await operatorReads()).toBe(reads);
  });

  test('deletionPolicy Delete on a claimed project: the resource goes, the project stays', async () => {
    await cluster.remove('integrations', attacker.name, 'loot');
    await cluster.remove('secretsprojects', attacker.name, 'steal');
    await waitFor('the SecretsProject to be gone', async () => !(await cluster.get('secretsprojects', attacker.name, 'steal').catch(() => undefined)));
    expect((await call('GET', `/api/v1/workspace/${victimId}`)).status).toBe(200);
    expect(await query(environment.DATABASE_URL!, 'SELECT 1 FROM project_claims WHERE project_id = $1', [victimId])).toEqual([]);
  });

  test('a SecretsProject that creates its project: a grant of origin created is listed; Delete removes only that project', async () => {
    await cluster.apply('secretsprojects', home.name, { kind: 'SecretsProject', metadata: { name: 'own' }, spec: { name: 'Own', deletionPolicy: 'Delete' } });
    const own = await cluster.waitReady('secretsprojects', home.name, 'own');
    const grants = (await call('GET', `/api/v1/workspace/${own.status.projectId}/namespace-grants`)).body.grants;
    expect(grants).toEqual([
      expect.objectContaining({
        cluster: 'local',
        namespace: home.name,
        origin: 'created',
        grantedBy: expect.objectContaining({ type: 'identity', name: 'coffer-operator' }),
      }),
    ]);
    expect(own.status.installationId).toMatch(/^[0-9a-f-]{36}$/);
    await cluster.remove('secretsprojects', home.name, 'own');
    await waitFor('the created project to be deleted', async () => (await call('GET', `/api/v1/workspace/${own.status.projectId}`)).status === 404);
    expect((await call('GET', `/api/v1/workspace/${victimId}`)).status).toBe(200);
  });
});

describe('installations', () => {
  let homeProjectId: string;
  let firstInstallation: string;

  const writesOf = async (server: CofferProcess) => {
    const metrics = await (await fetch(`${server.probes}/metrics`)).text();
    const writes: Record<string, number> = {};
    for (const match of metrics.matchAll(/^coffer_operator_kube_requests_total\{verb="(\w+)",resource="([\w/]+)"\} (\d+)/gm)) {
      if (match[1] !== 'get') writes[`${match[1]} ${match[2]}`] = Number(match[3]);
    }
    return writes;
  };

  /** How many reconciles of Integrations the operator of `server` has finished, by its metrics. */
  const integrationReconcilesOf = async (server: CofferProcess) => {
    const metrics = await (await fetch(`${server.probes}/metrics`)).text();
    const lines = metrics.split('\n').filter((line) => line.startsWith('coffer_operator_reconciles_total{') && line.includes('kind="Integration"'));
    return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };

  beforeAll(async () => {
    await cluster.apply('secretsprojects', home.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop' } });
    homeProjectId = (await cluster.waitReady('secretsprojects', home.name, 'shop')).status.projectId;
    expect((await call('POST', '/api/v3/secrets/raw/SHOP_KEY', { workspaceId: homeProjectId, environment: 'dev', secretValue: 'from-the-first' })).status).toBe(200);
    await cluster.apply('integrations', home.name, {
      kind: 'Integration',
      metadata: { name: 'app' },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'app-secrets' } },
    });
    await cluster.waitReady('integrations', home.name, 'app', 'Synced');
    firstInstallation = (await query<{ id: string }>(environment.DATABASE_URL!, 'SELECT id FROM installation'))[0]!.id;
  });

  test('the start log says which cluster, namespaces, Lease and installation the operator acts on', () => {
    const start = operator.output
      .join('')
      .split('\n')
      .find((line) => line.includes('operator starting for cluster'));
    expect(start).toBeDefined();
    expect(JSON.parse(start!)).toMatchObject({
      cluster: 'local',
      namespaces: 'all',
      lease: `${home.name}/coffer-operator`,
      installationId: firstInstallation,
      server: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
    });
  });

  test('an Integration whose target Secret belongs to another installation: Ready=False InstallationConflict, the Secret untouched', async () => {
    const other = '00000000-0000-4000-8000-0000000000aa';
    await cluster.core.createNamespacedSecret({
      namespace: home.name,
      body: {
        metadata: { name: 'theirs', labels: { 'app.kubernetes.io/managed-by': 'coffer' }, annotations: { 'coffer.dev/installation': other } },
        stringData: { THEIR_KEY: 'theirs' },
      },
    });
    await cluster.apply('integrations', home.name, {
      kind: 'Integration',
      metadata: { name: 'clash' },
      spec: { projectRef: { name: 'shop' }, environment: 'dev', target: { name: 'theirs' } },
    });
    const refused = await waitForReason('integrations', home.name, 'clash', 'InstallationConflict');
    expect(refused.message).toContain(other);
    expect(await cluster.secretData(home.name, 'theirs')).toEqual({ THEIR_KEY: 'theirs' });
    await cluster.remove('integrations', home.name, 'clash');
  });

  test('managed Secrets, CR status and integration records carry the installation', async () => {
    const secret = await cluster.secret(home.name, 'app-secrets');
    expect(secret!.metadata!.annotations!['coffer.dev/installation']).toBe(firstInstallation);
    const integration = await cluster.get('integrations', home.name, 'app');
    expect(integration.status.installationId).toBe(firstInstallation);
    // an Owner Integration is claimed by its Secret (created only if absent) and its first status write: no finalizer
    expect(integration.metadata.annotations?.['coffer.dev/installation']).toBeUndefined();
    expect(integration.metadata.finalizers).toBeUndefined();
    expect(secret!.metadata!.ownerReferences!.map((owner) => owner.uid)).toEqual([integration.metadata.uid]);
    const records = (await call('GET', `/api/v1/workspace/${homeProjectId}/integrations`)).body.integrations;
    expect(records[0].metadata).toMatchObject({ installationId: firstInstallation, cluster: 'local', namespace: home.name, name: 'app' });
    const lease = await cluster.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: home.name, name: 'coffer-operator' });
    expect(lease.metadata!.annotations!['coffer.dev/installation']).toBe(firstInstallation);
    expect(lease.spec!.holderIdentity!.startsWith(`${firstInstallation}_`)).toBe(true);
  });

  test('a second installation (fresh database, a kubeconfig, --operator true) on its own Lease: Conflict, named at start, and not one write to what the first manages', async () => {
    const second = await cofferEnvironment(attacker.name);
    const laptop = await startOperatorProcess(second);
    try {
      expect(
        (await callCoffer(laptop, 'POST', '/api/v1/admin/bootstrap', undefined, { email: 'dev@example.com', password: 'laptop password', organization: 'Laptop' }))
          .status,
      ).toBe(200);
      await waitFor(
        'the second installation to name the first',
        async () =>
          laptop.output.join('').includes(`managed by installation ${firstInstallation}`) ||
          laptop.output.join('').includes(`managed by Coffer installation ${firstInstallation}`),
        { timeoutMs: 60_000 },
      );
      await waitFor('an InstallationConflict Warning event', async () => {
        const events = await cluster.core.listNamespacedEvent({ namespace: home.name });
        return events.items.some((event) => event.type === 'Warning' && event.reason === 'InstallationConflict' && event.message!.includes(firstInstallation));
      });
      // the first keeps working while the second runs; edits and drift go on being the first's
      expect((await call('PATCH', '/api/v3/secrets/raw/SHOP_KEY', { workspaceId: homeProjectId, environment: 'dev', secretValue: 'still-the-first' })).status).toBe(200);
      await waitFor('the first installation to sync', async () => (await cluster.secretData(home.name, 'app-secrets'))?.SHOP_KEY === 'still-the-first');
      await cluster.core.deleteNamespacedSecret({ namespace: home.name, name: 'app-secrets' });
      await waitFor('the first installation to repair drift', async () => (await cluster.secretData(home.name, 'app-secrets'))?.SHOP_KEY === 'still-the-first');
      // the positive event: a force-sync of 'app' that the first records and the second reconciles too (counted); the
      // second reconciles 'app' one at a time, so a wrong write of its on the drift would be counted by then
      const looked = await integrationReconcilesOf(laptop);
      await cluster.custom.patchNamespacedCustomObject(
        {
          group: 'coffer.dev',
          version: 'v1alpha1',
          namespace: home.name,
          plural: 'integrations',
          name: 'app',
          body: { metadata: { annotations: { 'coffer.dev/force-sync': 'after-drift' } } },
        },
        mergePatch,
      );
      await waitFor(
        'both installations to reconcile the force-sync',
        async () => (await cluster.get('integrations', home.name, 'app')).status.forceSync === 'after-drift' && (await integrationReconcilesOf(laptop)) > looked,
      );
      const writes = await writesOf(laptop);
      const forbidden = Object.entries(writes).filter(([key, count]) => count > 0 && !key.endsWith(' events'));
      expect(forbidden, JSON.stringify(writes)).toEqual([]);
      expect((await cluster.get('integrations', home.name, 'app')).status.installationId).toBe(firstInstallation);
      expect((await cluster.secret(home.name, 'app-secrets'))!.metadata!.annotations!['coffer.dev/installation']).toBe(firstInstallation);
    } finally {
      await stopCoffer(laptop);
    }
  });

  test('a second installation on the same Lease never takes it over, even after the first stops; it writes nothing', async () => {
    const second = await cofferEnvironment(home.name);
    const laptop = await startOperatorProcess(second);
    try {
      expect(
        (await callCoffer(laptop, 'POST', '/api/v1/admin/bootstrap', undefined, { email: 'dev@example.com', password: 'laptop password', organization: 'Laptop' }))
          .status,
      ).toBe(200);
      await waitFor('the Lease conflict to be logged', async () => laptop.output.join('').includes(`the Lease is held by Coffer installation ${firstInstallation}`), {
        timeoutMs: 60_000,
      });
      expect(await stopCoffer(operator)).toBe(0);
      // fixed sleep: longer than the Lease duration (15 s, on the apiserver's clock): an expired Lease of another installation is still not taken
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      const lease = await cluster.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: home.name, name: 'coffer-operator' });
      expect(lease.metadata!.annotations!['coffer.dev/installation']).toBe(firstInstallation);
      expect(lease.spec!.holderIdentity ?? '').not.toContain(laptop.process.pid!.toString());
      // nothing but the Warning Event on the Lease
      expect(Object.entries(await writesOf(laptop)).filter(([key, count]) => count > 0 && !key.endsWith(' events'))).toEqual([]);
      expect(await cluster.secretData(home.name, 'app-secrets')).toEqual({ SHOP_KEY: 'still-the-first' });
    } finally {
      await stopCoffer(laptop);
      operator = await startOperatorProcess(environment);
    }
    expect((await call('PATCH', '/api/v3/secrets/raw/SHOP_KEY', { workspaceId: homeProjectId, environment: 'dev', secretValue: 'back-again' })).status).toBe(200);
    await waitFor('the restarted first installation to sync', async () => (await cluster.secretData(home.name, 'app-secrets'))?.SHOP_KEY === 'back-again', {
      timeoutMs: 60_000,
    });
  });

  test('COFFER_OPERATOR=auto with only a kubeconfig does not start an operator, and says so', async () => {
    const second = await cofferEnvironment(home.name);
    const { COFFER_OPERATOR: _unset, ...rest } = second;
    const laptop = await startCoffer({ ...rest, COFFER_OPERATOR: 'auto', KUBERNETES_SERVICE_HOST: '' });
    try {
      expect(laptop.output.join('')).toContain('a kubeconfig alone needs --operator true');
      expect(await writesOf(laptop)).toEqual({});
    } finally {
      await stopCoffer(laptop);
    }
  });
});
