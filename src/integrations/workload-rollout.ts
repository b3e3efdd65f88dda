/** The kinds of workload an Integration's reload rolls (spec.reload). */
export const ROLLOUT_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;
export type RolloutKind = (typeof ROLLOUT_KINDS)[number];

/** A workload, by name only. */
export interface WorkloadRef {
  kind: RolloutKind;
  namespace: string;
  name: string;
}

/** The workloads still rolling one report may name, at most (the rest are not named; the report still says some roll). */
export const ROLLING_WORKLOADS_MAX = 50;

/** What an operator reports after a workload reload: the revision it dealt with, and the workloads whose rollout has not finished. */
export interface ReloadResult {
  reloadedRevision: number;
  /** Absent from an operator that does not report rollouts: the stored list stays. */
  rolling?: WorkloadRef[];
}

export function describeWorkload(workload: WorkloadRef): string {
  return `${workload.kind}/${workload.namespace}/${workload.name}`;
}
