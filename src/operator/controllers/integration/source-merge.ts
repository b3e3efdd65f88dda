import type { SecretListing } from '../../port/coffer-port.ts';
import type { KeyCollision } from '../../resources.ts';
import type { KeyFilter, OfferedSecret } from './key-selection.ts';

/** One source as read: the listing, the environment slug it was read from, and its key selection. */
export interface ReadSource {
  environment: string;
  listing: Pick<SecretListing, 'secrets' | 'imports'>;
  filter: KeyFilter;
}

/** Most collisions kept in the status, and most overridden places named per key. */
export const COLLISIONS_KEPT = 100;
const OVERRIDDEN_KEPT = 20;

/** Where a selected name's value came from: a secret of a folder (environment slug, path, its name there). */
export interface KeyOrigin {
  environment: string;
  path: string;
  key: string;
}

export interface MergedKeys {
  /** Every selected name (renamed) and the value it resolved to. */
  values: Map<string, string>;
  /** Every selected name and the secret whose value it holds (the one that won). */
  origins: Map<string, KeyOrigin>;
  /** Names more than one place gave different values for, sorted by name. */
  collisions: KeyCollision[];
}

interface Candidate extends OfferedSecret {
  /** Where it comes from, for people: "dev:/app", "dev:/shared (imported)". */
  place: string;
  origin: KeyOrigin;
}

interface Held {
  value: string;
  place: string;
  origin: KeyOrigin;
  overridden: string[];
}

/**
 * Merges the sources into one set of keys. The precedence, lowest first:
 * sources in spec order (the primary one first, so a later source wins); in
 * each, its imports in position order (the last import wins), then its own
 * secrets, deeper folders first (with recursive, the folder nearest the
 * synced path wins). Selection and renames apply to each secret before it
 * competes, so a secret left out never hides another. Whenever a place
 * overrides a different value of the same name, the collision is kept.
 */
export function mergeSources(sources: readonly ReadSource[]): MergedKeys {
  const held = new Map<string, Held>();
  for (const source of sources) {
    for (const candidate of candidatesOf(source)) {
      const name = source.filter.nameOf(candidate);
      if (name === undefined) continue;
      const before = held.get(name);
      const overridden = before && before.value !== candidate.value ? [...before.overridden, before.place] : (before?.overridden ?? []);
      held.set(name, { value: candidate.value, place: candidate.place, origin: candidate.origin, overridden });
    }
  }
  const values = new Map<string, string>();
  const origins = new Map<string, KeyOrigin>();
  const collisions: KeyCollision[] = [];
  for (const [name, { value, place, origin, overridden }] of held) {
    values.set(name, value);
    origins.set(name, origin);
    if (overridden.length > 0) collisions.push({ key: name, winner: place, overridden: overridden.slice(-OVERRIDDEN_KEPT) });
  }
  collisions.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { values, origins, collisions };
}

/** A source's secrets, lowest precedence first. */
function candidatesOf({ environment, listing }: ReadSource): Candidate[] {
  const imported = listing.imports.flatMap((group) =>
    group.secrets.map((secret) => ({
      ...secret,
      place: `${group.environment}:${group.path} (imported)`,
      origin: { environment: group.environment, path: group.path, key: secret.key },
    })),
  );
  const depth = (path: string) => path.split('/').filter(Boolean).length;
  const own = [...listing.secrets]
    .sort((a, b) => depth(b.path) - depth(a.path))
    .map((secret) => ({
      key: secret.key,
      value: secret.value,
      tags: secret.tags,
      place: `${environment}:${secret.path}`,
      origin: { environment, path: secret.path, key: secret.key },
    }));
  return [...imported, ...own];
}
