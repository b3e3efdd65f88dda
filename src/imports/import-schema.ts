import { z } from 'zod';

/** The longest chain of imports (a imports b imports c …); longer ones are refused when an import is made. */
export const MAX_IMPORT_DEPTH = 10;
import type { ImportRow } from './import-store.ts';

export const secretImportSchema = z.object({
  id: z.string(),
  version: z.number(),
  importPath: z.string(),
  importEnv: z.object({ name: z.string(), slug: z.string(), id: z.string() }),
  position: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  folderId: z.string(),
  isReplication: z.boolean(),
  isReplicationSuccess: z.boolean().nullable(),
  replicationStatus: z.string().nullable(),
  lastReplicated: z.string().nullable(),
  isReserved: z.boolean(),
});

export type SecretImportResponse = z.infer<typeof secretImportSchema>;

export function toSecretImportResponse(row: ImportRow): SecretImportResponse {
  return {
    id: row.id,
    version: row.version,
    importPath: row.importPath,
    importEnv: { name: row.importEnvName, slug: row.importEnvSlug, id: row.importEnv },
    position: row.position,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    folderId: row.folderId,
    isReplication: row.isReplication,
    isReplicationSuccess: null,
    replicationStatus: null,
    lastReplicated: null,
    isReserved: false,
  };
}
