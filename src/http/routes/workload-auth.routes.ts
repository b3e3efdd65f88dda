import { z } from 'zod';
import { attachJwtAuthBody, jwtAuthSchema, updateJwtAuthBody } from '../../jwt-auth/jwt-auth-schema.ts';
import { attachKubernetesAuthBody, kubernetesAuthSchema, updateKubernetesAuthBody, workloadLoginBody } from '../../kubernetes-auth/kubernetes-auth-schema.ts';
import type { Services } from '../../app/container.ts';
import { tokenResponseSchema } from '../../universal-auth/ua-schema.ts';
import { id } from '../../validation/input.ts';
import { tokenSettingsOf } from '../../workload-auth/token-settings.ts';
import { requestOrigin } from '../authenticate.ts';
import { changes, describeRoute, orgPermission, PUBLIC, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';

const identityParams = z.object({ identityId: id().describe("The identity's id.") });
const escalation = 'Nobody configures the login of an identity whose organization role is higher than their own.';
const throttled =
  'Failed attempts are counted per identity and source address together and per source address: an address past its limit, for this identity or for all, answers 429 `RateLimitExceeded` with `Retry-After` until its lockout ends, whatever it sends. The identity itself is never locked (README, Login throttling).';
const sameRefusal =
  'Whatever is wrong (unknown identity, no such configuration, a token the check refuses, an unreachable cluster or key set) answers the same 401, which names nothing of the configuration.';

const kubernetesTags = ['Kubernetes Auth'];
const kubernetesBase = '/api/v1/auth/kubernetes-auth/identities/:identityId';
const kubernetesResponse = { 200: z.object({ identityKubernetesAuth: kubernetesAuthSchema }) };
const jwtTags = ['JWT Auth'];
const jwtBase = '/api/v1/auth/jwt-auth/identities/:identityId';
const jwtResponse = { 200: z.object({ identityJwtAuth: jwtAuthSchema }) };

type KubernetesBody = z.infer<typeof updateKubernetesAuthBody>;
function kubernetesValues(body: KubernetesBody) {
  const { accessTokenTTL, accessTokenMaxTTL, accessTokenNumUsesLimit, accessTokenTrustedIps, ...rest } = body;
  return { ...rest, ...tokenSettingsOf({ accessTokenTTL, accessTokenMaxTTL, accessTokenNumUsesLimit, accessTokenTrustedIps }) };
}

type JwtBody = z.infer<typeof updateJwtAuthBody>;
function jwtValues(body: JwtBody) {
  const { accessTokenTTL, accessTokenMaxTTL, accessTokenNumUsesLimit, accessTokenTrustedIps, ...rest } = body;
  return { ...rest, ...tokenSettingsOf({ accessTokenTTL, accessTokenMaxTTL, accessTokenNumUsesLimit, accessTokenTrustedIps }) };
}

/** The two logins: public, the token in the body is the credential. */
export function workloadLoginRoutes(app: ZodApp, { kubernetesAuthLogin, jwtAuthLogin }: Services): void {
  app.post(
    '/api/v1/auth/kubernetes-auth/login',
    {
      schema: {
        tags: kubernetesTags,
        ...describeRoute({
          summary: 'Log in with Kubernetes Auth',
          description: `Exchanges a Kubernetes service-account token for an access token of the machine identity. Coffer asks the configured cluster's TokenReview API whose token it is, then checks the service account's namespace and name and the token's audience against the identity's Kubernetes Auth. The token lives as that configuration says (TTL, max TTL, uses, trusted IPs). ${sameRefusal} ${throttled}`,
          permission: PUBLIC,
          effects: changes('Issues an access token.', 'login-identity-kubernetes-auth'),
          errors: [401, 429],
        }),
        body: workloadLoginBody.extend({
          jwt: workloadLoginBody.shape.jwt.describe("The pod's service-account token (e.g. /var/run/secrets/kubernetes.io/serviceaccount/token)."),
        }),
        response: { 200: tokenResponseSchema },
      },
    },
    async (request) => kubernetesAuthLogin.login(request.body, requestOrigin(request)),
  );

  app.post(
    '/api/v1/auth/jwt-auth/login',
    {
      schema: {
        tags: jwtTags,
        ...describeRoute({
          summary: 'Log in with JWT Auth',
          description: `Exchanges a signed JWT (an OIDC ID token, a projected service-account token...) for an access token of the machine identity. The signature is verified offline against the configured public keys or the JWKS URL's key set (asymmetric algorithms only; the token must carry \`exp\`, 30 s of clock skew allowed); then the bound issuer, subject, audiences and claims. ${sameRefusal} ${throttled}`,
          permission: PUBLIC,
          effects: changes('Issues an access token.', 'login-identity-jwt-auth'),
          errors: [401, 429],
        }),
        body: workloadLoginBody,
        response: { 200: tokenResponseSchema },
      },
    },
    async (request) => jwtAuthLogin.login(request.body, requestOrigin(request)),
  );
}

export function kubernetesAuthRoutes(app: ZodApp, { kubernetesAuth }: Services): void {
  app.post(
    kubernetesBase,
    {
      schema: {
        tags: kubernetesTags,
        ...describeRoute({
          summary: 'Attach Kubernetes Auth',
          description: `Lets a machine identity log in with service-account tokens of one cluster, checked through that cluster's TokenReview API. Nothing is called here: a wrong host or CA shows at the first login. ${escalation}`,
          permission: orgPermission('create', 'identity'),
          effects: changes('Creates the Kubernetes Auth configuration; the token reviewer JWT is stored encrypted.', 'add-identity-kubernetes-auth'),
          errors: [400],
        }),
        params: identityParams,
        body: attachKubernetesAuthBody,
        response: kubernetesResponse,
      },
    },
    async (request) => ({
      identityKubernetesAuth: await kubernetesAuth.attach(
        request.actor,
        request.params.identityId,
        kubernetesValues(request.body) as Parameters<typeof kubernetesAuth.attach>[2],
      ),
    }),
  );

  app.get(
    kubernetesBase,
    {
      schema: {
        tags: kubernetesTags,
        ...describeRoute({
          summary: 'Get Kubernetes Auth',
          description: "An identity's Kubernetes Auth settings; never the token reviewer JWT.",
          permission: orgPermission('read', 'identity'),
          effects: reads('get-identity-kubernetes-auth'),
        }),
        params: identityParams,
        response: kubernetesResponse,
      },
    },
    async (request) => ({ identityKubernetesAuth: await kubernetesAuth.get(request.actor, request.params.identityId) }),
  );

  app.patch(
    kubernetesBase,
    {
      schema: {
        tags: kubernetesTags,
        ...describeRoute({
          summary: 'Update Kubernetes Auth',
          description: `Changes an identity's Kubernetes Auth settings; fields left out keep their value. New trusted addresses apply to tokens already issued. ${escalation}`,
          permission: orgPermission('edit', 'identity'),
          effects: changes('Updates the configuration.', 'update-identity-kubernetes-auth'),
          errors: [400],
        }),
        params: identityParams,
        body: updateKubernetesAuthBody,
        response: kubernetesResponse,
      },
    },
    async (request) => ({ identityKubernetesAuth: await kubernetesAuth.update(request.actor, request.params.identityId, kubernetesValues(request.body)) }),
  );

  app.delete(
    kubernetesBase,
    {
      schema: {
        tags: kubernetesTags,
        ...describeRoute({
          summary: 'Remove Kubernetes Auth',
          description: `Removes Kubernetes Auth from an identity: the access tokens it gave stop working at once. ${escalation}`,
          permission: orgPermission('delete', 'identity'),
          effects: changes('Deletes the configuration and the tokens it issued.', 'revoke-identity-kubernetes-auth'),
        }),
        params: identityParams,
        response: kubernetesResponse,
      },
    },
    async (request) => ({ identityKubernetesAuth: await kubernetesAuth.revoke(request.actor, request.params.identityId) }),
  );
}

export function jwtAuthRoutes(app: ZodApp, { jwtAuth }: Services): void {
  app.post(
    jwtBase,
    {
      schema: {
        tags: jwtTags,
        ...describeRoute({
          summary: 'Attach JWT Auth',
          description: `Lets a machine identity log in with JWTs signed by configured keys (static PEM keys, or a JWKS URL's key set) whose issuer, subject, audiences and claims match the bounds. Nothing is fetched here. ${escalation}`,
          permission: orgPermission('create', 'identity'),
          effects: changes('Creates the JWT Auth configuration.', 'add-identity-jwt-auth'),
          errors: [400],
        }),
        params: identityParams,
        body: attachJwtAuthBody,
        response: jwtResponse,
      },
    },
    async (request) => ({
      identityJwtAuth: await jwtAuth.attach(request.actor, request.params.identityId, jwtValues(request.body) as Parameters<typeof jwtAuth.attach>[2]),
    }),
  );

  app.get(
    jwtBase,
    {
      schema: {
        tags: jwtTags,
        ...describeRoute({
          summary: 'Get JWT Auth',
          description: "An identity's JWT Auth settings.",
          permission: orgPermission('read', 'identity'),
          effects: reads('get-identity-jwt-auth'),
        }),
        params: identityParams,
        response: jwtResponse,
      },
    },
    async (request) => ({ identityJwtAuth: await jwtAuth.get(request.actor, request.params.identityId) }),
  );

  app.patch(
    jwtBase,
    {
      schema: {
        tags: jwtTags,
        ...describeRoute({
          summary: 'Update JWT Auth',
          description: `Changes an identity's JWT Auth settings; fields left out keep their value. New trusted addresses apply to tokens already issued. ${escalation}`,
          permission: orgPermission('edit', 'identity'),
          effects: changes('Updates the configuration.', 'update-identity-jwt-auth'),
          errors: [400],
        }),
        params: identityParams,
        body: updateJwtAuthBody,
        response: jwtResponse,
      },
    },
    async (request) => ({ identityJwtAuth: await jwtAuth.update(request.actor, request.params.identityId, jwtValues(request.body)) }),
  );

  app.delete(
    jwtBase,
    {
      schema: {
        tags: jwtTags,
        ...describeRoute({
          summary: 'Remove JWT Auth',
          description: `Removes JWT Auth from an identity: the access tokens it gave stop working at once. ${escalation}`,
          permission: orgPermission('delete', 'identity'),
          effects: changes('Deletes the configuration and the tokens it issued.', 'revoke-identity-jwt-auth'),
        }),
        params: identityParams,
        response: jwtResponse,
      },
    },
    async (request) => ({ identityJwtAuth: await jwtAuth.revoke(request.actor, request.params.identityId) }),
  );
}
