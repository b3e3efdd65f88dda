import { randomBytes } from 'node:crypto';
import type { KubeConfig, KubernetesObject, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import {
  ApiException,
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '../../kubernetes/client-node.ts';
import { ANNOTATION_INSTALLATION, FIELD_MANAGER, GROUP, KINDS, type KindName, type TargetKind, VERSION, type WorkloadKind } from '../resources.ts';
import { AppError } from '../../errors.ts';
import { TargetObjectApi } from './target-object-api.ts';
import { makeApiClient } from '../../kubernetes/api-client.ts';

/** The HTTP status of a failed request: an ApiException's code, or a watch error's statusCode. */
export function apiStatus(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/** The status of an apiserver's answer; never Coffer's (an AppError carries a statusCode too). */
function kubeStatus(error: unknown): number | undefined {
  return error instanceof AppError ? undefined : apiStatus(error);
}

/** The apiserver answered 404: the object (or its kind) is not there (Coffer's 404 is failures.ts's isCofferNotFound). */
export function isKubeNotFound(error: unknown): boolean {
  return kubeStatus(error) === 404;
}

/** The apiserver answered 409: a precondition (resourceVersion) failed, or a server-side apply conflicted. */
export function isConflict(error: unknown): boolean {
  return kubeStatus(error) === 409;
}

/** What the apiserver said when it refused a request: the Status object's reason and message. */
export interface ApiRefusal {
  status: number;
  reason?: string;
  message: string;
  /** Status.details.causes: which fields, and why (a server-side apply conflict names the other manager). */
  causes: { field?: string; message?: string; reason?: string }[];
}

export function apiRefusal(error: unknown): ApiRefusal | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const body = parseStatus(error.body);
  return { status: error.code, reason: body?.reason, message: body?.message ?? `HTTP ${error.code}`, causes: body?.details?.causes ?? [] };
}

function parseStatus(body: unknown): { reason?: string; message?: string; details?: { causes?: ApiRefusal['causes'] } } | undefined {
  if (typeof body === 'object' && body !== null) return body;
  if (typeof body !== 'string') return undefined;
  try {
    return JSON.parse(body) as ReturnType<typeof parseStatus>;
  } catch {
    return undefined;
  }
}

/**
 * An error as one short log field: the apiserver's status, reason and message
 * for a refusal (not the response headers and body an ApiException carries),
 * else the error's name, code and message.
 */
export function describeError(error: unknown): Record<string, unknown> {
  const refusal = apiRefusal(error);
  if (refusal) return { status: refusal.status, reason: refusal.reason, message: refusal.message.slice(0, 500) };
  const status = apiStatus(error);
  if (error instanceof Error)
    return { name: error.name, ...(status ? { status } : {}), ...('code' in error ? { code: error.code } : {}), message: error.message.slice(0, 500) };
  return { message: String(error).slice(0, 500) };
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

/** A SecretsProject, SecretImport or Integration as the apiserver answers it: what the status writer reads of one. */
export type CustomResource = KubernetesObject & { status?: Record<string, unknown> };

/** What an Integration writes, as the apiserver holds it. */
export type TargetObject = V1Secret | V1ConfigMap;

/** The resource (plural) of each workload kind the reload rolls: in metrics and RBAC. */
export const WORKLOAD_RESOURCES: Record<WorkloadKind, string> = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' };

/** The resource (plural) of each target kind: in metrics and RBAC. */
export const TARGET_RESOURCES: Record<TargetKind, string> = { Secret: 'secrets', ConfigMap: 'configmaps' };

/**
 * @kubernetes/client-node 2.x gives every request a new connection pool (an
 * undici Agent), so each call opens a fresh TLS connection to the apiserver:
 * a handshake per call and native memory that grows with the request rate.
 * This keeps the per-request authentication (headers, rotating tokens) and
 * sends every request through the first pool it made, with kept-alive
 * connections; no pool is made (and closed again) per request after it.
 */
export function shareConnections(config: KubeConfig): void {
  // a private method of KubeConfig (applySecurityAuthentication's only maker of pools); the unit test
  // kube-connections counts the connections, so a release that renames it fails there, not in a cluster
  const target = config as unknown as DispatcherMaker;
  const create = target.createDispatcher.bind(config);
  let shared: unknown;
  let made = false;
  target.createDispatcher = (...args) => {
    if (!made) {
      shared = create(...args);
      made = true;
    }
    return shared;
  };
}

interface DispatcherMaker {
  createDispatcher(...args: unknown[]): unknown;
}

/** One permission the operator needs: a verb on a resource, in a namespace ('' for all). */
export interface Permission {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace: string;
}

/** The Kubernetes calls the operator makes, and nothing else (RBAC in deploy/ lists exactly these). */
export class KubeApi {
  readonly core: CoreV1Api;
  readonly authorization: AuthorizationV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  readonly objects: KubernetesObjectApi;
  /** Secrets and ConfigMaps as JSON, key for key (target-object-api.ts). */
  readonly targets: TargetObjectApi;
  readonly apps: AppsV1Api;

  readonly config: KubeConfig;
  /** Called once per request the methods below make (metrics). */
  readonly #onRequest: (verb: string, resource: string) => void;

  constructor(config: KubeConfig, onRequest: (verb: string, resource: string) => void = () => {}) {
    this.config = config;
    shareConnections(config);
    this.#onRequest = onRequest;
    this.core = makeApiClient(config, CoreV1Api);
    this.custom = makeApiClient(config, CustomObjectsApi);
    this.coordination = makeApiClient(config, CoordinationV1Api);
    this.authorization = makeApiClient(config, AuthorizationV1Api);
    this.targets = TargetObjectApi.forConfig(config);
    // a KubernetesObjectApi with the JSON methods of targets on top: one client for objects addressed by their kind
    this.objects = this.targets;
    this.apps = makeApiClient(config, AppsV1Api);
  }

  /**
   * A JSON merge patch of a Deployment, StatefulSet or DaemonSet (the reload's
   * checksum annotations), with the `coffer` field manager.
   */
  /** Answers the workload's generation after the patch. */
  async patchWorkload(kind: WorkloadKind, namespace: string, name: string, patch: { metadata?: object; spec?: object }): Promise<number> {
    this.#onRequest('patch', WORKLOAD_RESOURCES[kind]);
    const patched = await this.objects.patch(
      { apiVersion: 'apps/v1', kind, ...patch, metadata: { ...patch.metadata, name, namespace } },
      undefined,
      undefined,
      FIELD_MANAGER,
      undefined,
      PatchStrategy.MergePatch,
    );
    return (patched as KubernetesObject).metadata?.generation ?? 0;
  }

  /**
   * Replaces the status with `status` on condition that the resource is still
   * at `resourceVersion` (409 Conflict otherwise): a merge patch whose base is
   * exactly the status the caller read. Answers the resource as written.
   */
  async patchStatus(kind: KindName, namespace: string, name: string, status: object, resourceVersion: string | undefined): Promise<CustomResource> {
    this.#onRequest('patch', `${KINDS[kind].plural}/status`);
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body: { metadata: { resourceVersion }, status } },
      mergePatch,
    )) as CustomResource;
  }

  /**
   * Replaces the status subresource with `object`'s status, on condition that the resource is still at `object`'s
   * resourceVersion (409 otherwise). The apiserver keeps everything else as stored, and the managedFields too when
   * `object` has none; the rest of `object` must be the resource as stored at that version, or the field managers'
   * ownership of what differs changes.
   */
  async replaceStatus(kind: KindName, object: CustomResource): Promise<CustomResource> {
    this.#onRequest('update', `${KINDS[kind].plural}/status`);
    const { namespace, name } = object.metadata as { namespace: string; name: string };
    return (await this.custom.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: KINDS[kind].plural,
      name,
      body: object,
    })) as CustomResource;
  }

  /** One resource as the apiserver holds it now (undefined when gone): the status writer's re-read after a conflict. */
  async readResource(kind: KindName, namespace: string, name: string): Promise<CustomResource | undefined> {
    this.#onRequest('get', KINDS[kind].plural);
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name })) as CustomResource;
    } catch (error) {
      if (isKubeNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * Claims the resource for an installation, on condition that it is still at
   * `resourceVersion` (409 otherwise: of two installations claiming it at
   * once, one wins): one merge patch of its metadata setting the
   * installation annotation and, unless undefined, the finalizers.
   */
  async claim(
    kind: KindName,
    namespace: string,
    name: string,
    claim: { installationId: string; finalizers?: string[]; resourceVersion: string },
  ): Promise<CustomResource> {
    this.#onRequest('patch', KINDS[kind].plural);
    const { installationId, finalizers, resourceVersion } = claim;
    const metadata = { resourceVersion, annotations: { [ANNOTATION_INSTALLATION]: installationId }, ...(finalizers ? { finalizers } : {}) };
    return (await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body: { metadata } },
      mergePatch,
    )) as CustomResource;
  }

  async setFinalizers(kind: KindName, namespace: string, name: string, finalizers: string[], resourceVersion?: string): Promise<CustomResource> {
    this.#onRequest('patch', KINDS[kind].plural);
    return (await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body: { metadata: { finalizers, resourceVersion } } },
      mergePatch,
    )) as CustomResource;
  }

  /**
   * Server-side apply of a Secret or ConfigMap (by its kind), by default with
   * the `coffer` field manager and taking over fields others own (force).
   * With `expectedVersion` the apply is conditional: it fails with 409
   * Conflict unless the live object is at that resourceVersion, or, for
   * ABSENT, unless there is no object of that name (then the apply creates
   * it). Without force, a field another manager owns with another value fails
   * the apply with 409 (the conflicts are in the Status causes).
   */
  async applyTarget<T extends TargetObject>(object: T, options: { expectedVersion?: string; fieldManager?: string; force?: boolean } = {}): Promise<T> {
    this.#onRequest('apply', TARGET_RESOURCES[object.kind as TargetKind]);
    const { expectedVersion, fieldManager = FIELD_MANAGER, force = true } = options;
    const body = expectedVersion ? { ...object, metadata: { ...object.metadata, resourceVersion: expectedVersion } } : object;
    return await this.targets.applyJson(body, fieldManager, force);
  }

  /** Removes these data keys from an object still at `resourceVersion` (a JSON merge patch; 409 when it changed). */
  async removeTargetKeys(kind: TargetKind, namespace: string, name: string, keys: readonly string[], resourceVersion: string): Promise<void> {
    this.#onRequest('patch', TARGET_RESOURCES[kind]);
    const data = Object.fromEntries(keys.map((key) => [key, null]));
    const request = { namespace, name, fieldManager: FIELD_MANAGER, body: { metadata: { resourceVersion }, data } };
    if (kind === 'Secret') await this.core.patchNamespacedSecret(request, mergePatch);
    else await this.core.patchNamespacedConfigMap(request, mergePatch);
  }

  /** The permissions of `needs` the apiserver does not grant this client, by SelfSubjectAccessReviews. */
  async missingPermissions(needs: readonly Permission[]): Promise<Permission[]> {
    const answers = await Promise.all(
      // not counted with the reconcilers' requests: a question about this client, not a write
      needs.map(async (need) => {
        const review = await this.authorization.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { ...need, namespace: need.namespace || undefined } } },
        });
        return review.status?.allowed ? undefined : need;
      }),
    );
    return answers.filter((missing): missing is Permission => missing !== undefined);
  }

  async readTarget(kind: 'Secret', namespace: string, name: string): Promise<V1Secret | undefined>;
  async readTarget(kind: TargetKind, namespace: string, name: string): Promise<TargetObject | undefined>;
  async readTarget(kind: TargetKind, namespace: string, name: string): Promise<TargetObject | undefined> {
    this.#onRequest('get', TARGET_RESOURCES[kind]);
    try {
      const object = await this.targets.readJson<TargetObject>(kind, namespace, name);
      return { ...object, apiVersion: 'v1', kind };
    } catch (error) {
      if (isKubeNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Deletes the object; with `uid`, only if it is still that object (a precondition). */
  async deleteTarget(kind: TargetKind, namespace: string, name: string, uid?: string): Promise<void> {
    this.#onRequest('delete', TARGET_RESOURCES[kind]);
    const body = uid ? { preconditions: { uid } } : undefined;
    try {
      if (kind === 'Secret') await this.core.deleteNamespacedSecret({ namespace, name, body });
      else await this.core.deleteNamespacedConfigMap({ namespace, name, body });
    } catch (error) {
      if (!isKubeNotFound(error)) throw error;
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

/** Permissions as RBAC reads them, grouped by resource: "list, watch coffer.dev/integrations in namespace shop; …". */
export function describePermissions(permissions: readonly Permission[]): string {
  const verbs = new Map<string, string[]>();
  for (const { verb, group, resource, subresource, namespace } of permissions) {
    const what = `${group ? `${group}/` : ''}${resource}${subresource ? `/${subresource}` : ''} ${namespace ? `in namespace ${namespace}` : 'cluster-wide'}`;
    verbs.set(what, [...(verbs.get(what) ?? []), verb]);
  }
  return [...verbs].map(([what, granted]) => `${granted.join(', ')} ${what}`).join('; ');
}
