/** The conditions every resource reports (status.ts writes them, metrics.ts counts them). */
/** Reloaded: an Integration's workload reload (spec.reload, or workloads that opt in). */
export type ConditionType = 'Ready' | 'Synced' | 'Reloaded';

export const CONDITION_TYPES: readonly ConditionType[] = ['Ready', 'Synced', 'Reloaded'];
