import { z } from 'zod';
import type { SecretTag } from '../db/schema.ts';
import { slug, text } from '../validation/input.ts';

export const tagSlugSchema = slug({ lowercase: true });
export const tagColorSchema = text(32);

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

export function toTagSummary(tag: Pick<SecretTag, 'id' | 'slug' | 'color'>): TagSummary {
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
