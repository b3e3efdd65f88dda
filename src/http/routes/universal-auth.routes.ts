import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { attachUniversalAuthBody, clientSecretDataSchema, createClientSecretBody, universalAuthSchema, updateUniversalAuthBody } from '../../universal-auth/ua-schema.ts';
import type { ZodApp } from '../zod-app.ts';
import { id } from '../../validation/input.ts';
import { changes, describeRoute, orgPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Universal Auth'];
const base = '/api/v1/auth/universal-auth/identities/:identityId';
const identityParams = z.object({ identityId: id().describe("The identity's id.") });
const secretParams = identityParams.extend({ clientSecretId: id().describe("The client secret's id.") });
const escalation = 'Nobody manages the universal auth of an identity whose organization role is higher than their own.';
const audited = (what: string, event: string) => changes(what, event);
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
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Attach universal auth',
          description: `Lets a machine identity log in with a client id and client secrets; answers its client id. The settings bound the access tokens it gets. ${escalation}`,
          permission: orgPermission('create', 'identity'),
          effects: audited('Creates the universal-auth configuration.', 'add-identity-universal-auth'),
          errors: [400],
        }),
        params: identityParams,
        body: attachUniversalAuthBody,
        response: configResponse,
      },
    },
    async (request) => ({
      identityUniversalAuth: await universalAuth.attach(request.actor, request.params.identityId, attachValues(request.body)),
    }),
  );

  app.get(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get universal auth',
          description: "An identity's universal-auth settings and client id.",
          permission: orgPermission('read', 'identity'),
          effects: reads('get-identity-universal-auth'),
        }),
        params: identityParams,
        response: configResponse,
      },
    },
    async (request) => ({ identityUniversalAuth: await universalAuth.get(request.actor, request.params.identityId) }),
  );

  app.patch(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update universal auth',
          description: `Changes an identity's universal-auth settings; fields left out keep their value. New trusted addresses apply to tokens already issued. ${escalation}`,
          permission: orgPermission('edit', 'identity'),
          effects: audited('Updates the configuration.', 'update-identity-universal-auth'),
          errors: [400],
        }),
        params: identityParams,
        body: updateUniversalAuthBody,
        response: configResponse,
      },
    },
    async (request) => ({ identityUniversalAuth: await universalAuth.update(request.actor, request.params.identityId, toValues(request.body)) }),
  );

  app.delete(
    base,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Remove universal auth',
          description: `Removes universal auth from an identity: its client secrets and the access tokens they gave stop working at once. ${escalation}`,
          permission: orgPermission('delete', 'identity'),
          effects: audited('Deletes the configuration, its client secrets and tokens.', 'revoke-identity-universal-auth'),
        }),
        params: identityParams,
        response: configResponse,
      },
    },
    async (request) => ({ identityUniversalAuth: await universalAuth.revoke(request.actor, request.params.identityId) }),
  );

  app.post(
    `${base}/client-secrets`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create a client secret',
          description: `Creates a client secret for an identity's universal auth. The secret is in this answer only: Coffer keeps a digest of it. ${escalation}`,
          permission: orgPermission('create', 'identity'),
          effects: audited('Creates the client secret.', 'create-identity-universal-auth-client-secret'),
        }),
        params: identityParams,
        body: createClientSecretBody,
        response: { 200: z.object({ clientSecret: z.string().describe('The client secret: shown only here.'), clientSecretData: clientSecretDataSchema }) },
      },
    },
    async (request) => universalAuth.createClientSecret(request.actor, request.params.identityId, request.body),
  );

  app.get(
    `${base}/client-secrets`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List client secrets',
          description: "The identity's client secrets that are not revoked: their data, never the secrets.",
          permission: orgPermission('read', 'identity'),
          effects: reads('get-identity-universal-auth-client-secret'),
        }),
        params: identityParams,
        response: { 200: z.object({ clientSecretData: z.array(clientSecretDataSchema) }) },
      },
    },
    async (request) => ({ clientSecretData: await universalAuth.listClientSecrets(request.actor, request.params.identityId) }),
  );

  app.get(
    `${base}/client-secrets/:clientSecretId`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a client secret',
          description: "One client secret's data: its prefix, uses, TTL and whether it is revoked, never the secret.",
          permission: orgPermission('read', 'identity'),
          effects: reads('get-identity-universal-auth-client-secret'),
        }),
        params: secretParams,
        response: secretResponse,
      },
    },
    async (request) => ({ clientSecretData: await universalAuth.getClientSecret(request.actor, request.params.identityId, request.params.clientSecretId) }),
  );

  app.post(
    `${base}/client-secrets/:clientSecretId/revoke`,
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Revoke a client secret',
          description: `Revokes a client secret: logins with it fail from now on, and the access tokens it gave are revoked with it: their next request answers 401, and their open event streams and revision waits end at once, on every replica. ${escalation}`,
          permission: orgPermission('delete', 'identity'),
          effects: audited('Revokes the client secret.', 'revoke-identity-universal-auth-client-secret'),
        }),
        params: secretParams,
        response: secretResponse,
      },
    },
    async (request) => ({
      clientSecretData: await universalAuth.revokeClientSecret(request.actor, request.params.identityId, request.params.clientSecretId),
    }),
  );
}
