import type { ObjectCache, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Actor } from '../actor/actor.ts';
import type { Services } from '../services/container.ts';
import type { DependencyIndex } from './dependency-index.ts';
import type { EventRecorder } from './event-recorder.ts';
import type { ConflictReports } from './installation-guard.ts';
import type { KubeApi } from './kube-api.ts';
import type { ListingCache } from './listing-cache.ts';
import type { IntegrationResource, SecretImportResource, SecretsProject } from './resources.ts';

/** What every reconciler works with. */
export interface OperatorContext {
  services: Services;
  kube: KubeApi;
  /** The operator's machine identity; its calls are audited as k8-operator. */
  actor: Actor;
  logger: Logger;
  projects: ObjectCache<SecretsProject>;
  imports: ObjectCache<SecretImportResource>;
  integrations: ObjectCache<IntegrationResource>;
  managedSecrets: ObjectCache<V1Secret>;
  dependencies: DependencyIndex;
  listings: ListingCache;
  /** Kubernetes Events, posted in the background (best-effort). */
  events: EventRecorder;
  /** This database's installation id: the resources it manages carry it. */
  installationId: string;
  /** The cluster as this operator names itself (COFFER_CLUSTER_NAME): what namespace grants name. */
  clusterName: string;
  conflicts: ConflictReports;
}

/** A reconcile outcome that is not a failure to retry: it goes into the status as Ready=False. */
export class NotReadyError extends Error {
  readonly reason: string;
  readonly retryInMs: number | undefined;

  constructor(reason: string, message: string, retryInMs?: number) {
    super(message);
    this.reason = reason;
    this.retryInMs = retryInMs;
  }
}
