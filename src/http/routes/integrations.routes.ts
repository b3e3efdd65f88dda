import { z } from 'zod';
import { integrationAuthSchema, integrationMetadataSchema, integrationSchema } from '../../integrations/integration-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { environmentSlug, flag, id, optional, PATH_MAX, path, required, text, url } from '../../validation/input.ts';
import { DESTINATIONS_ANSWERED_MAX, DESTINATIONS_READ_MAX, destinationSchema } from '../../integrations/place-destinations.ts';
import { SECRET_KEY_MAX } from '../../secrets/secret-schema.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Integrations'];
const authParams = z.object({ integrationAuthId: id().describe("The integration auth's id.") });
const integrationParams = z.object({ integrationId: id().describe("The integration's id.") });
const workspaceParams = z.object({ workspaceId: id().describe("The project's id.") });
const integrationSlug = required(64).describe('The integration type: a slug such as `github`, `aws-secret-manager` or `kubernetes`.');
const targetText = (what: string) => optional(text()).describe(`${what} at the provider (stored and returned; Coffer pushes only to Kubernetes).`);
const kept =
  'Coffer stores integration records for every provider but syncs only `kubernetes` ones (through its operator); records of other providers are kept and answered, nothing is pushed.';
const authResponse = { 200: z.object({ integrationAuth: integrationAuthSchema }) };
const integrationResponse = { 200: z.object({ integration: integrationSchema }) };

export function integrationRoutes(app: ZodApp, { integrationAuths, integrations }: Services): void {
  app.post(
    '/api/v1/integration-auth/access-token',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create an integration auth',
          description: `Stores a provider's credentials for a project, sealed with the project's key: they are never answered, logged or audited. Integrations are created on an integration auth. ${kept}`,
          permission: projectPermission('create', 'integrations'),
          effects: changes('Creates the integration auth.', 'authorize-integration'),
          errors: [400],
        }),
        body: z.object({
          workspaceId: id().describe("The project's id."),
          integration: integrationSlug,
          accessId: optional(text(4096)).describe("The provider's access key id, where it has one."),
          accessToken: optional(text(8192)).describe("The provider's access token or secret key (sealed; never answered)."),
          awsAssumeIamRoleArn: optional(url()).describe('For AWS: the ARN of a role to assume.'),
          url: optional(url()).describe("The provider's URL, for self-hosted providers."),
          namespace: optional(text()).describe("The provider's namespace, where it has one."),
          refreshToken: optional(text(8192)).describe("The provider's OAuth refresh token (sealed; never answered)."),
        }),
        response: authResponse,
      },
    },
    async (request) => {
      const { workspaceId, ...input } = request.body;
      return { integrationAuth: await integrationAuths.createWithAccessToken(request.actor, { projectId: workspaceId, ...input }) };
    },
  );

  app.get(
    '/api/v1/integration-auth/:integrationAuthId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get an integration auth',
          description: 'One integration auth, without its credentials.',
          permission: projectPermission('read', 'integrations'),
          effects: reads(),
        }),
        params: authParams,
        response: authResponse,
      },
    },
    async (request) => ({ integrationAuth: await integrationAuths.getById(request.actor, request.params.integrationAuthId) }),
  );

  app.delete(
    '/api/v1/integration-auth/:integrationAuthId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete an integration auth',
          description: 'Deletes an integration auth and the integrations created on it.',
          permission: projectPermission('delete', 'integrations'),
          effects: changes('Deletes the integration auth and its integrations.', 'unauthorize-integration'),
        }),
        params: authParams,
        response: authResponse,
      },
    },
    async (request) => ({ integrationAuth: await integrationAuths.delete(request.actor, request.params.integrationAuthId) }),
  );

  app.delete(
    '/api/v1/integration-auth',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete the integration auths of a type',
          description: 'Deletes every integration auth of one integration type in a project, with their integrations.',
          permission: projectPermission('delete', 'integrations'),
          effects: changes('Deletes the integration auths and their integrations.', 'unauthorize-integration'),
        }),
        querystring: z.object({ integration: integrationSlug, projectId: id().describe("The project's id.") }),
        response: { 200: z.object({ integrationAuth: z.array(integrationAuthSchema) }) },
      },
    },
    async (request) => ({ integrationAuth: await integrationAuths.deleteByType(request.actor, request.query) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/authorizations',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List integration auths',
          description: "A project's integration auths, without their credentials.",
          permission: projectPermission('read', 'integrations'),
          effects: reads(),
        }),
        params: workspaceParams,
        response: { 200: z.object({ authorizations: z.array(integrationAuthSchema) }) },
      },
    },
    async (request) => ({ authorizations: await integrationAuths.listOfProject(request.actor, request.params.workspaceId) }),
  );

  app.post(
    '/api/v1/integration',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Create an integration',
          description: `Records that the secrets of an environment and path are synced to a target of the integration auth's provider. The caller must also be able to read those secrets. ${kept}`,
          permission: `${projectPermission('create', 'integrations')} And \`read\` on \`secrets\` at the source environment and path.`,
          effects: changes('Creates the integration.', 'create-integration'),
          errors: [400],
        }),
        body: z.object({
          integrationAuthId: id().describe('The integration auth to create it on.'),
          sourceEnvironment: required().describe('The slug of the environment to sync from.'),
          secretPath: path().describe('The folder path to sync from; `/` when absent.'),
          isActive: z.boolean().default(true).describe('Whether it syncs (default true); false pauses it.'),
          app: targetText('The target app (for `kubernetes`: the Secret name)'),
          appId: targetText("The target app's id"),
          targetEnvironment: targetText('The target environment (for `kubernetes`: the namespace)'),
          targetEnvironmentId: targetText("The target environment's id"),
          targetService: targetText('The target service'),
          targetServiceId: targetText("The target service's id"),
          owner: targetText('The target owner (for `kubernetes`: the namespace)'),
          url: optional(url()).describe("The target's URL (stored and returned)."),
          path: targetText('The target path'),
          region: targetText('The target region'),
          scope: targetText('The target scope'),
          metadata: integrationMetadataSchema.default({}).describe("The provider's sync options (stored and returned)."),
        }),
        response: integrationResponse,
      },
    },
    async (request) => ({ integration: await integrations.create(request.actor, request.body) }),
  );

  app.get(
    '/api/v1/integration/:integrationId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get an integration',
          description: 'One integration with its sync state.',
          permission: projectPermission('read', 'integrations'),
          effects: reads(),
        }),
        params: integrationParams,
        response: integrationResponse,
      },
    },
    async (request) => ({ integration: await integrations.getById(request.actor, request.params.integrationId) }),
  );

  app.patch(
    '/api/v1/integration/:integrationId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Update an integration',
          description:
            'Activates or pauses an integration, changes its target, or moves its source; fields left out keep their value (unlike the reference, a missing `secretPath` keeps the stored one). For an Integration resource that leaves `spec.isActive` unset, `isActive` here pauses and resumes its Secret.',
          permission: `${projectPermission('edit', 'integrations')} Moving the source also needs \`read\` on \`secrets\` there.`,
          effects: changes('Updates the integration.', 'update-integration'),
        }),
        params: integrationParams,
        body: z.object({
          isActive: z.boolean().describe('Whether it syncs; false pauses it.'),
          app: targetText('The target app (for `kubernetes`: the Secret name)'),
          appId: targetText("The target app's id"),
          targetEnvironment: targetText('The target environment'),
          owner: targetText('The target owner'),
          environment: optional(required()).describe('The slug of the environment to sync from; the stored one when absent.'),
          secretPath: optional(text(PATH_MAX)).describe('The folder path to sync from; the stored path when absent.'),
          metadata: integrationMetadataSchema.optional().describe('Merged into the stored sync options, key by key.'),
        }),
        response: integrationResponse,
      },
    },
    async (request) => ({ integration: await integrations.update(request.actor, request.params.integrationId, request.body) }),
  );

  app.delete(
    '/api/v1/integration/:integrationId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Delete an integration',
          description: "Deletes an integration record. (The operator's records follow their Integration resources: delete the resource instead.)",
          permission: projectPermission('delete', 'integrations'),
          effects: changes('Deletes the integration.', 'delete-integration'),
        }),
        params: integrationParams,
        querystring: z.object({
          shouldDeleteIntegrationSecrets: flag(false).describe('Recorded in the audit entry; Coffer deletes nothing at the provider.'),
        }),
        response: integrationResponse,
      },
    },
    async (request) => ({
      integration: await integrations.delete(request.actor, request.params.integrationId, {
        shouldDeleteIntegrationSecrets: request.query.shouldDeleteIntegrationSecrets,
      }),
    }),
  );

  app.post(
    '/api/v1/integration/:integrationId/sync',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Sync an integration now',
          description: 'Asks for the integration to be synced again at once (for `kubernetes` integrations, the operator rewrites the Secret if it differs).',
          permission: projectPermission('edit', 'integrations'),
          effects: changes("Records a change for the integration's source, which wakes the operator.", 'manual-sync-integration'),
        }),
        params: integrationParams,
        response: integrationResponse,
      },
    },
    async (request) => ({ integration: await integrations.sync(request.actor, request.params.integrationId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/integrations',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'List integrations',
          description:
            "A project's integrations with their sync state; for each one an operator keeps, `kubernetes` says where its Secret lives (cluster, namespace, names) and the revision it last reflected: where the project's secrets are synced.",
          permission: projectPermission('read', 'integrations'),
          effects: reads(),
        }),
        params: workspaceParams,
        response: { 200: z.object({ integrations: z.array(integrationSchema) }) },
      },
    },
    async (request) => ({ integrations: await integrations.listOfProject(request.actor, request.params.workspaceId) }),
  );

  app.get(
    '/api/v1/workspace/:workspaceId/integrations/syncing',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Where a folder is synced',
          description: `The Integration resources (in every cluster) that sync the secrets of one folder: as its source, below a recursive source, or through an import, as each last told its operator what it reads (before its first sync, its own source). Each with its cluster, namespace, Secret, the revision it reflects and its last sync message (why it fails; never a value), and, as its operator last reported with a sync, which of the folder's keys its Secret holds (under which names) and which Deployments, StatefulSets and DaemonSets of its namespace read them (\`keys\`: names only; nothing of the Integration's other folders). With \`key\`, only the Integrations whose Secret holds that key of the folder (or whose report cannot rule it out), each with the workloads that read it. The folder's existence is not checked: one that does not exist is answered as one nothing reads. At most ${DESTINATIONS_ANSWERED_MAX} are answered, of the first ${DESTINATIONS_READ_MAX} of the project; \`truncated\` says when there were more.`,
          permission: `${projectPermission('read', 'integrations')} And \`read\` on \`secrets\` at the environment and path.`,
          effects: reads(),
        }),
        params: workspaceParams,
        querystring: z.object({
          environment: environmentSlug(),
          secretPath: path(),
          key: optional(
            required(SECRET_KEY_MAX)
              .describe('One secret of the folder, by name: only the Integrations whose Secret holds it, and the workloads that read it. The whole folder when absent.')
              .meta({ examples: ['DATABASE_URL'] }),
          ),
        }),
        response: {
          200: z.object({
            integrations: z.array(destinationSchema),
            truncated: z.boolean().describe('More Integrations than the answer names may sync the folder.'),
          }),
        },
      },
    },
    async (request) => integrations.destinationsOf(request.actor, { projectId: request.params.workspaceId, ...request.query }),
  );
}
