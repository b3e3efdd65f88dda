import { isDeepStrictEqual } from 'node:util';
import { PatchStrategy, setHeaderOptions, type V1PodSpec, Watch } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type CofferProcess, callCoffer, stopCoffer } from '../support/coffer-process.ts';
import { type Cluster, clusterClients, cofferEnvironment, putSecret, startApi, startOperatorProcess } from '../support/operator-fixture.ts';

/**
 * Workload reload on the real control plane. There is no kubelet, so a
 * rollout is what the apiserver records: a new pod template carrying Coffer's
 * checksum. Each workload's pod template is watched from its creation, and
 * every change of it is counted (metadata.generation is no counter: a
 * Deployment's also moves when its own annotations change).
 */
let cluster: Cluster;
let namespace: TestNamespace;
let environment: Record<string, string>;
let api: CofferProcess;
let operator: CofferProcess;
let token: string;
let projectId: string;
let stopWatching: (() => void) | undefined;
/** Pod-template changes seen per `${kind}/${name}` since the workload was created. */
const templateChanges = new Map<string, number>();
const slug = `reload-${Date.now().toString(36)}`;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
type Kind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

const writeSecret = (key: string, value: string) => putSecret(api, token, { projectId, environment: 'dev', secretPath: '/app' }, key, value);

/** The Integration's status.lastRollout once it is of `revision` or later (written after that reconcile's rollouts). */
const rolledAt = (revision: number) =>
  waitFor(`the rollout of revision ${revision} in the status`, async () => {
    const lastRollout = (await cluster.get('integrations', namespace.name, 'app')).status?.lastRollout;
    return lastRollout?.revision >= revision ? lastRollout : false;
  });

/** Waits until the revision barrier says the Integration synced `revision` and rolled the workloads it concerns. */
async function reloadedThrough(revision: number) {
  const answer = await callCoffer(api, 'GET', `/api/v1/changes/wait?revision=${revision}&timeout=60s`, token);
  expect(answer.body).toMatchObject({ reached: true, integrations: [expect.objectContaining({ name: 'app', state: 'reached' })] });
}

const container = (extra: Partial<V1PodSpec['containers'][number]> = {}) => ({ name: 'app', image: 'example.com/app:1', ...extra });

async function createWorkload(kind: Kind, name: string, pod: Partial<V1PodSpec>, annotations: Record<string, string> = {}) {
  const labels = { app: name };
  const template = { metadata: { labels }, spec: { containers: [container()], ...pod } };
  const metadata = { name, namespace: namespace.name, annotations };
  const spec = { selector: { matchLabels: labels }, template };
  if (kind === 'Deployment') await cluster.apps.createNamespacedDeployment({ namespace: namespace.name, body: { metadata, spec } });
  if (kind === 'StatefulSet') await cluster.apps.createNamespacedStatefulSet({ namespace: namespace.name, body: { metadata, spec: { ...spec, serviceName: name } } });
  if (kind === 'DaemonSet') await cluster.apps.createNamespacedDaemonSet({ namespace: namespace.name, body: { metadata, spec } });
}

async function readWorkload(kind: Kind, name: string) {
  const request = { namespace: namespace.name, name };
  if (kind === 'Deployment') return cluster.apps.readNamespacedDeployment(request);
  if (kind === 'StatefulSet') return cluster.apps.readNamespacedStatefulSet(request);
  return cluster.apps.readNamespacedDaemonSet(request);
}

/** How many times the workload was rolled (its pod template changed) since it was created. */
async function rollouts(kind: Kind, name: string): Promise<number> {
  return templateChanges.get(`${kind}/${name}`) ?? 0;
}

/** Counts every pod-template change of the namespace's workloads, as the apiserver reports them in order. */
async function watchPodTemplates(): Promise<() => void> {
  const lastTemplate = new Map<string, unknown>();
  let stopped = false;
  const watch = new Watch(cluster.kc);
  // client-node ends a watch that saw nothing for 30 s (an inactivity timeout): a resource kind quiet for longer (the
  // DaemonSet through a slow run) would stop being counted, and every later rollout with it
  // (a public field in its JavaScript, private in its types)
  (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = 60 * 60_000;
  const requests = await Promise.all(
    (['deployments', 'statefulsets', 'daemonsets'] as const).map((plural) =>
      watch.watch(
        `/apis/apps/v1/namespaces/${namespace.name}/${plural}`,
        {},
        (_type: string, object: { kind?: string; metadata: { name: string }; spec: { template: unknown } }) => {
          const id = `${{ deployments: 'Deployment', statefulsets: 'StatefulSet', daemonsets: 'DaemonSet' }[plural]}/${object.metadata.name}`;
          if (lastTemplate.has(id) && !isDeepStrictEqual(lastTemplate.get(id), object.spec.template)) templateChanges.set(id, (templateChanges.get(id) ?? 0) + 1);
          lastTemplate.set(id, object.spec.template);
        },
        (error: unknown) => {
          if (error && !stopped) process.stderr.write(`pod-template watch on ${plural} ended: ${String(error)}\n`);
        },
      ),
    ),
  );
  return () => {
    stopped = true;
    requests.forEach((request) => request.abort());
  };
}

const checksumOf = async (kind: Kind, name: string, where: 'metadata' | 'template') => {
  const workload = await readWorkload(kind, name);
  const annotations = where === 'metadata' ? workload.metadata?.annotations : workload.spec?.template?.metadata?.annotations;
  return annotations?.['checksum.coffer.dev/secret-app-secrets'];
};

function waitForRollouts(kind: Kind, name: string, count: number) {
  return waitFor(`${kind} ${name} rolled ${count} time(s)`, async () => {
    const rolled = await rollouts(kind, name);
    if (rolled === count) return rolled;
    throw new Error(`rolled ${rolled} times`);
  });
}

/** Waits until the Integration reports a reload state at the current generation. */
function waitForReloaded(name: string, reason: string) {
  return waitFor(`integration ${name}: Reloaded ${reason}`, async () => {
    const resource = await cluster.get('integrations', namespace.name, name);
    const found = (resource.status?.conditions ?? []).find((condition: { type: string }) => condition.type === 'Reloaded');
    if (found?.reason === reason && resource.status.observedGeneration === resource.metadata.generation) return resource;
    throw new Error(`conditions: ${JSON.stringify(resource.status?.conditions ?? [])}`);
  });
}

async function events(object: string, reason: string) {
  const list = await cluster.core.listNamespacedEvent({ namespace: namespace.name });
  return list.items.filter((event) => event.involvedObject.name === object && event.reason === reason);
}

/** Merges `spec` into the Integration's spec. */
function patchIntegrationSpec(name: string, spec: Record<string, unknown>) {
  return cluster.custom.patchNamespacedCustomObject(
    { group: 'coffer.dev', version: 'v1alpha1', namespace: namespace.name, plural: 'integrations', name, body: { spec } },
    mergePatch,
  );
}

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('reload');
  stopWatching = await watchPodTemplates();
  environment = await cofferEnvironment(namespace.name);
  ({ api, token } = await startApi(environment));
  operator = await startOperatorProcess(environment);
  await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name: 'shop' }, spec: { name: 'Shop', slug } });
  projectId = (await cluster.waitReady('secretsprojects', namespace.name, 'shop')).status.projectId;
  expect((await callCoffer(api, 'POST', '/api/v1/folders', token, { workspaceId: projectId, environment: 'dev', name: 'app' })).status).toBe(200);
  for (const [key, value] of Object.entries({ DB_PASSWORD: 'p1', API_KEY: 'k1', LOG_LEVEL: 'info', CERT: 'c1' })) await writeSecret(key, value);
  // consumers of app-secrets, each reading other keys
  await createWorkload('Deployment', 'web', {
    containers: [container({ env: [{ name: 'DB', valueFrom: { secretKeyRef: { name: 'app-secrets', key: 'DB_PASSWORD' } } }] })],
  });
  await createWorkload('StatefulSet', 'db', { containers: [container({ envFrom: [{ secretRef: { name: 'app-secrets' } }] })] }, { 'coffer.dev/reload': 'true' });
  await createWorkload(
    'DaemonSet',
    'agent',
    { volumes: [{ name: 'certs', projected: { sources: [{ secret: { name: 'app-secrets', items: [{ key: 'CERT', path: 'cert.pem' }] } }] } }] },
    { 'coffer.dev/reload': 'true' },
  );
  // opts in, but reads nothing of app-secrets; and one that reads it without opting in or being named
  await createWorkload(
    'Deployment',
    'bystander',
    { containers: [container({ env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'other', key: 'X' } } }] })] },
    { 'coffer.dev/reload': 'true' },
  );
  await createWorkload('Deployment', 'unlisted', { containers: [container({ envFrom: [{ secretRef: { name: 'app-secrets' } }] })] });
  await cluster.apply('integrations', namespace.name, {
    kind: 'Integration',
    metadata: { name: 'app' },
    spec: {
      projectRef: { name: 'shop' },
      environment: 'dev',
      secretPath: '/app',
      target: { name: 'app-secrets' },
      reload: { workloads: [{ kind: 'Deployment', name: 'web' }], debounce: '0s' },
    },
  });
  await waitForReloaded('app', 'UpToDate').catch((error: unknown) => {
    process.stderr.write(`--- operator log tail ---\n${operator.output.join('').split('\n').slice(-40).join('\n')}\n`);
    throw error;
  });
}, 180_000);

afterEach((context) => {
  if (context.task.result?.state === 'fail') process.stderr.write(`--- operator log tail ---\n${operator.output.join('').split('\n').slice(-40).join('\n')}\n`);
});

afterAll(async () => {
  stopWatching?.();
  for (const process of [operator, api]) if (process) await stopCoffer(process);
  await namespace?.cleanup();
});

describe('keys-aware rollouts', () => {
  test('first sight records a checksum on the workload metadata and rolls nothing', async () => {
    for (const [kind, name] of [
      ['Deployment', 'web'],
      ['StatefulSet', 'db'],
      ['DaemonSet', 'agent'],
    ] as const) {
      await waitFor(`${kind} ${name} baseline`, async () => (await checksumOf(kind, name, 'metadata')) !== undefined);
      expect(await checksumOf(kind, name, 'template')).toBeUndefined();
      expect(await rollouts(kind, name)).toBe(0);
    }
    const checksum = (await checksumOf('Deployment', 'web', 'metadata'))!;
    expect(checksum).toMatch(/^[0-9a-f]{32}$/);
    expect(checksum).not.toContain('p1');
  });

  test('a change to a consumed key rolls exactly its consumers, once', async () => {
    const revision = await writeSecret('DB_PASSWORD', 'p2');
    // web reads DB_PASSWORD (named), db reads every key (opted in); agent reads only CERT
    await waitForRollouts('Deployment', 'web', 1);
    await waitForRollouts('StatefulSet', 'db', 1);
    // the status names what the reconcile of this revision rolled, after it rolled it: what rolls later is another reconcile's
    await rolledAt(revision);
    expect(await rollouts('Deployment', 'web')).toBe(1);
    expect(await rollouts('StatefulSet', 'db')).toBe(1);
    expect(await rollouts('DaemonSet', 'agent')).toBe(0);
    expect(await rollouts('Deployment', 'bystander')).toBe(0);
    expect(await rollouts('Deployment', 'unlisted')).toBe(0);
    expect(await checksumOf('Deployment', 'web', 'template')).toBe(await checksumOf('Deployment', 'web', 'metadata'));
    const status = (await cluster.get('integrations', namespace.name, 'app')).status;
    expect(status.lastRollout).toMatchObject({ workloads: ['Deployment/web', 'StatefulSet/db'], keys: ['DB_PASSWORD'] });
    const rolled = await waitFor('Rolled Events', async () => ((await events('web', 'Rolled')).length > 0 ? events('web', 'Rolled') : false));
    expect(rolled[0]!.message).toContain('Deployment web rolled: key DB_PASSWORD of Secret');
    expect(JSON.stringify(status) + rolled[0]!.message).not.toContain('p2');
  });

  test('a change to a key nobody reads rolls nothing; a projected item rolls only the workload reading it', async () => {
    const logLevel = await writeSecret('LOG_LEVEL', 'debug');
    await waitFor('the Secret to change', async () => (await cluster.secretData(namespace.name, 'app-secrets'))?.LOG_LEVEL === 'debug');
    // db reads everything (envFrom), the others do not read LOG_LEVEL
    expect((await rolledAt(logLevel)).workloads).toEqual(['StatefulSet/db']);
    expect(await rollouts('StatefulSet', 'db')).toBe(2);
    expect(await rollouts('Deployment', 'web')).toBe(1);
    expect(await rollouts('DaemonSet', 'agent')).toBe(0);
    const cert = await writeSecret('CERT', 'c2');
    expect((await rolledAt(cert)).workloads.sort()).toEqual(['DaemonSet/agent', 'StatefulSet/db']);
    expect(await rollouts('DaemonSet', 'agent')).toBe(1);
    expect(await rollouts('StatefulSet', 'db')).toBe(3);
    expect(await rollouts('Deployment', 'web')).toBe(1);
    expect(await rollouts('Deployment', 'bystander')).toBe(0);
  });

  test('debounce: a burst of changes within the window rolls each consumer once', async () => {
    await patchIntegrationSpec('app', { reload: { debounce: '4s' } });
    await waitForReloaded('app', 'UpToDate');
    const before = await rollouts('Deployment', 'web');
    let last = 0;
    for (let round = 0; round < 5; round++) last = await writeSecret('DB_PASSWORD', `burst-${round}`);
    await waitForReloaded('app', 'RolloutPending');
    await rolledAt(last);
    expect(await rollouts('Deployment', 'web')).toBe(before + 1);
    // a second burst in a later window rolls again (a checksum, not a timestamp: no rollout is lost), and only once more:
    // a second rollout of the first burst would show here as before + 3
    await rolledAt(await writeSecret('DB_PASSWORD', 'after-burst'));
    expect(await rollouts('Deployment', 'web')).toBe(before + 2);
  });

  test('a named workload that does not exist, and one that reads nothing of the target, are named in the condition', async () => {
    await patchIntegrationSpec('app', {
      reload: {
        workloads: [
          { kind: 'Deployment', name: 'web' },
          { kind: 'Deployment', name: 'ghost' },
          { kind: 'Deployment', name: 'bystander' },
        ],
        debounce: '0s',
      },
    });
    const resource = await waitForReloaded('app', 'WorkloadNotFound');
    const message = resource.status.conditions.find((condition: { type: string }) => condition.type === 'Reloaded').message as string;
    expect(message).toContain('Deployment ghost does not exist');
    expect(message).toContain("Deployment bystander reads nothing of Secret 'app-secrets' in its pod template and is not rolled");
    expect(conditionStatus(resource, 'Ready')).toBe('True');
    await patchIntegrationSpec('app', { reload: { workloads: [{ kind: 'Deployment', name: 'web' }], debounce: '0s' } });
    await waitForReloaded('app', 'UpToDate');
  });
});

describe('restarts and the barrier', () => {
  test('an operator restart rolls nothing when nothing changed, and rolls once what changed while it was down', async () => {
    const counts = async () => [await rollouts('Deployment', 'web'), await rollouts('StatefulSet', 'db'), await rollouts('DaemonSet', 'agent')];
    const before = await counts();
    // A later change only db reads, rolled by the restarted operator: whatever the restart rolled came before it. It is
    // written as soon as the operator is ready, so the restart's first reconcile may already read it and roll db for it:
    // that rollout is labelled with the revision the reconcile started at (a reconcile's data is at least that current),
    // so it is the barrier, not lastRollout's revision, that says when the write is rolled out.
    const onlyDb = async (value: string) => {
      await reloadedThrough(await writeSecret('LOG_LEVEL', value));
      expect((await cluster.get('integrations', namespace.name, 'app')).status.lastRollout.workloads).toEqual(['StatefulSet/db']);
    };
    await stopCoffer(operator);
    operator = await startOperatorProcess(environment);
    await onlyDb('after-restart');
    expect(await counts()).toEqual([before[0], before[1]! + 1, before[2]]);

    await stopCoffer(operator);
    const whileDown = await writeSecret('DB_PASSWORD', 'while-down');
    operator = await startOperatorProcess(environment);
    expect((await rolledAt(whileDown)).workloads).toEqual(['Deployment/web', 'StatefulSet/db']);
    await onlyDb('after-catching-up');
    expect(await counts()).toEqual([before[0]! + 1, before[1]! + 3, before[2]]);
  });

  test('the revision barrier of an Integration with reload answers once the consumers are rolled', async () => {
    const before = await rollouts('Deployment', 'web');
    const revision = await writeSecret('DB_PASSWORD', 'barrier');
    const answer = await callCoffer(api, 'GET', `/api/v1/changes/wait?revision=${revision}&timeout=60s`, token);
    expect(answer.body).toMatchObject({ reached: true });
    expect(answer.body.integrations).toEqual([expect.objectContaining({ name: 'app', state: 'reached', reloadedRevision: expect.any(Number) })]);
    expect(await rollouts('Deployment', 'web')).toBe(before + 1);
    expect((await cluster.secretData(namespace.name, 'app-secrets'))?.DB_PASSWORD).toBe('barrier');
  });
});

function conditionStatus(resource: { status: { conditions: { type: string; status: string }[] } }, type: string): string | undefined {
  return resource.status.conditions.find((condition) => condition.type === type)?.status;
}
