import { z } from 'zod';
import type { IdentityUaClientSecret, IdentityUniversalAuth } from '../db/schema.ts';
import { ANY_ADDRESS, trustedIpsSchema } from './trusted-ips.ts';

export const MAX_TTL_SECONDS = 315_360_000;
export const DEFAULT_TOKEN_TTL_SECONDS = 2_592_000;

const trustedIpSchema = z.object({ ipAddress: z.string(), type: z.string(), prefix: z.number() });

/** Attach: the reference's defaults (30 days, any address, unlimited uses). */
export const attachUniversalAuthBody = z.object({
  clientSecretTrustedIps: trustedIpsSchema.default(() => ANY_ADDRESS.map((range) => ({ ...range }))),
  accessTokenTrustedIps: trustedIpsSchema.default(() => ANY_ADDRESS.map((range) => ({ ...range }))),
  accessTokenTTL: z.number().int().min(1).max(MAX_TTL_SECONDS).default(DEFAULT_TOKEN_TTL_SECONDS),
  accessTokenMaxTTL: z.number().int().min(1).max(MAX_TTL_SECONDS).default(DEFAULT_TOKEN_TTL_SECONDS),
  accessTokenNumUsesLimit: z.number().int().min(0).default(0),
});

export const updateUniversalAuthBody = z.object({
  clientSecretTrustedIps: trustedIpsSchema.optional(),
  accessTokenTrustedIps: trustedIpsSchema.optional(),
  accessTokenTTL: z.number().int().min(0).max(MAX_TTL_SECONDS).optional(),
  accessTokenMaxTTL: z.number().int().min(0).max(MAX_TTL_SECONDS).optional(),
  accessTokenNumUsesLimit: z.number().int().min(0).optional(),
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
  description: z.string().trim().max(500).default(''),
  numUsesLimit: z.number().int().min(0).default(0),
  ttl: z.number().int().min(0).max(MAX_TTL_SECONDS).default(0),
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

export const loginBody = z.object({ clientId: z.string().trim().min(1).max(256), clientSecret: z.string().trim().min(1).max(256) });

export const tokenResponseSchema = z.object({
  accessToken: z.string(),
  expiresIn: z.number(),
  accessTokenMaxTTL: z.number(),
  tokenType: z.literal('Bearer'),
});
