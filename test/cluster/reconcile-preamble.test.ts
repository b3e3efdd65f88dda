import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inject } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { ConflictReports } from '../../src/operator/controllers/conflict-reports.ts';
import type { ControllerContext } from '../../src/operator/controllers/context.ts';
import { toFailure } from '../../src/operator/controllers/failures.ts';
import { mayReconcile } from '../../src/operator/controllers/installation-guard.ts';
import { ANNOTATION_INSTALLATION, FINALIZER, type SecretImportResource } from '../../src/operator/resources.ts';
import { type Controller, done, type ReconcileResult } from '../../src/operator/runtime/controller.ts';
import { EventRecorder } from '../../src/operator/runtime/event-recorder.ts';
import { createInformers, runInformer } from '../../src/operator/runtime/informers.ts';
import { KubeApi } from '../../src/operator/runtime/kube-api.ts';
import { Manager } from '../../src/operator/runtime/manager.ts';
import type { ObjectKey } from '../../src/operator/runtime/object-key.ts';
import { StatusWriter } from '../../src/operator/runtime/status.ts';
import { createTestNamespace, type TestNamespace, waitFor } from '../k8s/helpers.ts';
import { type Cluster, clusterClients } from '../support/operator-fixture.ts';

/**
 * The preamble the Manager runs around every controller (manager.ts #run), on
 * a real apiserver: the finalizer and the claim before the controller's
 * reconcile, a Coffer refusal the reconcile throws turned into Ready=False and
 * a Warning Event, a deletion finalized and then let go, and a resource of
 * another installation left alone. The controller here is a scripted one of
 * the SecretImport kind: what it did is what the preamble let it do.
 */
const INSTALLATION = 'preamble-installation';
const logger = pino({ level: 'silent' });
let cluster: Cluster;
let namespace: TestNamespace;
let manager: Manager;
let events: EventRecorder;
let stopped = false;
let stopInformer: () => void;
/** What the scripted controller saw and did, by resource name. */
const seen = { finalizersAtReconcile: new Map<string, string[]>(), reconciled: [] as string[], finalized: [] as string[], forgotten: [] as string[] };

beforeAll(async () => {
  cluster = clusterClients();
  namespace = await createTestNamespace('preamble');
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfig'));
  config.setCurrentContext('admin');
  const kube = new KubeApi(config);
  const informer = createInformers(kube, namespace.name).imports;
  const status = new StatusWriter(kube, logger, INSTALLATION);
  events = new EventRecorder({ send: ({ object, type, reason, message }) => kube.recordEvent(object, type, reason, message) });
  // what the installation guard reads of a controller's context (the port only for ids in a status, which these resources have none of)
  const guardContext = { identity: { installationId: INSTALLATION, clusterName: 'preamble' }, status, events, logger, conflicts: new ConflictReports() };
  manager = new Manager({
    logger,
    status,
    events,
    concurrency: 2,
    admits: (kind, resource) => mayReconcile(guardContext as unknown as ControllerContext, kind, resource),
    failureOf: (error) => toFailure(error),
  });
  manager.add(scriptedController(informer, status));
  manager.start();
  stopInformer = () => informer.stop();
  await runInformer(informer, 'secretimports', { logger, isStopped: () => stopped });
});

afterAll(async () => {
  stopped = true;
  stopInformer?.();
  await manager?.stop();
  await events?.idle();
  await namespace?.cleanup();
});

/** Reconciles as its name says: `refused` is answered 404 by Coffer; any other is done. */
function scriptedController(informer: Controller<SecretImportResource>['informer'], status: StatusWriter): Controller<SecretImportResource> {
  return {
    kind: 'SecretImport',
    informer,
    failureConditions: ['Ready'],
    setup: () => {},
    async reconcile(resource): Promise<ReconcileResult> {
      const { name } = resource.metadata;
      const live = await cluster.get('secretimports', namespace.name, name);
      seen.finalizersAtReconcile.set(name, live.metadata.finalizers ?? []);
      seen.reconciled.push(name);
      if (name === 'refused') throw new AppError(404, 'NotFound', "secret import 'gone' was not found");
      await status.write('SecretImport', resource, {}, [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: 'in sync' }]);
      return done();
    },
    async finalize(resource) {
      seen.finalized.push(resource.metadata.name);
    },
    forget(key: ObjectKey) {
      seen.forgotten.push(key.name);
    },
  };
}

async function createImport(name: string, annotations?: Record<string, string>): Promise<void> {
  await cluster.apply('secretimports', namespace.name, {
    kind: 'SecretImport',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { projectRef: { name: 'shop' }, environment: 'dev', import: { environment: 'prod', path: '/' } },
  });
}

async function warningEvent(name: string, reason: string) {
  const { items } = await cluster.core.listNamespacedEvent({ namespace: namespace.name, fieldSelector: `involvedObject.name=${name}` });
  return items.find((event) => event.type === 'Warning' && event.reason === reason);
}

async function readyCondition(name: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const resource = await cluster.get('secretimports', namespace.name, name);
  return resource.status?.conditions?.find((condition: { type: string }) => condition.type === 'Ready');
}

test('the finalizer and the claim are on the resource before its reconcile runs; a deletion is finalized, then the finalizer removed and the resource gone', async () => {
  await createImport('kept');
  const ready = await waitFor('SecretImport kept to be Ready', async () => (await readyCondition('kept'))?.status === 'True');
  expect(ready).toBe(true);
  expect(seen.finalizersAtReconcile.get('kept')).toEqual([FINALIZER]);
  const live = await cluster.get('secretimports', namespace.name, 'kept');
  expect(live.metadata.annotations?.[ANNOTATION_INSTALLATION]).toBe(INSTALLATION);
  expect(seen.finalized).toEqual([]);

  await cluster.remove('secretimports', namespace.name, 'kept');
  // gone from the apiserver only once the finalizer is off, and then from the cache: the controller forgets it
  await waitFor('SecretImport kept to be forgotten', () => seen.forgotten.includes('kept'));
  expect(seen.finalized).toContain('kept');
  await expect(cluster.get('secretimports', namespace.name, 'kept')).rejects.toMatchObject({ code: 404 });
  // the deletion never reached the controller's reconcile
  expect(seen.reconciled.filter((name) => name === 'kept')).toEqual(['kept']);
});

test('a Coffer 404 the reconcile throws is the failure path: Ready=False, Rejected, with its message, and one Warning Event', async () => {
  // claimed by this installation already (its finalizer taken off by hand): the finalizer comes back before the reconcile
  await createImport('refused', { [ANNOTATION_INSTALLATION]: INSTALLATION });
  const condition = await waitFor('SecretImport refused to be Ready=False', async () => {
    const ready = await readyCondition('refused');
    return ready?.status === 'False' && ready;
  });
  expect(condition).toMatchObject({ reason: 'Rejected', message: "secret import 'gone' was not found" });
  expect(seen.finalizersAtReconcile.get('refused')).toEqual([FINALIZER]);
  const event = await waitFor('a Warning Event Rejected on refused', () => warningEvent('refused', 'Rejected'));
  expect(event.message).toBe("secret import 'gone' was not found");
});

test("another installation's resource is left alone: no finalizer, no reconcile, an InstallationConflict Warning Event", async () => {
  await createImport('foreign', { [ANNOTATION_INSTALLATION]: 'another-installation' });
  // the Event is posted by the guard, the step before any finalizer or reconcile
  const event = await waitFor('a Warning Event InstallationConflict on foreign', () => warningEvent('foreign', 'InstallationConflict'));
  expect(event.message).toContain('another-installation');
  expect(seen.reconciled).not.toContain('foreign');
  const live = await cluster.get('secretimports', namespace.name, 'foreign');
  expect(live.metadata.finalizers ?? []).toEqual([]);
  expect(live.status).toBeUndefined();
});

test('a status write is never sent over a status that names another installation, claimed since the copy it started from', async () => {
  const kube = new KubeApi(clusterConfig());
  const writer = new StatusWriter(kube, logger, INSTALLATION);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const ready = [{ type: 'Ready' as const, status: 'True' as const, reason: 'Reconciled' as const, message: 'in sync' }];
  for (const name of ['contested', 'uncontested']) {
    await cluster.apply('secretsprojects', namespace.name, { kind: 'SecretsProject', metadata: { name }, spec: { name } });
  }
  // each copy is read before someone else's status write: the writer's conditional write meets a 409 and re-reads
  const copies = {
    contested: await cluster.get('secretsprojects', namespace.name, 'contested'),
    uncontested: await cluster.get('secretsprojects', namespace.name, 'uncontested'),
  };
  const patchStatus = (name: string, status: Record<string, unknown>) =>
    cluster.custom.patchNamespacedCustomObjectStatus(
      { group: 'coffer.dev', version: 'v1alpha1', namespace: namespace.name, plural: 'secretsprojects', name, body: { status } },
      mergePatch,
    );
  await patchStatus('contested', { installationId: 'another-installation' });
  await patchStatus('uncontested', { slug: 'someone' });
  for (const copy of Object.values(copies)) await writer.write('SecretsProject', copy, {}, ready);
  expect((await cluster.get('secretsprojects', namespace.name, 'contested')).status).toEqual({ installationId: 'another-installation' });
  // the control: a status naming no installation is written over as ever
  const written = (await cluster.get('secretsprojects', namespace.name, 'uncontested')).status;
  expect(written).toMatchObject({ slug: 'someone', installationId: INSTALLATION, conditions: [expect.objectContaining({ type: 'Ready', status: 'True' })] });
});

function clusterConfig(): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfig'));
  config.setCurrentContext('admin');
  return config;
}
