import type { V1DaemonSet, V1Deployment, V1StatefulSet } from '@kubernetes/client-node';
import type { WorkloadKind } from '../../resources.ts';
import type { Workload } from '../../runtime/informers.ts';

/**
 * Whether a workload's rollout has finished, from its status as its
 * controller wrote it (the rules of `kubectl rollout status`): the controller
 * has seen the current spec (observedGeneration), and every desired replica
 * runs the current pod template and is available. `generation`: the
 * generation a rollout this operator made gave it; an older copy (the
 * informer not caught up) is still rolling.
 */
export function rolloutFinished(kind: WorkloadKind, workload: Workload, generation = 0): boolean {
  const current = workload.metadata?.generation ?? 0;
  if (current < generation || (workload.status?.observedGeneration ?? -1) < current) return false;
  if (kind === 'DaemonSet') return daemonSetFinished(workload as V1DaemonSet);
  if (kind === 'StatefulSet') return statefulSetFinished(workload as V1StatefulSet);
  return deploymentFinished(workload);
}

function deploymentFinished({ spec, status }: V1Deployment): boolean {
  const desired = spec?.replicas ?? 1;
  const updated = status?.updatedReplicas ?? 0;
  // old replicas still running (status.replicas counts them) mean it has not finished either
  return updated >= desired && (status?.replicas ?? 0) <= updated && (status?.availableReplicas ?? 0) >= desired;
}

function statefulSetFinished({ spec, status }: V1StatefulSet): boolean {
  const desired = spec?.replicas ?? 1;
  return (status?.updatedReplicas ?? 0) >= desired && (status?.readyReplicas ?? 0) >= desired && (status?.availableReplicas ?? desired) >= desired;
}

function daemonSetFinished({ status }: V1DaemonSet): boolean {
  const desired = status?.desiredNumberScheduled ?? 0;
  return (status?.updatedNumberScheduled ?? 0) >= desired && (status?.numberAvailable ?? 0) >= desired;
}
