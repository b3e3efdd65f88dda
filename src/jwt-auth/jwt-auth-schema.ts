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
  .meta({ examples: ['https://issuer.example.com/.well-known/jwks.json'] })
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
const boundIssuer = text(1024)
  .meta({ examples: ['https://issuer.example.com'] })
  .describe('The `iss` the token must carry; empty: any.');
const boundAudiences = text(4096)
  .meta({ examples: ['coffer'] })
  .describe('Comma-separated audiences; the token’s `aud` must hold one of them. Empty: any.');
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
const boundSubject = text(1024)
  .meta({ examples: ['system:serviceaccount:shop:web'] })
  .describe('The `sub` the token must carry, compared exactly; empty: any.');

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

const example = (value: string) => z.string().meta({ examples: [value] });

export const jwtAuthSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  configurationType: example('jwks'),
  jwksUrl: example('https://issuer.example.com/.well-known/jwks.json'),
  jwksCaCert: example(''),
  publicKeys: z.array(z.string()).meta({ examples: [[]] }),
  boundIssuer: example('https://issuer.example.com'),
  boundAudiences: example('coffer'),
  boundClaims: z.record(z.string(), z.string()).meta({ examples: [{ 'kubernetes.io.namespace': 'shop' }] }),
  boundSubject: example('system:serviceaccount:shop:web'),
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
