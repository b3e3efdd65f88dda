import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { KubernetesObjectApi, PatchStrategy } from '../../kubernetes/client-node.ts';
import type { TargetKind } from '../resources.ts';
import { makeApiClient } from '../../kubernetes/api-client.ts';

const TARGET_PLURALS: Record<TargetKind, string> = { Secret: 'secrets', ConfigMap: 'configmaps' };

/**
 * Secrets and ConfigMaps sent and read as JSON, key for key. The typed
 * clients copy every map (a Secret's data, labels, annotations) onto a plain
 * object by assignment, where a key named `__proto__` sets the prototype and
 * is lost: a secret of that name would vanish from the Secret without a word.
 * Requests go through the same configuration (authentication, the shared
 * connection pool, errors as ApiException) as every other call.
 */
export class TargetObjectApi extends KubernetesObjectApi {
  static forConfig(config: KubeConfig): TargetObjectApi {
    const api = makeApiClient(config, TargetObjectApi);
    api.setDefaultNamespace(config);
    return api;
  }

  /** Server-side apply of `object` (JSON.stringify keeps every own key). */
  async applyJson<T extends KubernetesObject>(object: T, fieldManager: string, force: boolean): Promise<T> {
    const context = this.configuration.baseServer.makeRequestContext(await this.specUriPath(object, 'patch'), 'PATCH');
    context.setHeaderParam('Accept', 'application/json');
    context.setHeaderParam('Content-Type', PatchStrategy.ServerSideApply);
    context.setQueryParam('fieldManager', fieldManager);
    context.setQueryParam('force', String(force));
    context.setBody(JSON.stringify(object));
    // 'any': the answer as JSON.parse gives it (own keys), not through the typed serializer
    return this.requestPromise<T>(context, 'any');
  }

  /** The object of this kind and name (404 as an ApiException). */
  readJson<T extends KubernetesObject>(kind: TargetKind, namespace: string, name: string): Promise<T> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/${TARGET_PLURALS[kind]}/${encodeURIComponent(name)}`;
    return this.requestPromise<T>(this.configuration.baseServer.makeRequestContext(path, 'GET'), 'any');
  }

  /** The objects of this kind with the label selector, in one namespace or all (an informer's list). */
  listJson<T extends KubernetesObject>(kind: TargetKind, namespace: string | undefined, labelSelector: string): Promise<KubernetesListObject<T>> {
    const path = namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/${TARGET_PLURALS[kind]}` : `/api/v1/${TARGET_PLURALS[kind]}`;
    const context = this.configuration.baseServer.makeRequestContext(path, 'GET');
    context.setQueryParam('labelSelector', labelSelector);
    return this.requestPromise<KubernetesListObject<T>>(context, 'any');
  }
}
