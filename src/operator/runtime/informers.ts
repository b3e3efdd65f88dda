import type { Informer, KubernetesObject, ObjectCache, V1ConfigMap, V1DaemonSet, V1Deployment, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import { makeInformer } from '../../kubernetes/client-node.ts';
import type { Logger } from 'pino';
import { describeError, type KubeApi } from './kube-api.ts';
import { shareStrings, StringPool } from './string-pool.ts';
import {
  GROUP,
  type IntegrationResource,
  KINDS,
  type KindName,
  MANAGED_BY_LABEL,
  type SecretImportResource,
  type SecretsProject,
  VERSION,
  type WorkloadKind,
} from '../resources.ts';

/** An informer and its cache (client-node's ListWatch, which also tells the resourceVersion it listed or watched at). */
export type CachedInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T> & { latestResourceVersion(): string };

export interface OperatorInformers {
  projects: CachedInformer<SecretsProject>;
  imports: CachedInformer<SecretImportResource>;
  integrations: CachedInformer<IntegrationResource>;
  managedSecrets: CachedInformer<V1Secret>;
  /** ConfigMaps Integrations write (target.kind ConfigMap), by the same label. */
  managedConfigMaps: CachedInformer<V1ConfigMap>;
  /** The workloads the reload may roll: only when its RBAC is granted (reload off otherwise). */
  workloads?: WorkloadInformers;
}

export type Workload = V1Deployment | V1StatefulSet | V1DaemonSet;
export type WorkloadInformers = Record<WorkloadKind, CachedInformer<Workload>>;

/** Informers for Deployments, StatefulSets and DaemonSets, cluster-wide or in one namespace (every one: opting in is an annotation, which no selector can name). */
export function createWorkloadInformers(kube: KubeApi, namespace?: string): WorkloadInformers {
  const { apps } = kube;
  const informer = (plural: string, list: () => Promise<unknown>) =>
    compactCached(
      makeInformer<Workload>(
        kube.config,
        namespace ? `/apis/apps/v1/namespaces/${namespace}/${plural}` : `/apis/apps/v1/${plural}`,
        list as never,
      ) as CachedInformer<Workload>,
      // a pod template's env may hold a literal value: none enters the pool
      { pooled: false },
    );
  return {
    Deployment: informer('deployments', () => (namespace ? apps.listNamespacedDeployment({ namespace }) : apps.listDeploymentForAllNamespaces())),
    StatefulSet: informer('statefulsets', () => (namespace ? apps.listNamespacedStatefulSet({ namespace }) : apps.listStatefulSetForAllNamespaces())),
    DaemonSet: informer('daemonsets', () => (namespace ? apps.listNamespacedDaemonSet({ namespace }) : apps.listDaemonSetForAllNamespaces())),
  };
}

function customResourceInformer<T extends KubernetesObject>(kube: KubeApi, kind: KindName, namespace?: string): CachedInformer<T> {
  const { plural } = KINDS[kind];
  const path = namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}` : `/apis/${GROUP}/${VERSION}/${plural}`;
  const list = () =>
    (namespace
      ? kube.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural })
      : kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural })) as Promise<{ items: T[]; metadata: { resourceVersion: string } }>;
  return makeInformer<T>(kube.config, path, list) as CachedInformer<T>;
}

/** Informers for the three kinds and for the Secrets and ConfigMaps Coffer manages (by label), cluster-wide or in one namespace. */
export function createInformers(kube: KubeApi, namespace?: string): OperatorInformers {
  const labelSelector = `${MANAGED_BY_LABEL}=coffer`;
  const secretsPath = namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
  // listed as JSON, key for key (the typed client loses a data key named __proto__); the watch parses JSON too
  const listSecrets = () => kube.targets.listJson<V1Secret>('Secret', namespace, labelSelector);
  const configMapsPath = namespace ? `/api/v1/namespaces/${namespace}/configmaps` : '/api/v1/configmaps';
  const listConfigMaps = () => kube.targets.listJson<V1ConfigMap>('ConfigMap', namespace, labelSelector);
  return {
    projects: compactCached(customResourceInformer<SecretsProject>(kube, 'SecretsProject', namespace)),
    imports: compactCached(customResourceInformer<SecretImportResource>(kube, 'SecretImport', namespace)),
    integrations: compactCached(customResourceInformer<IntegrationResource>(kube, 'Integration', namespace)),
    managedSecrets: compactCached(makeInformer<V1Secret>(kube.config, secretsPath, listSecrets as never, labelSelector) as CachedInformer<V1Secret>),
    managedConfigMaps: compactCached(makeInformer<V1ConfigMap>(kube.config, configMapsPath, listConfigMaps as never, labelSelector) as CachedInformer<V1ConfigMap>),
  };
}

/** One pool for every informer: the same namespace names and apiVersions recur across kinds. */
const cachedStrings = new StringPool();

/**
 * Cached objects lose metadata.managedFields (often the largest part of an
 * object, and never read here), as client-go informers are commonly set up
 * to, and share their repeated strings (StringPool): the handler runs first
 * on every added or updated object, which is the very object the cache keeps.
 * The metadata is rebuilt without managedFields rather than the property
 * deleted: V8 turns an object that loses a property into a dictionary, four
 * times the size (9 MB at 10,000 Integrations).
 */
function compactCached<T extends KubernetesObject>(informer: CachedInformer<T>, { pooled = true } = {}): CachedInformer<T> {
  const compact = (object: T) => {
    if (object.metadata && 'managedFields' in object.metadata) {
      const { managedFields: _managedFields, ...metadata } = object.metadata;
      object.metadata = metadata;
    }
    if (pooled) shareStrings(cachedStrings, object);
  };
  informer.on('add', compact);
  informer.on('update', compact);
  return informer;
}

export interface InformerRunOptions {
  logger: Logger;
  isStopped: () => boolean;
  /** A list or watch failed (each failure; it is retried). */
  onFailure?: (resource: string, error: unknown) => void;
  /** The informer listed (again) after failures. */
  onWorking?: (resource: string) => void;
}

const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 30_000;

/**
 * Runs an informer: resolves once it has listed (its cache is complete),
 * and after any list or watch failure lists and watches again, backing off
 * from 1 s to 30 s. The first failure of a spell is logged as a warning with
 * the apiserver's status and message; the repeats at debug; the recovery once.
 */
export function runInformer<T extends KubernetesObject>(informer: CachedInformer<T>, resource: string, options: InformerRunOptions): Promise<void> {
  const { logger, isStopped } = options;
  let failures = 0;
  let listed: () => void;
  const firstList = new Promise<void>((resolve) => (listed = resolve));
  const attempt = async () => {
    const failuresBefore = failures;
    await informer.start();
    // start() resolves after a failed list or watch too: the failure went to the error handler first
    if (failures !== failuresBefore || !informer.latestResourceVersion() || isStopped()) return;
    if (failures > 0) {
      logger.info({ informer: resource, failures }, `watch on ${resource} works again`);
      options.onWorking?.(resource);
    }
    failures = 0;
    listed();
  };
  informer.on('error', (error: unknown) => {
    if (isStopped()) return;
    failures++;
    options.onFailure?.(resource, error);
    const retryInMs = Math.min(RESTART_FIRST_MS * 2 ** (failures - 1), RESTART_MAX_MS);
    const fields = { informer: resource, error: describeError(error), retryInMs, failures };
    if (failures === 1) logger.warn(fields, `watch on ${resource} failed; retrying`);
    else logger.debug(fields, `watch on ${resource} failed again`);
    setTimeout(() => {
      if (!isStopped()) void attempt().catch(() => {});
    }, retryInMs).unref();
  });
  void attempt().catch(() => {});
  return firstList;
}
