import { z } from 'zod';
import type { IdentityAdditionalPrivilege } from '../db/schema.ts';
import { ACTIONS, type PermissionRule } from '../permissions/permission-rules.ts';
import { asPathGlob, PATH_GLOB_RULES } from '../patterns/pattern-schema.ts';
import { permissionRuleSchema, permissionRulesInputSchema } from '../permissions/permission-schema.ts';
import { temporaryAccessFields, temporaryAccessResponse, temporaryAccessResponseSchema } from '../permissions/temporary-access.ts';
import { id, PATH_MAX, required, slug } from '../validation/input.ts';

export const privilegeSlugSchema = slug({ lowercase: true, max: 60 });

/** The reference's shorthand for a secrets-only privilege. */
const privilegePermissionSchema = z
  .object({
    actions: z.array(z.enum(ACTIONS)).min(1).describe('`read`, `create`, `edit`, `delete`.'),
    subject: z.literal('secrets').describe('Always `secrets`.'),
    conditions: z
      .object({
        environment: required().describe('The environment slug.'),
        secretPath: z
          .object({ $glob: asPathGlob(required(PATH_MAX)).describe(`A glob such as \`/app/**\`. ${PATH_GLOB_RULES}`) })
          .optional()
          .describe('The secret paths (default: all).'),
      })
      .describe('Where the rule applies.'),
  })
  .describe('The short form for one rule on secrets (instead of `permissions`).')
  .transform((shorthand): PermissionRule[] => [
    {
      subject: 'secrets',
      action: [...new Set(shorthand.actions)],
      conditions: { environment: shorthand.conditions.environment, ...(shorthand.conditions.secretPath ? { secretPath: shorthand.conditions.secretPath } : {}) },
    },
  ]);

export const privilegeRulesFields = {
  permissions: permissionRulesInputSchema.min(1).optional().describe('The rules the privilege adds (or give `privilegePermission`).'),
  privilegePermission: privilegePermissionSchema.optional(),
};

export function rulesOf(input: { permissions?: PermissionRule[]; privilegePermission?: PermissionRule[] }): PermissionRule[] | undefined {
  return input.permissions ?? input.privilegePermission;
}

const hasRules = (body: { permissions?: unknown; privilegePermission?: unknown }) => body.permissions !== undefined || body.privilegePermission !== undefined;
const rulesRequired = { message: 'Permission or privilegePermission must be provided', path: ['permissions'] };

const target = {
  identityId: id().describe("The identity's id."),
  projectSlug: id().describe("The project's slug."),
};
const slugField = privilegeSlugSchema
  .describe('A slug for the privilege, unique for the identity in the project (generated when absent).')
  .meta({ examples: ['read-prod-app'] });
const privilegeSlug = id().describe("The privilege's slug.");

export const createPermanentPrivilegeBody = z.object({ ...target, slug: slugField.optional(), ...privilegeRulesFields }).refine(hasRules, rulesRequired);
export const createTemporaryPrivilegeBody = z
  .object({ ...target, slug: slugField.optional(), ...privilegeRulesFields, ...temporaryAccessFields })
  .refine(hasRules, rulesRequired);

export const updatePrivilegeBody = z.object({
  privilegeSlug,
  ...target,
  privilegeDetails: z
    .object({
      slug: slugField.optional().describe('A new slug.'),
      ...privilegeRulesFields,
      isTemporary: z.boolean().optional().describe('`true`: it ends after `temporaryRange`; `false`: it is permanent.'),
      temporaryMode: temporaryAccessFields.temporaryMode.optional(),
      temporaryRange: temporaryAccessFields.temporaryRange.optional(),
      temporaryAccessStartTime: temporaryAccessFields.temporaryAccessStartTime.optional(),
    })
    .describe('What to change; fields left out keep their value.'),
});

export const privilegeTargetSchema = z.object({ privilegeSlug, ...target });

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
