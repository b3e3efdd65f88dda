import { activeRulesOfMembership } from './permission-store.ts';

/** Reads of permissions for other domains: the rules a membership grants now (what changing it takes away). */
export { activeRulesOfMembership };
