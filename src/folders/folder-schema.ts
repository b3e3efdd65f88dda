import { z } from 'zod';
import type { Folder } from '../db/schema.ts';

export const folderSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  envId: z.string(),
  parentId: z.string().nullable(),
  isReserved: z.boolean(),
});

export const folderDetailSchema = folderSchema.extend({
  environment: z.object({ envId: z.string(), envName: z.string(), envSlug: z.string() }),
  path: z.string(),
  projectId: z.string(),
});

export type FolderResponse = z.infer<typeof folderSchema>;

export function toFolderResponse(folder: Folder): FolderResponse {
  return {
    id: folder.id,
    name: folder.name,
    version: folder.version,
    createdAt: folder.createdAt.toISOString(),
    updatedAt: folder.updatedAt.toISOString(),
    envId: folder.envId,
    parentId: folder.parentId,
    isReserved: folder.isReserved,
  };
}
