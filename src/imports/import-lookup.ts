import { listImportsOfFolders } from './import-store.ts';

/** Reads of imports for other domains: the imports of folders, for resolving what a folder imports. */
export { listImportsOfFolders };
