import { z } from 'zod';
import type { Keyring } from '../crypto/keyring.ts';
import type { Executor } from '../db/database.ts';
import { requestJson } from '../workload-auth/outbound-request.ts';
import { RefusedToken, type WorkloadConfig, type WorkloadLoginMethod } from '../workload-auth/workload-login.ts';
import { findKubernetesAuthForLogin } from './kubernetes-auth-store.ts';
import { openReviewerJwt } from './reviewer-jwt-cipher.ts';

export const KUBERNETES_AUTH = 'kubernetes-auth';

type KubernetesLoginConfig = NonNullable<Awaited<ReturnType<typeof findKubernetesAuthForLogin>>> & WorkloadConfig;

const tokenReviewAnswer = z.object({
  status: z
    .object({
      authenticated: z.boolean().optional(),
      user: z.object({ username: z.string().optional() }).optional(),
      audiences: z.array(z.string()).optional(),
    })
    .optional(),
});

const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** "a, b,,c" → ["a", "b", "c"]; empty means any. */
export function listOf(commaSeparated: string): string[] {
  return commaSeparated
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * What a TokenReview said about a token, checked against the configuration: the service account (`namespace/name`)
 * it allows, or RefusedToken.
 */
export function assertReviewAllows(config: Pick<KubernetesLoginConfig, 'allowedNamespaces' | 'allowedNames' | 'allowedAudience'>, answer: unknown): string {
  const parsed = tokenReviewAnswer.safeParse(answer);
  const status = parsed.success ? parsed.data.status : undefined;
  if (status?.authenticated !== true) throw new RefusedToken('the cluster did not authenticate the token');
  const match = SERVICE_ACCOUNT.exec(status.user?.username ?? '');
  if (!match) throw new RefusedToken('the token is not a service account’s');
  const [, namespace, name] = match;
  const namespaces = listOf(config.allowedNamespaces);
  if (namespaces.length > 0 && !namespaces.includes(namespace!)) throw new RefusedToken('the service account’s namespace is not allowed');
  const names = listOf(config.allowedNames);
  if (names.length > 0 && !names.includes(name!)) throw new RefusedToken('the service account’s name is not allowed');
  if (config.allowedAudience && !(status.audiences ?? []).includes(config.allowedAudience)) throw new RefusedToken('the token lacks the required audience');
  return `${namespace}/${name}`;
}

/**
 * Kubernetes Auth: the cluster's TokenReview API says whose service-account token it is. The review is made with
 * the configured token reviewer JWT, or else with the token itself.
 */
export function kubernetesLoginMethod(keyring: Keyring): WorkloadLoginMethod<KubernetesLoginConfig> {
  return {
    method: KUBERNETES_AUTH,
    event: 'login-identity-kubernetes-auth',
    configIdKey: 'identityKubernetesAuthId',
    findConfig: (db: Executor, identityId: string) => findKubernetesAuthForLogin(db, identityId),
    async verify(config, jwt) {
      const reviewer = openReviewerJwt(keyring, config.identityId, config.encryptedTokenReviewerJwt) ?? jwt;
      const { json } = await requestJson({
        method: 'POST',
        url: new URL(`${config.kubernetesHost}/apis/authentication.k8s.io/v1/tokenreviews`),
        headers: { authorization: `Bearer ${reviewer}` },
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: jwt, ...(config.allowedAudience ? { audiences: [config.allowedAudience] } : {}) },
        }),
        caCert: config.caCert || undefined,
      });
      return { subject: assertReviewAllows(config, json) };
    },
  };
}
