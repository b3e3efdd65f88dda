import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import type { IdentityJwtAuth } from '../db/schema.ts';
import { text } from '../validation/input.ts';
import { pemCertificates } from '../workload-auth/pem.ts';
import { attachTokenFields, tokenSettingsResponseFields, toTokenSettingsResponse, updateTokenFields } from '../workload-auth/token-settings.ts';

export const MAX_PUBLIC_KEYS = 20;
export const MAX_BOUND_CLAIMS = 32;
export const MAX_CLAIM_PATH_SEGMENTS = 8;

const configurationType = z.enum(['jwks', 'static']).describe('`jwks`: keys fetched from `jwksUrl`; `static`: the PEM keys in `publicKeys`.');

const jwksUrl = text(2048)
  .refine((value) => {
    if (value === '') return true;
    try {
      const parsed = new URL(value);
      return parsed.protocol === 'https:' && !parsed.username && !parsed.password && !parsed.hash;
    } catch {
      return false;
    }
  }, 'must be an https:// URL without credentials or fragment')
  .describe('Where the JSON Web Key Set is served (https only); used when `configurationType` is `jwks`.');

const jwksCaCert = pemCertificates.describe("PEM certificate(s) of the CA that signed the JWKS URL's serving certificate; empty: the system's CAs.");

/** A PEM public key (SPKI or PKCS#1); a private key is refused, never stored. */
const publicKey = text(16_384).refine((value) => {
  if (value.includes('PRIVATE KEY')) return false;
  try {
    return createPublicKey(value).type === 'public';
  } catch {
    return false;
  }
}, 'must be a PEM public key (-----BEGIN PUBLIC KEY-----)');

const publicKeys = z
  .array(publicKey)
  .max(MAX_PUBLIC_KEYS, `at most ${MAX_PUBLIC_KEYS} keys`)
  .describe('PEM public keys a token may be signed with; used when `configurationType` is `static`.');
const boundIssuer = text(1024).describe('The `iss` the token must carry; empty: any.');
const boundAudiences = text(4096).describe('Comma-separated audiences; the token’s `aud` must hold one of them. Empty: any.');
const boundClaims = z
  .record(
    text(256)
      .min(1, 'must not be empty')
      .refine((claim) => claim.split('.').length <= MAX_CLAIM_PATH_SEGMENTS, `at most ${MAX_CLAIM_PATH_SEGMENTS} dot-separated segments`),
    text(1024),
  )
  .refine((claims) => Object.keys(claims).length <= MAX_BOUND_CLAIMS, `at most ${MAX_BOUND_CLAIMS} claims`)
  .describe(
    'Claims the token must carry: name (a dotted path such as `kubernetes.io.namespace` reaches into objects) → comma-separated allowed values, compared exactly.',
  );
const boundSubject = text(1024).describe('The `sub` the token must carry, compared exactly; empty: any.');

export const attachJwtAuthBody = z.object({
  configurationType,
  jwksUrl: jwksUrl.default(''),
  jwksCaCert: jwksCaCert.default(''),
  publicKeys: publicKeys.default([]),
  boundIssuer: boundIssuer.default(''),
  boundAudiences: boundAudiences.default(''),
  boundClaims: boundClaims.default({}),
  boundSubject: boundSubject.default(''),
  ...attachTokenFields,
});

export const updateJwtAuthBody = z.object({
  configurationType: configurationType.optional(),
  jwksUrl: jwksUrl.optional(),
  jwksCaCert: jwksCaCert.optional(),
  publicKeys: publicKeys.optional(),
  boundIssuer: boundIssuer.optional(),
  boundAudiences: boundAudiences.optional(),
  boundClaims: boundClaims.optional(),
  boundSubject: boundSubject.optional(),
  ...updateTokenFields,
});

export const jwtAuthSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  configurationType: z.string(),
  jwksUrl: z.string(),
  jwksCaCert: z.string(),
  publicKeys: z.array(z.string()),
  boundIssuer: z.string(),
  boundAudiences: z.string(),
  boundClaims: z.record(z.string(), z.string()),
  boundSubject: z.string(),
  ...tokenSettingsResponseFields,
  createdAt: z.string(),
  updatedAt: z.string(),
});

export function toJwtAuthResponse(row: IdentityJwtAuth) {
  return {
    id: row.id,
    identityId: row.identityId,
    configurationType: row.configurationType,
    jwksUrl: row.jwksUrl,
    jwksCaCert: row.jwksCaCert,
    publicKeys: row.publicKeys,
    boundIssuer: row.boundIssuer,
    boundAudiences: row.boundAudiences,
    boundClaims: row.boundClaims,
    boundSubject: row.boundSubject,
    ...toTokenSettingsResponse(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
