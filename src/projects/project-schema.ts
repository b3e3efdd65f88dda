import { z } from 'zod';
import type { Environment, Project } from '../db/schema.ts';

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const slugMessage = 'must be lowercase letters, digits and single hyphens, without a leading or trailing hyphen';

export const projectSlugSchema = z.string().trim().min(5).max(36).regex(SLUG_PATTERN, `slug ${slugMessage}`);
export const projectNameSchema = z.string().trim().min(1).max(64, 'Name must be 64 or fewer characters');

export const projectSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  autoCapitalization: z.boolean(),
  orgId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: z.number(),
  upgradeStatus: z.string().nullable(),
  pitVersionLimit: z.number(),
  kmsCertificateKeyId: z.string().nullable(),
  auditLogsRetentionDays: z.number().nullable(),
});

export const projectWithEnvironmentsSchema = projectSchema.extend({
  _id: z.string(),
  environments: z.array(z.object({ name: z.string(), slug: z.string(), id: z.string() })),
});

export type ProjectResponse = z.infer<typeof projectSchema>;
export type ProjectWithEnvironments = z.infer<typeof projectWithEnvironmentsSchema>;

export function toProjectResponse(project: Project): ProjectResponse {
  return {
    id: project.id,
    name: project.name,
    slug: project.slug,
    autoCapitalization: project.autoCapitalization,
    orgId: project.orgId,
    createdAt: project.createdAt.toISOString(),
    updatedAt: project.updatedAt.toISOString(),
    version: project.version,
    upgradeStatus: project.upgradeStatus,
    pitVersionLimit: project.pitVersionLimit,
    kmsCertificateKeyId: project.kmsCertificateKeyId,
    auditLogsRetentionDays: project.auditLogsRetentionDays,
  };
}

export function toProjectWithEnvironments(project: Project, environments: Environment[]): ProjectWithEnvironments {
  return {
    ...toProjectResponse(project),
    _id: project.id,
    environments: environments.map(({ name, slug, id }) => ({ name, slug, id })),
  };
}
