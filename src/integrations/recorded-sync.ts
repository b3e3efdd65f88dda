import { isDeepStrictEqual } from 'node:util';
import type { IntegrationRow } from './integration-store.ts';
import type { SyncResult } from './integration-inputs.ts';
import type { TargetKeys } from './target-keys.ts';

/**
 * Whether an integration record already says what a sync result would write, so that nothing is written (no
 * statement, no progress NOTIFY): the same outcome, message, places and report of the target's keys, and a
 * revision that is the stored one, or a newer one when no change that can alter what a place resolves to has
 * committed in the project since the stored one (`alteredAt`: the project's newest such change). The record then
 * goes on naming the older revision, which its target is as current at: the revision barrier waits only for such
 * changes (sync-barrier.ts), so it answers alike. This is what spares a resync after a restart, which reads at the
 * installation's newest revision, a write per Integration.
 */
export async function alreadyRecorded(row: IntegrationRow, result: SyncResult, syncMessage: string | null, reads: RecordReads): Promise<boolean> {
  if (row.isSynced !== result.isSynced || row.syncMessage !== syncMessage) return false;
  if (result.places !== undefined && !isDeepStrictEqual(row.readPlaces, result.places)) return false;
  if (!(await holdsRevision(row, result.syncedRevision, reads))) return false;
  // a report of the target's keys comes with the first sync of each leadership, then only when it changed
  return result.targetKeys === undefined || !reportChanges((await reads.targetKeys()) ?? null, result.targetKeys);
}

/** Whether a result's report of the target's keys (none: undefined) differs from the one stored (null: none). */
export function reportChanges(stored: TargetKeys | null, reported: TargetKeys | null | undefined): boolean {
  return reported !== undefined && !isDeepStrictEqual(stored, reported);
}

/** What deciding may read: the project's newest change that can alter a place, the stored report of the target's keys. */
export interface RecordReads {
  alteredAt: () => Promise<number>;
  targetKeys: () => Promise<TargetKeys | undefined>;
}

async function holdsRevision(row: IntegrationRow, wanted: number | null | undefined, reads: RecordReads): Promise<boolean> {
  if (wanted === undefined || wanted === row.syncedRevision) return true;
  if (wanted === null || row.syncedRevision === null || wanted < row.syncedRevision) return false;
  return (await reads.alteredAt()) <= row.syncedRevision;
}
