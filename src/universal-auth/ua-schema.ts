import { z } from 'zod';
import type { IdentityUaClientSecret, IdentityUniversalAuth } from '../db/schema.ts';
import { count, required, seconds, text } from '../validation/input.ts';
import { ANY_ADDRESS, trustedIpsSchema } from './trusted-ips.ts';

export const MAX_TTL_SECONDS = 315_360_000;
export const DEFAULT_TOKEN_TTL_SECONDS = 2_592_000;

const trustedIpSchema = z.object({ ipAddress: z.string(), type: z.string(), prefix: z.number() });

const clientSecretTrustedIps = trustedIpsSchema.describe('Addresses a login with a client secret may come from (default: any).');
const accessTokenTrustedIps = trustedIpsSchema.describe('Addresses requests with the access tokens may come from, checked on every request (default: any).');
const ttlText = 'Seconds an access token lives after it is issued or renewed';
const maxTtlText = 'Seconds an access token may live in all, renewals included';
const usesText = 'How many requests one access token may make; 0 (default): unlimited.';

/** Attach: the reference's defaults (30 days, any address, unlimited uses). */
export const attachUniversalAuthBody = z.object({
  clientSecretTrustedIps: clientSecretTrustedIps.default(() => ANY_ADDRESS.map((range) => ({ ...range }))),
  accessTokenTrustedIps: accessTokenTrustedIps.default(() => ANY_ADDRESS.map((range) => ({ ...range }))),
  accessTokenTTL: seconds(1, MAX_TTL_SECONDS).default(DEFAULT_TOKEN_TTL_SECONDS).describe(`${ttlText} (default 30 days).`),
  accessTokenMaxTTL: seconds(1, MAX_TTL_SECONDS).default(DEFAULT_TOKEN_TTL_SECONDS).describe(`${maxTtlText} (default 30 days).`),
  accessTokenNumUsesLimit: count().default(0).describe(usesText),
});

export const updateUniversalAuthBody = z.object({
  clientSecretTrustedIps: clientSecretTrustedIps.optional(),
  accessTokenTrustedIps: accessTokenTrustedIps.optional(),
  accessTokenTTL: seconds(0, MAX_TTL_SECONDS).optional().describe(`${ttlText}.`),
  accessTokenMaxTTL: seconds(0, MAX_TTL_SECONDS).optional().describe(`${maxTtlText}.`),
  accessTokenNumUsesLimit: count().optional().describe(usesText),
});

export const universalAuthSchema = z.object({
  id: z.string(),
  clientId: z.string(),
  identityId: z.string(),
  accessTokenTTL: z.number(),
  accessTokenMaxTTL: z.number(),
  accessTokenNumUsesLimit: z.number(),
  clientSecretTrustedIps: z.array(trustedIpSchema),
  accessTokenTrustedIps: z.array(trustedIpSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function toUniversalAuthResponse(row: IdentityUniversalAuth) {
  return {
    id: row.id,
    clientId: row.clientId,
    identityId: row.identityId,
    accessTokenTTL: row.accessTokenTtl,
    accessTokenMaxTTL: row.accessTokenMaxTtl,
    accessTokenNumUsesLimit: row.accessTokenNumUsesLimit,
    clientSecretTrustedIps: row.clientSecretTrustedIps,
    accessTokenTrustedIps: row.accessTokenTrustedIps,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const createClientSecretBody = z.object({
  description: text(500).default('').describe('What the client secret is for, at most 500 characters.'),
  numUsesLimit: count().default(0).describe('How many logins it allows; 0 (default): unlimited.'),
  ttl: seconds(0, MAX_TTL_SECONDS).default(0).describe('Seconds it is valid; 0 (default): until revoked.'),
});

/** Op 10's client secret data: never the secret or its digest. */
export const clientSecretDataSchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  description: z.string(),
  clientSecretPrefix: z.string(),
  clientSecretNumUses: z.number(),
  clientSecretNumUsesLimit: z.number(),
  clientSecretTTL: z.number(),
  identityUAId: z.string(),
  isClientSecretRevoked: z.boolean(),
});

export function toClientSecretData(row: IdentityUaClientSecret) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    description: row.description,
    clientSecretPrefix: row.clientSecretPrefix,
    clientSecretNumUses: row.clientSecretNumUses,
    clientSecretNumUsesLimit: row.clientSecretNumUsesLimit,
    clientSecretTTL: row.clientSecretTtl,
    identityUAId: row.identityUaId,
    isClientSecretRevoked: row.isClientSecretRevoked,
  };
}

export const loginBody = z.object({
  clientId: required(256).describe("The identity's universal-auth client id."),
  clientSecret: required(256).describe('One of its client secrets.'),
});

export const tokenResponseSchema = z.object({
  accessToken: z.string().describe('The access token: send it as `Authorization: Bearer <token>`.'),
  expiresIn: z.number().describe('Seconds until it expires (unless renewed).'),
  accessTokenMaxTTL: z.number().describe('Seconds it may live in all, renewals included.'),
  tokenType: z.literal('Bearer'),
});
