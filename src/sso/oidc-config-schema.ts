import { z } from 'zod';
import type { OrgOidcConfig } from '../db/schema.ts';
import { id, optional, required, slug, text, url } from '../validation/input.ts';

/** What a group in the ID token's groups claim gives its members: an organization role, or a role in one project. */
export const groupMappingSchema = z.union([
  z.strictObject({
    group: required(256).describe('A value of the groups claim.'),
    orgRole: z.enum(['admin', 'member', 'no-access']).describe('The organization role its members get (the highest of their groups wins).'),
  }),
  z.strictObject({
    group: required(256).describe('A value of the groups claim.'),
    projectId: id().describe('A project of this organization.'),
    projectRole: required(64).describe("A role of that project, built in (`admin`, `member`, `viewer`, `no-access`) or a custom role's slug."),
  }),
]);
export type GroupMapping = z.infer<typeof groupMappingSchema>;

const scopes = text(512)
  .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, 'must be scope names separated by single spaces')
  .refine((value) => value.split(' ').includes('openid'), 'must include openid')
  .describe('The scopes asked for, space-separated; `openid email profile` when absent.');

const discoveryURL = url()
  .refine((value) => /^https?:\/\//.test(value), 'must be an http:// or https:// URL')
  .describe(
    "The issuer's URL: its discovery document is read from `<issuer>/.well-known/openid-configuration`. `https://` is required except on a loopback address (127.0.0.1, ::1, localhost).",
  );

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** "example.com, Example.org" → ['example.com', 'example.org']; at least one, each a domain name. */
const domainList = text(2048)
  .transform((value) =>
    value
      .split(',')
      .map((domain) => domain.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(DOMAIN, 'each must be a domain name such as example.com')).min(1, 'must name at least one domain'))
  .describe('Comma-separated e-mail domains whose users may sign in (`example.com, example.org`); a sign-in with an e-mail of any other domain is refused.');

const fields = {
  discoveryURL,
  configurationType: optional(z.literal('discoveryURL')).describe('Only `discoveryURL` (the endpoints come from the discovery document).'),
  clientId: required(256).describe('The client id Coffer is registered with at the provider.'),
  clientSecret: required(1024).describe('The client secret; stored encrypted under the root key, never answered.'),
  allowedEmailDomains: domainList,
  isActive: z.boolean().describe('Whether sign-in with this provider is open.'),
  scopes,
  groupsClaim: required(128).describe('The ID token claim that lists the user’s groups; `groups` when absent.'),
  groupMappings: z.array(groupMappingSchema).max(200).describe('Group → role mappings, evaluated again at every sign-in.'),
  defaultOrgRole: z
    .enum(['member', 'no-access'])
    .describe('The organization role of a user who joins through single sign-on when no mapping gives one; `member` when absent.'),
};

export const createOidcConfigBody = z.object({
  orgSlug: slug().describe("The organization's slug."),
  ...fields,
  configurationType: fields.configurationType,
  isActive: fields.isActive.default(true),
  scopes: optional(scopes),
  groupsClaim: optional(fields.groupsClaim),
  groupMappings: fields.groupMappings.default([]),
  defaultOrgRole: optional(fields.defaultOrgRole),
});
export type CreateOidcConfigInput = z.infer<typeof createOidcConfigBody>;

export const updateOidcConfigBody = z.object({
  orgSlug: slug().describe("The organization's slug."),
  discoveryURL: optional(fields.discoveryURL),
  configurationType: fields.configurationType,
  clientId: optional(fields.clientId),
  clientSecret: optional(fields.clientSecret),
  allowedEmailDomains: domainList.optional(),
  isActive: fields.isActive.optional(),
  scopes: optional(scopes),
  groupsClaim: optional(fields.groupsClaim),
  groupMappings: fields.groupMappings.optional(),
  defaultOrgRole: optional(fields.defaultOrgRole),
});
export type UpdateOidcConfigInput = z.infer<typeof updateOidcConfigBody>;

export const oidcConfigSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  configurationType: z.literal('discoveryURL'),
  discoveryURL: z.string().describe('The issuer.'),
  issuer: z.string(),
  clientId: z.string(),
  allowedEmailDomains: z.string().describe('Comma-separated.'),
  isActive: z.boolean(),
  scopes: z.string(),
  groupsClaim: z.string(),
  groupMappings: z.array(groupMappingSchema),
  defaultOrgRole: z.string(),
  callbackURL: z.string().describe('The redirect URI to register at the provider.'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function toOidcConfigResponse(row: OrgOidcConfig, callbackURL: string) {
  return {
    id: row.id,
    orgId: row.orgId,
    configurationType: 'discoveryURL' as const,
    discoveryURL: row.issuer,
    issuer: row.issuer,
    clientId: row.clientId,
    allowedEmailDomains: row.allowedEmailDomains.join(', '),
    isActive: row.isActive,
    scopes: row.scopes,
    groupsClaim: row.groupsClaim,
    groupMappings: row.groupMappings as GroupMapping[],
    defaultOrgRole: row.defaultOrgRole,
    callbackURL,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const DEFAULT_SCOPES = 'openid email profile';
export const DEFAULT_GROUPS_CLAIM = 'groups';
