import { z } from 'zod';
import { changeTouches, isWithin } from '../changes/read-places.ts';
import { readPlacesOf, resourceOf } from './managed-record.ts';
import type { IntegrationRow } from './integration-store.ts';

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
});

export type Destination = z.infer<typeof destinationSchema>;

export interface PlaceDestinations {
  integrations: Destination[];
  truncated: boolean;
}

/**
 * The Integrations among `rows` that read the folder `path` of environment `environmentId`: what they last told
 * their operator they read (their sources, folders below a recursive one, imported folders), or before their first
 * sync, their own source. The same rule that routes a write to them (changeTouches). `rows`: the project's records, read
with a limit one past DESTINATIONS_READ_MAX, so that a project with more is answered as truncated.
 */
export function destinationsOf(rows: readonly IntegrationRow[], place: { projectId: string; environmentId: string; path: string }): PlaceDestinations {
  const change = { projectId: place.projectId, environmentId: place.environmentId, secretPath: place.path, kind: 'secret' as const };
  const reaching = rows.slice(0, DESTINATIONS_READ_MAX).filter((row) => changeTouches(row.projectId, readPlacesOf(row), change));
  return {
    integrations: reaching.slice(0, DESTINATIONS_ANSWERED_MAX).map((row) => toDestination(row, place)),
    truncated: rows.length > DESTINATIONS_READ_MAX || reaching.length > DESTINATIONS_ANSWERED_MAX,
  };
}

function throughOf(row: IntegrationRow, place: { environmentId: string; path: string }): ReachedThrough {
  if (row.envId !== place.environmentId || !isWithin(place.path, row.secretPath)) return 'import';
  return place.path === row.secretPath ? 'source' : 'recursive';
}

function toDestination(row: IntegrationRow, place: { environmentId: string; path: string }): Destination {
  return {
    ...resourceOf(row),
    source: { environment: row.envSlug, secretPath: row.secretPath },
    through: throughOf(row, place),
    isActive: row.isActive,
    isSynced: row.isSynced,
    syncMessage: row.syncMessage,
    syncedRevision: row.syncedRevision,
    reloads: row.reloads,
    reloadedRevision: row.reloadedRevision,
    lastSyncTime: row.lastUsed?.toISOString() ?? null,
  };
}
