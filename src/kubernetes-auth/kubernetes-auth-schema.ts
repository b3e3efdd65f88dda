import { z } from 'zod';
import type { IdentityKubernetesAuth } from '../db/schema.ts';
import { required, text } from '../validation/input.ts';
import { attachTokenFields, tokenSettingsResponseFields, toTokenSettingsResponse, updateTokenFields } from '../workload-auth/token-settings.ts';
import { pemCertificates } from '../workload-auth/pem.ts';

/** A service-account token or an OIDC ID token: a few kilobytes at most. */
export const JWT_MAX = 16_384;

/** `https://host[:port][/path]`: no credentials, query or fragment; a trailing slash is dropped. */
export const kubernetesHost = text(2048)
  .min(1, 'must not be empty')
  .meta({ examples: ['https://kubernetes.default.svc'] })
  .transform((value, context) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(value);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.protocol !== 'https:' || parsed.username || parsed.password || parsed.search || parsed.hash || value.includes('?') || value.includes('#')) {
      context.addIssue({ code: 'custom', message: 'must be an https:// URL such as https://kubernetes.default.svc, without credentials, query or fragment' });
      return z.NEVER;
    }
    return parsed.href.replace(/\/+$/, '');
  })
  .describe("The cluster's API server, `https://host[:port]`, as the pods see it (e.g. `https://kubernetes.default.svc`). Coffer posts TokenReviews to it.");

const caCert = pemCertificates.describe(
  "PEM certificate(s) of the CA that signed the API server's serving certificate (a pod's `/var/run/secrets/kubernetes.io/serviceaccount/ca.crt`); empty: the system's CAs.",
);
const tokenReviewerJwt = text(JWT_MAX).describe(
  "A token of a service account allowed to create TokenReviews (ClusterRole `system:auth-delegator`); stored encrypted, never answered. Empty or absent: each login's own token makes the review, so the logging-in service account needs that permission (and the API server's audience).",
);
const nameList = (what: string, example: string) =>
  text(4096)
    .meta({ examples: [example] })
    .describe(`Comma-separated ${what}; empty: any.`);

export const attachKubernetesAuthBody = z.object({
  kubernetesHost,
  caCert: caCert.default(''),
  tokenReviewerJwt: tokenReviewerJwt.optional(),
  allowedNamespaces: nameList('namespaces the service account must be in', 'shop,shop-staging').default(''),
  allowedNames: nameList('service-account names allowed to log in', 'web').default(''),
  allowedAudience: text(256)
    .default('')
    .describe('The audience the service-account token must carry (e.g. one set in a projected token volume); empty: the API server’s own.'),
  ...attachTokenFields,
});

export const updateKubernetesAuthBody = z.object({
  kubernetesHost: kubernetesHost.optional(),
  caCert: caCert.optional(),
  tokenReviewerJwt: tokenReviewerJwt
    .nullable()
    .optional()
    .describe('A new token reviewer JWT; `null` or empty removes it (each login then reviews itself). Absent: unchanged.'),
  allowedNamespaces: nameList('namespaces the service account must be in', 'shop,shop-staging').optional(),
  allowedNames: nameList('service-account names allowed to log in', 'web').optional(),
  allowedAudience: text(256).optional().describe('The audience the service-account token must carry; empty: the API server’s own.'),
  ...updateTokenFields,
});

const example = (value: string) => z.string().meta({ examples: [value] });
const CA_EXAMPLE = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIU...\n-----END CERTIFICATE-----';

export const kubernetesAuthSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  kubernetesHost: example('https://kubernetes.default.svc'),
  caCert: example(CA_EXAMPLE),
  allowedNamespaces: example('shop,shop-staging'),
  allowedNames: example('web'),
  allowedAudience: example('coffer'),
  ...tokenSettingsResponseFields,
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** The configuration as answered: the token reviewer JWT never leaves the server. */
export function toKubernetesAuthResponse(row: IdentityKubernetesAuth) {
  return {
    id: row.id,
    identityId: row.identityId,
    kubernetesHost: row.kubernetesHost,
    caCert: row.caCert,
    allowedNamespaces: row.allowedNamespaces,
    allowedNames: row.allowedNames,
    allowedAudience: row.allowedAudience,
    ...toTokenSettingsResponse(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const workloadLoginBody = z.object({
  identityId: required(256).describe('The id of the machine identity to log in as.'),
  jwt: required(JWT_MAX)
    .meta({ examples: ['eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMifQ.c2lnbmF0dXJl'] })
    .describe('The token that proves who the caller is.'),
});
