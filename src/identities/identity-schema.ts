import { z } from 'zod';
import type { Identity } from '../db/schema.ts';
import { ORG_ROLES } from '../permissions/permission-rules.ts';
import { name } from '../validation/input.ts';
import type { OrgIdentity } from './identity-store.ts';

export const identityNameSchema = name();
export const orgRoleSchema = z.enum(ORG_ROLES);

export const identitySchema = z.object({
  id: z.string(),
  name: z.string(),
  authMethod: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** An identity as a member of its organization (the reference's list/get shape). */
export const orgIdentitySchema = z.object({
  id: z.string(),
  identityId: z.string(),
  orgId: z.string(),
  role: z.string(),
  roleId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  identity: z.object({ id: z.string(), name: z.string(), authMethod: z.string().nullable() }),
});

export function toIdentityResponse(identity: Pick<Identity, 'id' | 'name' | 'authMethod' | 'createdAt' | 'updatedAt'>) {
  return {
    id: identity.id,
    name: identity.name,
    authMethod: identity.authMethod,
    createdAt: identity.createdAt.toISOString(),
    updatedAt: identity.updatedAt.toISOString(),
  };
}

export function toOrgIdentityResponse(row: OrgIdentity) {
  return {
    id: row.membershipId,
    identityId: row.id,
    orgId: row.orgId,
    role: row.role,
    roleId: null,
    createdAt: row.membershipCreatedAt.toISOString(),
    updatedAt: row.membershipUpdatedAt.toISOString(),
    identity: { id: row.id, name: row.name, authMethod: row.authMethod },
  };
}
