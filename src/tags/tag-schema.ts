import { z } from 'zod';
import type { SecretTag } from '../db/schema.ts';
import { SLUG_PATTERN, slugMessage } from '../projects/project-schema.ts';

export const tagSlugSchema = z
  .string()
  .trim()
  .toLowerCase()
  .min(1, 'slug must not be empty')
  .max(64, 'slug must be 64 or fewer characters')
  .regex(SLUG_PATTERN, `slug ${slugMessage}`);
export const tagColorSchema = z.string().max(32, 'color must be 32 or fewer characters');

export const tagSummarySchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  color: z.string().nullable(),
});

export const tagSchema = tagSummarySchema.extend({
  projectId: z.string(),
  createdBy: z.string().nullable(),
  createdByActorType: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type TagSummary = z.infer<typeof tagSummarySchema>;
export type TagResponse = z.infer<typeof tagSchema>;

export function toTagSummary(tag: SecretTag): TagSummary {
  return { id: tag.id, slug: tag.slug, name: tag.slug, color: tag.color };
}

export function toTagResponse(tag: SecretTag): TagResponse {
  return {
    ...toTagSummary(tag),
    projectId: tag.projectId,
    createdBy: tag.createdBy,
    createdByActorType: tag.createdByActorType,
    createdAt: tag.createdAt.toISOString(),
    updatedAt: tag.updatedAt.toISOString(),
  };
}
