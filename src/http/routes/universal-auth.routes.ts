import { z } from 'zod';
import type { Services } from '../../services/container.ts';
import {
  attachUniversalAuthBody,
  clientSecretDataSchema,
  createClientSecretBody,
  universalAuthSchema,
  updateUniversalAuthBody,
} from '../../universal-auth/ua-schema.ts';
import type { ZodApp } from '../app.ts';
import { id } from '../../validation/input.ts';

const tags = ['Universal Auth'];
const base = '/api/v1/auth/universal-auth/identities/:identityId';
const identityParams = z.object({ identityId: id() });
const secretParams = identityParams.extend({ clientSecretId: id() });
const configResponse = { 200: z.object({ identityUniversalAuth: universalAuthSchema }) };
const secretResponse = { 200: z.object({ clientSecretData: clientSecretDataSchema }) };

function toValues(body: z.infer<typeof updateUniversalAuthBody>) {
  return {
    accessTokenTtl: body.accessTokenTTL,
    accessTokenMaxTtl: body.accessTokenMaxTTL,
    accessTokenNumUsesLimit: body.accessTokenNumUsesLimit,
    clientSecretTrustedIps: body.clientSecretTrustedIps,
    accessTokenTrustedIps: body.accessTokenTrustedIps,
  };
}

function attachValues(body: z.infer<typeof attachUniversalAuthBody>) {
  return {
    accessTokenTtl: body.accessTokenTTL,
    accessTokenMaxTtl: body.accessTokenMaxTTL,
    accessTokenNumUsesLimit: body.accessTokenNumUsesLimit,
    clientSecretTrustedIps: body.clientSecretTrustedIps,
    accessTokenTrustedIps: body.accessTokenTrustedIps,
  };
}

export function universalAuthRoutes(app: ZodApp, { universalAuth }: Services): void {
  app.post(
    base,
    { schema: { tags, summary: 'Attach universal auth to an identity', params: identityParams, body: attachUniversalAuthBody, response: configResponse } },
    async (request) => ({
      identityUniversalAuth: await universalAuth.attach(request.actor, request.params.identityId, attachValues(request.body)),
    }),
  );

  app.get(
    base,
    { schema: { tags, summary: "An identity's universal auth configuration", params: identityParams, response: configResponse } },
    async (request) => ({ identityUniversalAuth: await universalAuth.get(request.actor, request.params.identityId) }),
  );

  app.patch(
    base,
    { schema: { tags, summary: "Update an identity's universal auth", params: identityParams, body: updateUniversalAuthBody, response: configResponse } },
    async (request) => ({ identityUniversalAuth: await universalAuth.update(request.actor, request.params.identityId, toValues(request.body)) }),
  );

  app.delete(
    base,
    { schema: { tags, summary: 'Remove universal auth (its client secrets and access tokens end)', params: identityParams, response: configResponse } },
    async (request) => ({ identityUniversalAuth: await universalAuth.revoke(request.actor, request.params.identityId) }),
  );

  app.post(
    `${base}/client-secrets`,
    {
      schema: {
        tags,
        summary: 'Create a client secret (returned once)',
        params: identityParams,
        body: createClientSecretBody,
        response: { 200: z.object({ clientSecret: z.string(), clientSecretData: clientSecretDataSchema }) },
      },
    },
    async (request) => universalAuth.createClientSecret(request.actor, request.params.identityId, request.body),
  );

  app.get(
    `${base}/client-secrets`,
    {
      schema: { tags, summary: 'List the unrevoked client secrets', params: identityParams, response: { 200: z.object({ clientSecretData: z.array(clientSecretDataSchema) }) } },
    },
    async (request) => ({ clientSecretData: await universalAuth.listClientSecrets(request.actor, request.params.identityId) }),
  );

  app.get(
    `${base}/client-secrets/:clientSecretId`,
    { schema: { tags, summary: 'Get a client secret (its data, never the secret)', params: secretParams, response: secretResponse } },
    async (request) => ({ clientSecretData: await universalAuth.getClientSecret(request.actor, request.params.identityId, request.params.clientSecretId) }),
  );

  app.post(
    `${base}/client-secrets/:clientSecretId/revoke`,
    { schema: { tags, summary: 'Revoke a client secret', params: secretParams, response: secretResponse } },
    async (request) => ({
      clientSecretData: await universalAuth.revokeClientSecret(request.actor, request.params.identityId, request.params.clientSecretId),
    }),
  );
}
