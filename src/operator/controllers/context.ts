import type { Logger } from 'pino';
import type { CofferPort } from '../port/coffer-port.ts';
import type { ConditionReason } from '../runtime/condition-reason.ts';
import type { Retry } from '../runtime/controller.ts';
import type { EventRecorder } from '../runtime/event-recorder.ts';
import type { OperatorInformers } from '../runtime/informers.ts';
import type { KubeApi } from '../runtime/kube-api.ts';
import type { OperatorMetrics } from '../runtime/metrics.ts';
import type { StatusWriter } from '../runtime/status.ts';
import type { ConflictReports } from './conflict-reports.ts';
import type { InstallationKey } from './installation-key.ts';
import type { WorkloadReloader } from './reload/workload-reloader.ts';

/** Who this operator is: the installation whose resources it manages, and the cluster as it names itself. */
export interface OperatorIdentity {
  /** This database's installation id: the resources it manages carry it. */
  installationId: string;
  /** The cluster as this operator names itself (COFFER_CLUSTER_NAME): what namespace grants name. */
  clusterName: string;
}

/** What every controller works with. */
export interface ControllerContext {
  /** Coffer, as the operator's machine identity (its calls are audited as k8-operator). */
  port: CofferPort;
  kube: KubeApi;
  status: StatusWriter;
  /** Kubernetes Events, posted in the background (best-effort). */
  events: EventRecorder;
  logger: Logger;
  /** The watched objects (informer caches). */
  informers: OperatorInformers;
  identity: OperatorIdentity;
  conflicts: ConflictReports;
  /** Keys every digest of secret data kept outside the Secret (data hashes, reload checksums). */
  installationKey: Pick<InstallationKey, 'get'>;
  /** Rolls the workloads that consume what an Integration wrote (off without its RBAC). */
  reloader: WorkloadReloader;
  metrics?: Pick<OperatorMetrics, 'changeReachedSecret'>;
  /** Whether the operator's identity holds what a sync needs in a project (checked before its first sync: operator-permissions.ts). */
  permissions: { assertHeld(projectId: string): Promise<void> };
}

/**
 * A reconcile that cannot go on and says why: Ready=False with this reason,
 * tried again as `retry` says (by default only when something watched
 * changes). Thrown from deep inside a reconcile, turned into a Failure at its top.
 */
export class NotReadyError extends Error {
  readonly reason: ConditionReason;
  readonly retry: Retry;

  constructor(reason: ConditionReason, message: string, retry: Retry = 'on-change') {
    super(message);
    this.reason = reason;
    this.retry = retry;
  }
}
