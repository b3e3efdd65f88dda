import type { Change } from './change.ts';

/** A folder of an environment that something reads; `recursive`: and every folder below it. */
export interface ReadPlace {
  environmentId: string;
  path: string;
  recursive: boolean;
}

/** Whether `path` is `ancestor` or lies below it (whole segments). */
export function isWithin(path: string, ancestor: string): boolean {
  return ancestor === '/' || path === ancestor || path.startsWith(`${ancestor}/`);
}

/**
 * Whether a committed change can alter what a reader of `places` (in
 * `projectId`) resolves: a change in a place it reads (or below a recursive
 * one), a folder change at or above one (a move or delete takes it away), or
 * a change to a whole environment it reads from. The operator routes changes
 * with it, and the revision barrier asks it which Integrations a write reaches.
 */
export function changeTouches(projectId: string, places: readonly ReadPlace[], change: Pick<Change, 'projectId' | 'environmentId' | 'secretPath' | 'kind'>): boolean {
  if (projectId !== change.projectId) return false;
  const { environmentId, secretPath } = change;
  if (environmentId === null || secretPath === null || change.kind.startsWith('environment') || change.kind === 'project-deleted') {
    return environmentId === null || places.some((place) => place.environmentId === environmentId);
  }
  const removesFolders = change.kind === 'folder';
  return places.some(
    (place) =>
      place.environmentId === environmentId &&
      (secretPath === place.path || (place.recursive && isWithin(secretPath, place.path)) || (removesFolders && isWithin(place.path, secretPath))),
  );
}
