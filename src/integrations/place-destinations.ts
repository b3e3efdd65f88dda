import { z } from 'zod';
import { changeTouches, isWithin } from '../changes/read-places.ts';
import type { ReadOnlyDb } from '../db/database.ts';
import { ROLLOUT_KINDS } from './workload-rollout.ts';
import { readPlacesOf, resourceOf } from './managed-record.ts';
import type { IntegrationRow } from './integration-store.ts';
import { folderKeysOf, type KeyPlace, mayHoldKey, type TargetKeys } from './target-keys.ts';
import { listIntegrationTargetKeys, listKeyFacts } from './target-keys-store.ts';

/** Managed records of one project read for one answer, at most; a project with more says so (`truncated`). */
export const DESTINATIONS_READ_MAX = 1000;
/** Integrations one answer names, at most. */
export const DESTINATIONS_ANSWERED_MAX = 100;

/** How an Integration comes to sync a place: it is its source, lies below a recursive source, or is read through an import. */
export type ReachedThrough = 'source' | 'recursive' | 'import';

export const destinationSchema = z.object({
  id: z.string().describe("The integration record's id."),
  cluster: z.string().describe('The cluster of the Integration resource.'),
  namespace: z.string().describe('Its namespace (where its Secret is).'),
  name: z.string().describe("The Integration resource's name."),
  secretName: z.string().nullable().describe('The Secret (or ConfigMap) it writes.'),
  source: z.object({ environment: z.string(), secretPath: z.string() }).describe('The place it syncs from.'),
  through: z
    .enum(['source', 'recursive', 'import'])
    .describe('How it reads the place asked about: it is its source, lies below its recursive source, or comes through an import.'),
  isActive: z.boolean().describe('False: paused, its Secret is not updated.'),
  isSynced: z.boolean().nullable().describe('Whether its last sync succeeded; null before the first.'),
  syncMessage: z.string().nullable().describe('Its last sync message: why it failed (the condition message), or the keys left out; never a value.'),
  syncedRevision: z.number().nullable().describe('The change-log revision its Secret reflects; null before the first sync.'),
  reloads: z.boolean().describe('Whether it rolls the workloads that read a changed key (spec.reload).'),
  reloadedRevision: z.number().nullable().describe('The revision its workload reload reflects.'),
  lastSyncTime: z.string().nullable().describe('When its operator last recorded a sync.'),
  keys: z
    .object({
      carried: z
        .array(
          z.object({
            key: z.string().describe('Its name in this folder.'),
            as: z.string().describe('Its name in the Secret (another when the Integration renames it).'),
          }),
        )
        .describe("This folder's keys its Secret holds (with `key`: that key only, when it holds it)."),
      complete: z
        .boolean()
        .describe(
          "False: its Secret may hold more of this folder's keys than `carried` names (its template made keys from the secrets, or its operator's report stopped at its cap).",
        ),
      workloads: z
        .array(
          z.object({
            kind: z.enum(ROLLOUT_KINDS).describe('Its kind.'),
            name: z.string().describe("Its name, in the Integration resource's namespace."),
            keys: z.array(z.string()).describe('The keys of this folder it reads (of `carried`, by their names in this folder).'),
            everyKey: z.boolean().describe('It reads every key of the Secret (envFrom, or a volume without items), not named keys.'),
          }),
        )
        .nullable()
        .describe(
          "The Deployments, StatefulSets and DaemonSets of the Integration resource's namespace whose pod template reads keys of `carried` (env secretKeyRef, envFrom, volumes); null when its operator does not report workloads (workload reload's permissions are not granted in its cluster).",
        ),
      workloadsTruncated: z.boolean().describe('More workloads read its Secret than its operator reported.'),
    })
    .nullable()
    .describe(
      'What its Secret holds of this folder and which workloads read it, as its operator last reported with a sync (names only, never a value); null before such a report.',
    ),
});

export type Destination = z.infer<typeof destinationSchema>;

export interface PlaceDestinations {
  integrations: Destination[];
  truncated: boolean;
}

/** The folder asked about (by environment id for the records' read places, by slug for their key reports), and maybe one of its keys. */
export type AskedPlace = KeyPlace & { projectId: string; environmentId: string };

/**
 * The Integrations among `rows` that read the folder `path` of environment `environmentId`: what they last told
 * their operator they read (their sources, folders below a recursive one, imported folders), or before their first
 * sync, their own source. The same rule that routes a write to them (changeTouches). With a key, those whose
 * operator's complete report says their Secret does not hold it are left out. `rows`: the project's records, read
 * with a limit one past DESTINATIONS_READ_MAX, so that a project with more is answered as truncated.
 */
export async function destinationsOf(db: ReadOnlyDb, rows: readonly IntegrationRow[], place: AskedPlace): Promise<PlaceDestinations> {
  const change = { projectId: place.projectId, environmentId: place.environmentId, secretPath: place.path, kind: 'secret' as const };
  let reaching = rows.slice(0, DESTINATIONS_READ_MAX).filter((row) => changeTouches(row.projectId, readPlacesOf(row), change));
  if (place.key !== undefined) {
    const facts = await listKeyFacts(
      db,
      reaching.map((row) => row.id),
      { ...place, key: place.key },
    );
    reaching = reaching.filter((row) => {
      const known = facts.get(row.id);
      return known === undefined || mayHoldKey(known, throughOf(row, place) === 'import');
    });
  }
  const answered = reaching.slice(0, DESTINATIONS_ANSWERED_MAX);
  const reports = await listIntegrationTargetKeys(
    db,
    answered.map((row) => row.id),
  );
  return {
    integrations: answered.map((row) => toDestination(row, place, reports.get(row.id))),
    truncated: rows.length > DESTINATIONS_READ_MAX || reaching.length > DESTINATIONS_ANSWERED_MAX,
  };
}

function throughOf(row: IntegrationRow, place: { environmentId: string; path: string }): ReachedThrough {
  if (row.envId !== place.environmentId || !isWithin(place.path, row.secretPath)) return 'import';
  return place.path === row.secretPath ? 'source' : 'recursive';
}

function toDestination(row: IntegrationRow, place: AskedPlace, report: TargetKeys | undefined): Destination {
  const through = throughOf(row, place);
  return {
    ...resourceOf(row),
    source: { environment: row.envSlug, secretPath: row.secretPath },
    through,
    isActive: row.isActive,
    isSynced: row.isSynced,
    syncMessage: row.syncMessage,
    syncedRevision: row.syncedRevision,
    reloads: row.reloads,
    reloadedRevision: row.reloadedRevision,
    lastSyncTime: row.lastUsed?.toISOString() ?? null,
    keys: report ? folderKeysOf(report, place, through === 'import') : null,
  };
}
