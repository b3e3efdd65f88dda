import { isDeepStrictEqual } from 'node:util';
import type { IntegrationRow } from './integration-store.ts';
import type { SyncResult } from './integration-inputs.ts';

/**
 * Whether an integration record already says what a sync result would write, so that nothing is written (no
 * statement, no progress NOTIFY): no report of the target's keys, the same outcome, message and places, and a
 * revision that is the stored one, or a newer one when no change that can alter what a place resolves to has
 * committed in the project since the stored one (`alteredAt`: the project's newest such change). The record then
 * goes on naming the older revision, which its target is as current at: the revision barrier waits only for such
 * changes (sync-barrier.ts), so it answers alike. This is what spares a resync after a restart, which reads at the
 * installation's newest revision, a write per Integration.
 */
export async function alreadyRecorded(row: IntegrationRow, result: SyncResult, syncMessage: string | null, alteredAt: () => Promise<number>): Promise<boolean> {
  // a report of the target's keys is sent only when it changed (the operator remembers the last it sent)
  if (result.targetKeys !== undefined) return false;
  if (row.isSynced !== result.isSynced || row.syncMessage !== syncMessage) return false;
  if (result.places !== undefined && !isDeepStrictEqual(row.readPlaces, result.places)) return false;
  const wanted = result.syncedRevision;
  if (wanted === undefined || wanted === row.syncedRevision) return true;
  if (wanted === null || row.syncedRevision === null || wanted < row.syncedRevision) return false;
  return (await alteredAt()) <= row.syncedRevision;
}
