import { z } from 'zod';
import { temporaryAccessFields, temporaryAccessResponse, temporaryAccessResponseSchema } from '../permissions/temporary-access.ts';
import { required } from '../validation/input.ts';
import type { MembershipRoleRow } from './membership-store.ts';

const roleSlug = required(64).toLowerCase().describe('A role slug: `admin`, `member`, `viewer`, `no-access`, or a custom role of the project.');

/** One role of a membership, permanent or temporary (op 11's two item shapes). */
export const roleAssignmentSchema = z.union([
  z.object({ role: roleSlug, isTemporary: z.literal(false).default(false).describe('A permanent role.') }).describe('A permanent role.'),
  z
    .object({ role: roleSlug, isTemporary: z.literal(true).describe('A temporary role.'), ...temporaryAccessFields })
    .describe('A temporary role: it stops granting access when it ends.'),
]);
export type RoleAssignment = z.infer<typeof roleAssignmentSchema>;

export const roleAssignmentsSchema = z
  .array(roleAssignmentSchema)
  .min(1)
  .refine((roles) => roles.some((role) => !role.isTemporary), 'At least one long lived role is required')
  .describe('The roles, replacing the ones held; at least one must be permanent.');

export const membershipRoleSchema = z.object({
  id: z.string(),
  role: z.string(),
  customRoleId: z.string().nullable(),
  customRoleSlug: z.string().nullable(),
  customRoleName: z.string().nullable(),
  projectMembershipId: z.string().nullable().optional(),
  identityProjectMembershipId: z.string().nullable().optional(),
  ...temporaryAccessResponseSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function toMembershipRoleResponse(row: MembershipRoleRow) {
  const owner = row.projectMembershipId ? { projectMembershipId: row.projectMembershipId } : { identityProjectMembershipId: row.identityProjectMembershipId };
  return {
    id: row.id,
    role: row.role,
    customRoleId: row.customRoleId,
    customRoleSlug: row.customRoleSlug,
    customRoleName: row.customRoleName,
    ...owner,
    ...temporaryAccessResponse(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const userMembershipSchema = z.object({
  id: z.string(),
  userId: z.string(),
  projectId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const identityMembershipSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  projectId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function toMembershipResponse<T extends { id: string; projectId: string; createdAt: Date; updatedAt: Date }>(row: T) {
  return { ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}
