import { z } from 'zod';
import type { Environment } from '../db/schema.ts';
import { name, slug } from '../validation/input.ts';

export const environmentSlugSchema = slug();
export const environmentNameSchema = name();

export const environmentSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  position: z.number(),
  projectId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type EnvironmentResponse = z.infer<typeof environmentSchema>;

export function toEnvironmentResponse(environment: Environment): EnvironmentResponse {
  return {
    id: environment.id,
    name: environment.name,
    slug: environment.slug,
    position: environment.position,
    projectId: environment.projectId,
    createdAt: environment.createdAt.toISOString(),
    updatedAt: environment.updatedAt.toISOString(),
  };
}
