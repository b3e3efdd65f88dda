/** The conditions every resource reports (status.ts writes them, metrics.ts counts them). */
export type ConditionType = 'Ready' | 'Synced';

export const CONDITION_TYPES: readonly ConditionType[] = ['Ready', 'Synced'];
