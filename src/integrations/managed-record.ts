import type { ReadPlace } from '../changes/read-places.ts';
import type { IntegrationRow } from './integration-store.ts';

/** The Integration resource a record is kept for: its cluster, namespace and name (`managedBy` is `<namespace>/<name>`), and the Secret it writes. */
export function resourceOf(row: IntegrationRow): { id: string; cluster: string; namespace: string; name: string; secretName: string | null } {
  const [namespace = '', name = ''] = (row.managedBy ?? '').split('/');
  return { id: row.id, cluster: row.cluster ?? '', namespace, name, secretName: row.app };
}

/** What the record's Integration reads: the places its operator last reported, or, before its first sync, its own source. */
export function readPlacesOf(row: IntegrationRow): ReadPlace[] {
  return (row.readPlaces as ReadPlace[] | null) ?? [{ environmentId: row.envId, path: row.secretPath, recursive: false }];
}
