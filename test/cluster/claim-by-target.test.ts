import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, GROUP, startApi, startOperatorProcess, VERSION } from '../support/operator-fixture.ts';

/**
 * An Owner or Orphan Integration is claimed by its target, not by a write of its own: its first sync writes the
 * Secret (created only if absent, naming the installation, owned by the Integration) and one status write, and no
 * finalizer. Its deletion is cleaned up without one: by the operator that sees it go, by the garbage collector,
 * and by the record sweep of the next operator to lead. Another installation's target for it leaves it alone.
 */
let cluster: Cluster;
let namespace: TestNamespace;
let environment: Record<string, string>;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
let installationId: string;
const OTHER_INSTALLATION = '00000000-0000-4000-8000-0000000000bb';

const call = (method: string, path: string, body?: unknown) => callCoffer(api, method, path, token, body);
const integration = (name: string, target: Record<string, unknown>) => ({
  kind: 'Integration',
  metadata: { name },
  spec: { projectRef: { name: 'shop' }, environment: 'dev', target },
});
const recordNames = async () =>
  ((await call('GET', `/api/v1/workspace/${projectId}/integrations`)).body.integrations as { metadata: { name: string } }[]).map((record) => record.metadata.name).sort();
const startOperator = () => startOperatorProcess(environment, { COFFER_WATCH_NAMESPACE: namespace.name, POD_NAME: 'claims' });
const warnings = async (name: string, reason: string) =>
  (await cluster.core.listNamespacedEvent({ namespace: namespace.name })).items.filter(
    (event) => event.type === 'Warning' && event.reason === reason && event.involvedObject.name === name,
  );

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('claims');
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperator();
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop' } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  expect((await call('POST', '/api/v3/secrets/raw/KEY', { workspaceId: projectId, environment: 'dev', secretValue: 'value' })).status).toBe(200);
  installationId = (await call('GET', '/api/v1/operator/installation')).body.installationId;
}, 180_000);

afterAll(async () => {
  await stopCoffer(operator).catch(() => {});
  await stopCoffer(api).catch(() => {});
  await namespace?.cleanup();
});

describe('the first sync of an Owner or Orphan Integration', () => {
  test('writes its Secret and one status, and nothing to its metadata: no finalizer, no claim annotation', async () => {
    await cluster.apply('integrations', namespace.name, integration('owned', { name: 'owned-secret' }));
    await cluster.apply('integrations', namespace.name, integration('orphaned', { name: 'orphaned-secret', creationPolicy: 'Orphan' }));
    for (const name of ['owned', 'orphaned']) {
      const synced = await cluster.waitReady('integrations', namespace.name, name, 'Synced');
      expect(synced.metadata.finalizers).toBeUndefined();
      expect(synced.metadata.annotations?.['coffer.dev/installation']).toBeUndefined();
      expect(synced.status.installationId).toBe(installationId);
      // beyond the status subresource, only the test's own create wrote the Integration: no metadata field is anyone's
      const entries = synced.metadata.managedFields as { subresource?: string; fieldsV1: Record<string, unknown> }[];
      expect(entries.filter((entry) => entry.subresource === 'status')).toHaveLength(1);
      expect(entries.filter((entry) => entry.subresource !== 'status').map((entry) => Object.keys(entry.fieldsV1))).toEqual([['f:spec']]);
    }
    const owned = await cluster.get('integrations', namespace.name, 'owned');
    const secret = await cluster.secret(namespace.name, 'owned-secret');
    expect(secret!.metadata!.annotations!['coffer.dev/installation']).toBe(installationId);
    expect(secret!.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'Integration', name: 'owned', uid: owned.metadata.uid })]);
    expect((await cluster.secret(namespace.name, 'orphaned-secret'))!.metadata!.annotations!['coffer.dev/installation']).toBe(installationId);
  });

  test('a failure before any installation holds it names none: another installation that can sync it may still take it', async () => {
    await cluster.apply('integrations', namespace.name, {
      ...integration('unresolved', { name: 'unresolved-secret' }),
      spec: { projectRef: { name: 'missing' }, environment: 'dev', target: { name: 'unresolved-secret' } },
    });
    const failed = await waitFor('unresolved to be Ready=False', async () => {
      const resource = await cluster.get('integrations', namespace.name, 'unresolved');
      const ready = resource.status?.conditions?.find((condition: { type: string }) => condition.type === 'Ready');
      if (ready?.status !== 'False') throw new Error(JSON.stringify(resource.status ?? {}));
      return resource;
    });
    expect(failed.status.installationId).toBeUndefined();
    expect(failed.metadata.finalizers).toBeUndefined();
    expect(await cluster.secret(namespace.name, 'unresolved-secret')).toBeUndefined();
  });

  test('a Merge Integration is still claimed with the annotation and the finalizer: only a finalizer can take its keys out of a Secret that stays', async () => {
    await cluster.core.createNamespacedSecret({ namespace: namespace.name, body: { metadata: { name: 'shared' }, stringData: { THEIRS: 'kept' } } });
    await cluster.apply('integrations', namespace.name, integration('merged', { name: 'shared', creationPolicy: 'Merge' }));
    const synced = await cluster.waitReady('integrations', namespace.name, 'merged', 'Synced');
    expect(synced.metadata.finalizers).toEqual(['coffer.dev/finalizer']);
    expect(synced.metadata.annotations['coffer.dev/installation']).toBe(installationId);
  });
});

describe('a target another installation made for the Integration', () => {
  /** A Secret as another installation's first sync of `integration` would have made it (labelled or not). */
  const theirs = (name: string, integrationName: string, labelled: boolean) =>
    cluster.core.createNamespacedSecret({
      namespace: namespace.name,
      body: {
        metadata: {
          name,
          labels: labelled ? { 'app.kubernetes.io/managed-by': 'coffer' } : {},
          annotations: { 'coffer.dev/installation': OTHER_INSTALLATION, 'coffer.dev/integration': `${namespace.name}/${integrationName}` },
        },
        stringData: { THEIR_KEY: 'theirs' },
      },
    });

  for (const labelled of [true, false]) {
    // labelled: the operator's cache shows it before the first sync; unlabelled: only its create's 409 does (a race)
    test(`${labelled ? 'as cached' : 'found by the create only'}: the Integration is left alone (no status, no finalizer, the Secret untouched) and a Warning names the holder`, async () => {
      const name = labelled ? 'cached' : 'raced';
      await theirs(`${name}-secret`, name, labelled);
      await cluster.apply('integrations', namespace.name, integration(name, { name: `${name}-secret` }));
      const [warning] = await waitFor(`the InstallationConflict Event of ${name}`, async () => {
        const found = await warnings(name, 'InstallationConflict');
        if (found.length === 0) throw new Error('no Event yet');
        return found;
      });
      expect(warning!.message).toContain(OTHER_INSTALLATION);
      const left = await cluster.get('integrations', namespace.name, name);
      expect(left.status).toBeUndefined();
      expect(left.metadata.finalizers).toBeUndefined();
      expect(left.metadata.annotations?.['coffer.dev/installation']).toBeUndefined();
      expect(await cluster.secretData(namespace.name, `${name}-secret`)).toEqual({ THEIR_KEY: 'theirs' });
    });
  }
});

describe('deletion without a finalizer', () => {
  test('while the operator runs: the Integration goes at once, then its Secret and its record (audited)', async () => {
    await cluster.apply('integrations', namespace.name, integration('brief', { name: 'brief-secret' }));
    const { integrationId } = (await cluster.waitReady('integrations', namespace.name, 'brief', 'Synced')).status;
    await cluster.remove('integrations', namespace.name, 'brief');
    await expect(cluster.get('integrations', namespace.name, 'brief')).rejects.toMatchObject({ code: 404 });
    await waitFor('the Secret of brief to be deleted', async () => (await cluster.secret(namespace.name, 'brief-secret')) === undefined);
    await waitFor('the record of brief to be deleted', async () => (await call('GET', `/api/v1/integration/${integrationId}`)).status === 404);
    const audit = await call('GET', `/api/v1/workspace/${projectId}/audit-logs?eventType=delete-integration&limit=100`);
    expect(audit.body.auditLogs.some((entry: { event: { metadata: { integrationId?: string } } }) => entry.event.metadata.integrationId === integrationId)).toBe(true);
  });

  test('while no operator runs: the garbage collector takes the Secret, the next operator drops the record, and keeps the others', async () => {
    await cluster.apply('integrations', namespace.name, integration('away', { name: 'away-secret' }));
    await cluster.waitReady('integrations', namespace.name, 'away', 'Synced');
    // raced's record, kept by this installation's lost first sync, once the other installation's status holds it
    await cluster.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace: namespace.name, plural: 'integrations', name: 'raced', body: { status: { installationId: OTHER_INSTALLATION } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const before = await recordNames();
    expect(before).toEqual(expect.arrayContaining(['away', 'owned', 'orphaned', 'merged', 'raced']));
    await stopCoffer(operator);
    await cluster.remove('integrations', namespace.name, 'away');
    await expect(cluster.get('integrations', namespace.name, 'away')).rejects.toMatchObject({ code: 404 });
    await waitFor('the garbage collector to delete away-secret', async () => (await cluster.secret(namespace.name, 'away-secret')) === undefined, {
      timeoutMs: 120_000,
      intervalMs: 250,
    });
    expect(await recordNames()).toEqual(before);
    operator = await startOperator();
    await waitFor('the sweep to log what it dropped', async () => operator.output.join('').includes('deleted while no operator ran'));
    const after = await recordNames();
    expect(after).toEqual(before.filter((name) => name !== 'away' && name !== 'raced'));
    expect(after).toEqual(expect.arrayContaining(['owned', 'orphaned', 'merged']));
  });
});
