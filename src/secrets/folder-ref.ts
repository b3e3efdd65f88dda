/** A folder of an environment, by environment id: what a listing read, as it crosses a boundary. */
export interface FolderRef {
  environmentId: string;
  path: string;
}

/** The "<environment id>:<path>" key a reader records a folder read under (a set of them dedupes). */
export function folderKey(folder: FolderRef): string {
  return `${folder.environmentId}:${folder.path}`;
}

/** The folder a key names (environment ids hold no ':', paths may). */
export function folderRefOf(key: string): FolderRef {
  const separator = key.indexOf(':');
  return { environmentId: key.slice(0, separator), path: key.slice(separator + 1) };
}
