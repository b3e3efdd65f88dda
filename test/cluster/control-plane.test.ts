/**
 * Proves the test control plane is a real one: behaviour a fake API server would not give us.
 * Cluster: test/k8s/global-setup.ts; fixture CRD: test/k8s/fixtures/widgets.fixtures.coffer.dev.yaml.
 */
import { randomUUID } from 'node:crypto';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { apiError, apiStatus, createTestNamespace, kubeClients, waitFor, type TestNamespace } from '../k8s/helpers.ts';

const W = { group: 'fixtures.coffer.dev', version: 'v1', plural: 'widgets' } as const;

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec: { slug?: string; replicas?: number; [k: string]: unknown };
  status?: { phase?: string; observedGeneration?: number };
}

const widget = (name: string, spec: Widget['spec'], extra: Partial<Widget> = {}): Widget => ({
  apiVersion: `${W.group}/${W.version}`,
  kind: 'Widget',
  metadata: { name },
  spec,
  ...extra,
});

const kubeconfig = inject('kubeconfig');
const admin = kubeClients(kubeconfig, 'admin');
let ns: TestNamespace;
let namespace: string;

const createWidget = async (w: Widget) => (await admin.custom.createNamespacedCustomObject({ ...W, namespace, body: w })) as Widget;
const getWidget = async (name: string) => (await admin.custom.getNamespacedCustomObject({ ...W, namespace, name })) as Widget;
const replaceWidget = async (w: Widget) => (await admin.custom.replaceNamespacedCustomObject({ ...W, namespace, name: w.metadata.name, body: w })) as Widget;

beforeAll(async () => {
  ns = await createTestNamespace('control-plane', kubeconfig);
  namespace = ns.name;
});
afterAll(async () => {
  await ns?.cleanup();
});

describe('CRD structural schema (apiserver-side validation)', () => {
  test('a custom resource violating the schema is rejected with 422 Invalid', async () => {
    const badPattern = await apiError(createWidget(widget('bad-pattern', { slug: 'Not Valid!' })));
    expect(badPattern.status).toBe(422);
    expect(badPattern.reason).toBe('Invalid');
    expect(badPattern.message).toContain('spec.slug');

    const missing = await apiError(createWidget(widget('missing-slug', { replicas: 2 })));
    expect(missing.status).toBe(422);
    expect(missing.message).toMatch(/spec\.slug: Required value/);

    const tooMany = await apiError(createWidget(widget('too-many', { slug: 'valid-slug', replicas: 11 })));
    expect(tooMany.status).toBe(422);
    expect(tooMany.message).toContain('spec.replicas');

    // nothing was stored
    await expect(getWidget('bad-pattern')).rejects.toMatchObject({ code: 404 });
  });

  test('a valid one is stored with defaults applied and unknown fields pruned', async () => {
    const created = await createWidget(widget('valid', { slug: 'valid-slug', unknownField: 'dropped' }));
    expect(created.spec).toEqual({ slug: 'valid-slug', replicas: 1 });
  });
});

test('optimistic concurrency: an update with a stale resourceVersion gets 409 Conflict', async () => {
  const created = await createWidget(widget('occ', { slug: 'occ-widget', replicas: 1 }));
  const stale = structuredClone(created);

  const updated = await replaceWidget({ ...created, spec: { ...created.spec, replicas: 2 } });
  expect(updated.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);

  const conflict = await apiError(replaceWidget({ ...stale, spec: { ...stale.spec, replicas: 3 } }));
  expect(conflict.status).toBe(409);
  expect(conflict.reason).toBe('Conflict');
  expect((await getWidget('occ')).spec.replicas).toBe(2);

  const exists = await apiError(createWidget(widget('occ', { slug: 'occ-widget' })));
  expect(exists.status).toBe(409);
  expect(exists.reason).toBe('AlreadyExists');
});

test('status subresource: /status ignores spec, the main resource ignores status', async () => {
  const created = await createWidget(widget('status', { slug: 'status-widget', replicas: 1 }, { status: { phase: 'IgnoredOnCreate' } }));
  expect(created.status).toBeUndefined();
  expect(created.metadata.generation).toBe(1);

  const viaStatus = (await admin.custom.replaceNamespacedCustomObjectStatus({
    ...W,
    namespace,
    name: 'status',
    body: { ...created, spec: { slug: 'changed-by-status', replicas: 5 }, status: { phase: 'Ready', observedGeneration: 1 } },
  })) as Widget;
  expect(viaStatus.status).toEqual({ phase: 'Ready', observedGeneration: 1 });
  expect(viaStatus.spec).toEqual({ slug: 'status-widget', replicas: 1 });
  expect(viaStatus.metadata.generation).toBe(1);

  const viaMain = await replaceWidget({ ...viaStatus, spec: { slug: 'status-widget', replicas: 3 }, status: { phase: 'Hacked' } });
  expect(viaMain.spec.replicas).toBe(3);
  expect(viaMain.status).toEqual({ phase: 'Ready', observedGeneration: 1 });
  expect(viaMain.metadata.generation).toBe(2);
});

test('a finalizer holds deletion until it is removed', async () => {
  await createWidget(widget('final', { slug: 'final-widget' }, { metadata: { name: 'final', finalizers: ['fixtures.coffer.dev/hold'] } }));

  await admin.custom.deleteNamespacedCustomObject({ ...W, namespace, name: 'final' });
  const deleting = await getWidget('final');
  expect(deleting.metadata.deletionTimestamp).toBeTruthy();
  expect(deleting.metadata.finalizers).toEqual(['fixtures.coffer.dev/hold']);

  // no new finalizers once deletion has started
  const added = await apiError(replaceWidget({ ...deleting, metadata: { ...deleting.metadata, finalizers: ['fixtures.coffer.dev/hold', 'x.dev/new'] } }));
  expect(added.status).toBe(422);
  expect(added.message).toMatch(/no new finalizers can be added if the object is being deleted/);

  await replaceWidget({ ...deleting, metadata: { ...deleting.metadata, finalizers: [] } });
  await waitFor('widget "final" to be gone after its finalizer was removed', async () => {
    try {
      await getWidget('final');
      return false;
    } catch (err) {
      if (apiStatus(err) === 404) return true;
      throw err;
    }
  });
});

describe('garbage collection by kube-controller-manager', () => {
  const gone = (name: string) => async () => {
    try {
      await admin.core.readNamespacedSecret({ name, namespace });
      return false;
    } catch (err) {
      if (apiStatus(err) === 404) return true;
      throw err;
    }
  };

  /**
   * A Secret whose owner never existed, created after the dependent under test: the collector looks up
   * each new dependent's owner, so once it deleted this one it has looked at the one created before.
   */
  const collectedWitness = async (name: string) => {
    await admin.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-owner`, uid: randomUUID() }] },
        stringData: { k: 'v' },
      },
    });
    await waitFor(`the ownerless ${name} to be garbage-collected`, gone(name), { timeoutMs: 120_000, intervalMs: 250 });
  };

  test('a Secret owned by a ConfigMap is deleted after its owner', { timeout: 150_000 }, async () => {
    const owner = await admin.core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'gc-owner' }, data: { a: 'b' } },
    });
    await admin.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: {
          name: 'gc-dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.metadata!.uid! }],
        },
        stringData: { k: 'v' },
      },
    });
    // the owner exists, so the garbage collector keeps the dependent: shown once it collected one created after it
    await collectedWitness('gc-witness');
    const kept = await admin.core.readNamespacedSecret({ name: 'gc-dependent', namespace });
    expect(kept.metadata?.ownerReferences?.[0]?.uid).toBe(owner.metadata!.uid);

    await admin.core.deleteNamespacedConfigMap({ name: 'gc-owner', namespace });
    await waitFor('secret gc-dependent to be garbage-collected', gone('gc-dependent'), { timeoutMs: 120_000, intervalMs: 500 });
  });

  test('a Secret owned by a custom resource is deleted after its owner', { timeout: 150_000 }, async () => {
    const owner = await createWidget(widget('gc-widget', { slug: 'gc-widget' }));
    await admin.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: {
          name: 'gc-cr-dependent',
          ownerReferences: [{ apiVersion: owner.apiVersion, kind: 'Widget', name: 'gc-widget', uid: owner.metadata.uid!, controller: true }],
        },
        stringData: { k: 'v' },
      },
    });
    await collectedWitness('gc-cr-witness');
    await admin.core.readNamespacedSecret({ name: 'gc-cr-dependent', namespace });

    await admin.custom.deleteNamespacedCustomObject({ ...W, namespace, name: 'gc-widget' });
    await waitFor('secret gc-cr-dependent to be garbage-collected', gone('gc-cr-dependent'), {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
  });
});

test('a deleted namespace goes away (namespace controller)', { timeout: 90_000 }, async () => {
  const tmp = await createTestNamespace('cp-ns-delete', kubeconfig);
  await admin.core.createNamespacedConfigMap({ namespace: tmp.name, body: { metadata: { name: 'content' } } });
  await tmp.cleanup({ wait: true, timeoutMs: 60_000 });
});

describe('RBAC', () => {
  const operator = kubeClients(kubeconfig, 'operator');

  test('the non-admin operator user may not list secrets cluster-wide (403)', async () => {
    const denied = await apiError(operator.core.listSecretForAllNamespaces());
    expect(denied.status).toBe(403);
    expect(denied.reason).toBe('Forbidden');
    expect(denied.message).toContain('User "operator" cannot list resource "secrets"');
  });

  test('a namespaced Role grants exactly what it says', { timeout: 30_000 }, async () => {
    expect((await apiError(operator.core.listNamespacedSecret({ namespace }))).status).toBe(403);
    const rbac = admin.kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'secret-reader' },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'operator-reads-secrets' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'operator' }],
      },
    });
    const list = await waitFor('operator to be allowed to list secrets in its namespace', () => operator.core.listNamespacedSecret({ namespace }));
    expect(Array.isArray(list.items)).toBe(true);
    // still nothing cluster-wide, and no other verbs
    expect((await apiError(operator.core.listSecretForAllNamespaces())).status).toBe(403);
    expect((await apiError(operator.core.readNamespacedSecret({ name: 'anything', namespace }))).status).toBe(403);
  });
});
