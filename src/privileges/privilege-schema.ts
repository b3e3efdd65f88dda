import { z } from 'zod';
import type { IdentityAdditionalPrivilege } from '../db/schema.ts';
import { ACTIONS, type PermissionRule } from '../permissions/permission-rules.ts';
import { permissionRuleSchema, permissionRulesInputSchema } from '../permissions/permission-schema.ts';
import { temporaryAccessFields, temporaryAccessResponse, temporaryAccessResponseSchema } from '../permissions/temporary-access.ts';
import { SLUG_PATTERN, slugMessage } from '../projects/project-schema.ts';

export const privilegeSlugSchema = z.string().trim().toLowerCase().min(1).max(60).regex(SLUG_PATTERN, `slug ${slugMessage}`);

/** The reference's shorthand for a secrets-only privilege. */
const privilegePermissionSchema = z
  .object({
    actions: z.array(z.enum(ACTIONS)).min(1),
    subject: z.literal('secrets'),
    conditions: z.object({ environment: z.string().trim().min(1), secretPath: z.object({ $glob: z.string().min(1) }).optional() }),
  })
  .transform((shorthand): PermissionRule[] => [
    {
      subject: 'secrets',
      action: [...new Set(shorthand.actions)],
      conditions: { environment: shorthand.conditions.environment, ...(shorthand.conditions.secretPath ? { secretPath: shorthand.conditions.secretPath } : {}) },
    },
  ]);

export const privilegeRulesFields = {
  permissions: permissionRulesInputSchema.min(1).optional(),
  privilegePermission: privilegePermissionSchema.optional(),
};

export function rulesOf(input: { permissions?: PermissionRule[]; privilegePermission?: PermissionRule[] }): PermissionRule[] | undefined {
  return input.permissions ?? input.privilegePermission;
}

const hasRules = (body: { permissions?: unknown; privilegePermission?: unknown }) => body.permissions !== undefined || body.privilegePermission !== undefined;
const rulesRequired = { message: 'Permission or privilegePermission must be provided', path: ['permissions'] };

const target = { identityId: z.string().trim().min(1), projectSlug: z.string().trim().min(1) };

export const createPermanentPrivilegeBody = z.object({ ...target, slug: privilegeSlugSchema.optional(), ...privilegeRulesFields }).refine(hasRules, rulesRequired);
export const createTemporaryPrivilegeBody = z
  .object({ ...target, slug: privilegeSlugSchema.optional(), ...privilegeRulesFields, ...temporaryAccessFields })
  .refine(hasRules, rulesRequired);

export const updatePrivilegeBody = z.object({
  privilegeSlug: z.string().trim().min(1),
  ...target,
  privilegeDetails: z.object({
    slug: privilegeSlugSchema.optional(),
    ...privilegeRulesFields,
    isTemporary: z.boolean().optional(),
    temporaryMode: temporaryAccessFields.temporaryMode.optional(),
    temporaryRange: temporaryAccessFields.temporaryRange.optional(),
    temporaryAccessStartTime: temporaryAccessFields.temporaryAccessStartTime.optional(),
  }),
});

export const privilegeTargetSchema = z.object({ privilegeSlug: z.string().trim().min(1), ...target });

export const privilegeSchema = z.object({
  id: z.string(),
  slug: z.string(),
  projectMembershipId: z.string(),
  ...temporaryAccessResponseSchema,
  permissions: z.array(permissionRuleSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function toPrivilegeResponse(row: IdentityAdditionalPrivilege) {
  return {
    id: row.id,
    slug: row.slug,
    projectMembershipId: row.identityProjectMembershipId,
    ...temporaryAccessResponse(row),
    permissions: row.permissions as PermissionRule[],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
