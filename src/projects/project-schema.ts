import { z } from 'zod';
import type { Environment, Project } from '../db/schema.ts';
import { name, slug } from '../validation/input.ts';

export const projectSlugSchema = slug({ min: 5, max: 36 });
export const projectNameSchema = name();

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

export function toProjectWithEnvironments(project: Project, environments: readonly Environment[]): ProjectWithEnvironments {
  return {
    ...toProjectResponse(project),
    _id: project.id,
    environments: environments.map(({ name, slug, id }) => ({ name, slug, id })),
  };
}
