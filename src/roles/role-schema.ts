import { z } from 'zod';
import type { Project, ProjectRole } from '../db/schema.ts';
import { BUILT_IN_PROJECT_ROLES, type PermissionRule } from '../permissions/permission-rules.ts';
import { permissionRuleSchema } from '../permissions/permission-schema.ts';
import { slug } from '../validation/input.ts';

export const roleSlugSchema = slug({ lowercase: true });

export const roleSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  permissions: z.array(permissionRuleSchema),
  projectId: z.string(),
  isBuiltIn: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type RoleResponse = z.infer<typeof roleSchema>;

export function toRoleResponse(role: ProjectRole): RoleResponse {
  return {
    id: role.id,
    name: role.name,
    slug: role.slug,
    description: role.description,
    permissions: role.permissions as PermissionRule[],
    projectId: role.projectId,
    isBuiltIn: false,
    createdAt: role.createdAt.toISOString(),
    updatedAt: role.updatedAt.toISOString(),
  };
}

/** The built-in roles, shown like custom ones (their id is their slug). */
export function builtInRoleResponses(project: Project): RoleResponse[] {
  return Object.entries(BUILT_IN_PROJECT_ROLES).map(([slug, role]) => ({
    id: slug,
    name: role.name,
    slug,
    description: role.description,
    permissions: role.rules,
    projectId: project.id,
    isBuiltIn: true,
    createdAt: project.createdAt.toISOString(),
    updatedAt: project.createdAt.toISOString(),
  }));
}
