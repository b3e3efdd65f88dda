import { randomBytes } from 'node:crypto';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from '@kubernetes/client-node';
import { FIELD_MANAGER, GROUP, KINDS, type KindName, VERSION } from '../resources.ts';

export function apiStatus(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export function isNotFound(error: unknown): boolean {
  return apiStatus(error) === 404;
}

export function isConflict(error: unknown): boolean {
  return apiStatus(error) === 409;
}

/**
 * A resourceVersion no stored object has (etcd revisions would need 2^63
 * writes to reach it). An apply carrying it as a precondition creates the
 * object when there is none and is refused with 409 when one exists: the
 * apiserver checks this atomically in storage (an apply that creates stores
 * no resourceVersion; one that updates must match the live one).
 */
export const ABSENT = '9223372036854775807';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];
type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * @kubernetes/client-node 2.x gives every request a new connection pool (an
 * undici Agent), so each call opens a fresh TLS connection to the apiserver:
 * a handshake per call and native memory that grows with the request rate.
 * This keeps the per-request authentication (headers, rotating tokens) and
 * sends every request through one pool with kept-alive connections.
 */
export function shareConnections(config: KubeConfig): void {
  const authenticate = config.applySecurityAuthentication.bind(config);
  let shared: Dispatcher | undefined;
  config.applySecurityAuthentication = async (context: RequestContext) => {
    await authenticate(context);
    const created = context.getDispatcher();
    if (!created) return;
    if (!shared) {
      shared = created;
      return;
    }
    context.setDispatcher(shared);
    void created.close().catch(() => {});
  };
}

/** The Kubernetes calls the operator makes, and nothing else (RBAC in deploy/ lists exactly these). */
export class KubeApi {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  readonly objects: KubernetesObjectApi;

  readonly config: KubeConfig;
  /** Called once per request the methods below make (metrics). */
  readonly #onRequest: (verb: string, resource: string) => void;

  constructor(config: KubeConfig, onRequest: (verb: string, resource: string) => void = () => {}) {
    this.config = config;
    shareConnections(config);
    this.#onRequest = onRequest;
    this.core = config.makeApiClient(CoreV1Api);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.coordination = config.makeApiClient(CoordinationV1Api);
    this.objects = KubernetesObjectApi.makeApiClient(config);
  }

  async patchStatus(kind: KindName, namespace: string, name: string, status: object): Promise<void> {
    this.#onRequest('patch', `${KINDS[kind].plural}/status`);
    await this.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body: { status } },
      mergePatch,
    );
  }

  /**
   * Records in the status which installation manages the resource, on
   * condition that the resource is still at `resourceVersion` (409 otherwise):
   * of two installations claiming it at once, one wins.
   */
  async claimStatus(kind: KindName, namespace: string, name: string, installationId: string, resourceVersion: string): Promise<KubernetesObject & { status?: { installationId?: string } }> {
    this.#onRequest('patch', `${KINDS[kind].plural}/status`);
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body: { metadata: { resourceVersion }, status: { installationId } } },
      mergePatch,
    )) as KubernetesObject & { status?: { installationId?: string } };
  }

  async setFinalizers(kind: KindName, namespace: string, name: string, finalizers: string[], resourceVersion?: string): Promise<void> {
    this.#onRequest('patch', KINDS[kind].plural);
    await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body: { metadata: { finalizers, resourceVersion } } },
      mergePatch,
    );
  }

  /**
   * Server-side apply of a Secret with the `coffer` field manager. With
   * `expectedVersion` the apply is conditional: it fails with 409 Conflict
   * unless the live Secret is at that resourceVersion, or, for ABSENT, unless
   * there is no Secret of that name (then the apply creates it).
   */
  async applySecret(secret: V1Secret, expectedVersion?: string): Promise<void> {
    this.#onRequest('apply', 'secrets');
    const body = expectedVersion ? { ...secret, metadata: { ...secret.metadata, resourceVersion: expectedVersion } } : secret;
    await this.objects.patch(body, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }

  async readSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    this.#onRequest('get', 'secrets');
    try {
      return await this.core.readNamespacedSecret({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    this.#onRequest('delete', 'secrets');
    try {
      await this.core.deleteNamespacedSecret({ namespace, name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** A Kubernetes Event on a resource. Messages never carry secret values. */
  async recordEvent(object: KubernetesObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    this.#onRequest('create', 'events');
    const namespace = object.metadata!.namespace!;
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `${object.metadata!.name}.${randomBytes(6).toString('hex')}`, namespace },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: object.metadata!.name,
          namespace,
          uid: object.metadata!.uid,
          resourceVersion: object.metadata!.resourceVersion,
        },
        type,
        reason,
        message,
        source: { component: 'coffer-operator' },
        reportingComponent: 'coffer.dev/operator',
        reportingInstance: process.env.HOSTNAME ?? 'coffer',
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  }
}
