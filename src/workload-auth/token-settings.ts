import { z } from 'zod';
import type { TrustedIp } from '../db/schema.ts';
import { BadRequestError } from '../errors.ts';
import { ANY_ADDRESS, trustedIpsSchema } from '../universal-auth/trusted-ips.ts';
import { DEFAULT_TOKEN_TTL_SECONDS, MAX_TTL_SECONDS } from '../universal-auth/ua-schema.ts';
import { count, seconds } from '../validation/input.ts';

/** What bounds the access tokens a login method issues: the same fields as universal auth's. */
export interface TokenSettings {
  accessTokenTtl: number;
  accessTokenMaxTtl: number;
  accessTokenNumUsesLimit: number;
  accessTokenTrustedIps: TrustedIp[];
}

const trustedIps = trustedIpsSchema.describe('Addresses requests with the access tokens may come from, checked on every request (default: any).');
const ttlText = 'Seconds an access token lives after it is issued or renewed';
const maxTtlText = 'Seconds an access token may live in all, renewals included';
const usesText = 'How many requests one access token may make; 0 (default): unlimited.';

/** Attach: the reference's defaults (30 days, any address, unlimited uses). */
export const attachTokenFields = {
  accessTokenTrustedIps: trustedIps.default(() => ANY_ADDRESS.map((range) => ({ ...range }))),
  accessTokenTTL: seconds(1, MAX_TTL_SECONDS).default(DEFAULT_TOKEN_TTL_SECONDS).describe(`${ttlText} (default 30 days).`),
  accessTokenMaxTTL: seconds(1, MAX_TTL_SECONDS).default(DEFAULT_TOKEN_TTL_SECONDS).describe(`${maxTtlText} (default 30 days).`),
  accessTokenNumUsesLimit: count().default(0).describe(usesText),
};

export const updateTokenFields = {
  accessTokenTrustedIps: trustedIps.optional(),
  accessTokenTTL: seconds(0, MAX_TTL_SECONDS).optional().describe(`${ttlText}.`),
  accessTokenMaxTTL: seconds(0, MAX_TTL_SECONDS).optional().describe(`${maxTtlText}.`),
  accessTokenNumUsesLimit: count().optional().describe(usesText),
};

export const tokenSettingsResponseFields = {
  accessTokenTTL: z.number(),
  accessTokenMaxTTL: z.number(),
  accessTokenNumUsesLimit: z.number(),
  accessTokenTrustedIps: z.array(z.object({ ipAddress: z.string(), type: z.string(), prefix: z.number() })),
};

type AttachTokenBody = { accessTokenTTL: number; accessTokenMaxTTL: number; accessTokenNumUsesLimit: number; accessTokenTrustedIps: TrustedIp[] };
type UpdateTokenBody = Partial<AttachTokenBody>;

export function tokenSettingsOf(body: AttachTokenBody): TokenSettings;
export function tokenSettingsOf(body: UpdateTokenBody): Partial<TokenSettings>;
export function tokenSettingsOf(body: UpdateTokenBody): Partial<TokenSettings> {
  return {
    accessTokenTtl: body.accessTokenTTL,
    accessTokenMaxTtl: body.accessTokenMaxTTL,
    accessTokenNumUsesLimit: body.accessTokenNumUsesLimit,
    accessTokenTrustedIps: body.accessTokenTrustedIps,
  };
}

export function toTokenSettingsResponse(row: TokenSettings) {
  return {
    accessTokenTTL: row.accessTokenTtl,
    accessTokenMaxTTL: row.accessTokenMaxTtl,
    accessTokenNumUsesLimit: row.accessTokenNumUsesLimit,
    accessTokenTrustedIps: row.accessTokenTrustedIps,
  };
}

/** 400 InvalidTTL when the TTL the configuration would have exceeds its max TTL. */
export function assertTtls(values: { accessTokenTtl: number; accessTokenMaxTtl: number }): void {
  if (values.accessTokenMaxTtl > 0 && values.accessTokenTtl > values.accessTokenMaxTtl) {
    throw new BadRequestError('Access token TTL cannot be greater than max TTL', 'InvalidTTL');
  }
}
