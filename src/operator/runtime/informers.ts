import { type Informer, type KubernetesObject, makeInformer, type ObjectCache, type V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeApi } from './kube-api.ts';
import { GROUP, type IntegrationResource, KINDS, type KindName, MANAGED_BY_LABEL, type SecretImportResource, type SecretsProject, VERSION } from '../resources.ts';

export type CachedInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

export interface OperatorInformers {
  projects: CachedInformer<SecretsProject>;
  imports: CachedInformer<SecretImportResource>;
  integrations: CachedInformer<IntegrationResource>;
  managedSecrets: CachedInformer<V1Secret>;
}

const RESTART_DELAY_MS = 2_000;

function customResourceInformer<T extends KubernetesObject>(kube: KubeApi, kind: KindName, namespace?: string): CachedInformer<T> {
  const { plural } = KINDS[kind];
  const path = namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}` : `/apis/${GROUP}/${VERSION}/${plural}`;
  const list = () =>
    (namespace
      ? kube.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural })
      : kube.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural })) as Promise<{ items: T[]; metadata: { resourceVersion: string } }>;
  return makeInformer<T>(kube.config, path, list);
}

/** Informers for the three kinds and for the Secrets Coffer manages (by label), cluster-wide or in one namespace. */
export function createInformers(kube: KubeApi, namespace?: string): OperatorInformers {
  const labelSelector = `${MANAGED_BY_LABEL}=coffer`;
  const secretsPath = namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
  const listSecrets = () =>
    namespace ? kube.core.listNamespacedSecret({ namespace, labelSelector }) : kube.core.listSecretForAllNamespaces({ labelSelector });
  return {
    projects: withoutManagedFields(customResourceInformer<SecretsProject>(kube, 'SecretsProject', namespace)),
    imports: withoutManagedFields(customResourceInformer<SecretImportResource>(kube, 'SecretImport', namespace)),
    integrations: withoutManagedFields(customResourceInformer<IntegrationResource>(kube, 'Integration', namespace)),
    managedSecrets: withoutManagedFields(makeInformer<V1Secret>(kube.config, secretsPath, listSecrets as never, labelSelector)),
  };
}

/**
 * Cached objects lose metadata.managedFields (often the largest part of an
 * object, and never read here), as client-go informers are commonly set up
 * to: the handler runs first on every added or updated object, which is the
 * very object the cache keeps.
 */
function withoutManagedFields<T extends KubernetesObject>(informer: CachedInformer<T>): CachedInformer<T> {
  const strip = (object: T) => {
    if (object.metadata) delete object.metadata.managedFields;
  };
  informer.on('add', strip);
  informer.on('update', strip);
  return informer;
}

/** Starts an informer; after a watch error it lists and watches again. */
export async function startInformer<T extends KubernetesObject>(informer: CachedInformer<T>, name: string, logger: Logger, isStopped: () => boolean): Promise<void> {
  const restart = () =>
    setTimeout(() => {
      if (isStopped()) return;
      informer.start().catch((error: unknown) => {
        logger.warn({ informer: name, err: error }, 'informer restart failed; trying again');
        restart();
      });
    }, RESTART_DELAY_MS).unref();
  informer.on('error', (error: unknown) => {
    if (isStopped()) return;
    logger.warn({ informer: name, err: error }, 'watch failed; restarting');
    restart();
  });
  await informer.start();
}
