import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CACHE_POLICIES } from '../../caches/cache-policies.ts';
import { RevisionCache } from '../../caches/revision-cache.ts';
import { encryptedSecretSchema, importedGroupSchema, listedSecretSchema, rawSecretSchema } from '../../secrets/secret-schema.ts';
import { approvalRequestSchema } from '../../approvals/approval-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { commaList, environmentSlug, flag, id, optionalInteger, projectRef, required, path as secretPathField } from '../../validation/input.ts';
import {
  createSecretBody,
  createSecretsBody,
  deleteSecretBody,
  deleteSecretsBody,
  includeImportsOf,
  nameParams,
  readQuery,
  secretResponse,
  secretType,
  updateSecretBody,
  updateSecretsBody,
  secretDocs,
  proposedWrites,
} from './secret-fields.ts';
import { changes, describeRoute, type OperationDoc, projectPermission } from '../docs/operation-doc.ts';

const tags = ['Secrets'];
const v3Reads = { includeImports: false, expandSecretReferences: false };
export function secretRoutes(app: ZodApp, services: Services): void {
  singleSecretRoutes(app, services);
  batchRoutes(app, services);
  tagRoutes(app, services);
}

interface SerializedListing {
  body: Buffer;
  /** The ETag @fastify/etag would give the body (its default: a strong one, SHA-1 in base64). */
  etag: string;
}

function serializedListing(listing: unknown): SerializedListing {
  const body = Buffer.from(JSON.stringify(listing));
  return { body, etag: `"${createHash('sha1').update(body).digest('base64')}"` };
}

/** A single write answers the secret, or (a user's shared write at a place an approval policy protects) the change request it became. */
const writeResponse = { 200: z.union([secretResponse[200], z.object({ approval: approvalRequestSchema })]) };

const listingResponse = z.object({ secrets: z.array(listedSecretSchema), imports: z.array(importedGroupSchema).optional() });

function singleSecretRoutes(app: ZodApp, { secrets, secretReader, approvalRequests }: Services): void {
  // The JSON of plain listings, by listing version: a repeated listing is sent as it was last serialised, with its ETag.
  const serializedListings = new RevisionCache<SerializedListing>({ ...CACHE_POLICIES.serializedListings, weigh: ({ body }) => body.byteLength });
  app.get(
    '/api/v3/secrets/raw',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.list),
        querystring: z.object({
          ...readQuery(v3Reads),
          recursive: flag(false).describe('`true`: the secrets of every folder below the path too (20 levels at most). Default: false.'),
          tagSlugs: commaList().describe('Comma-separated tag slugs: only secrets that carry all of them.'),
        }),
        response: { 200: listingResponse },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const listing = await secretReader.list(request.actor, {
        ...projectRef(query),
        environment: query.environment,
        secretPath: query.secretPath,
        recursive: query.recursive,
        includeImports: includeImportsOf(query, v3Reads.includeImports),
        expandSecretReferences: query.expandSecretReferences,
        tagSlugs: query.tagSlugs.map((slug) => slug.toLowerCase()),
      });
      if (!listing.version) return listing;
      const { key, revision } = listing.version;
      const { body, etag } = await serializedListings.get(key, revision, async () => serializedListing(listingResponse.parse(listing)));
      // Fastify sends a Buffer as it is, past the response serialiser (the body was validated when it was made);
      // @fastify/etag leaves an ETag already set as it is instead of hashing the body again.
      return reply
        .type('application/json; charset=utf-8')
        .header('etag', etag)
        .send(body as never);
    },
  );

  app.get(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.get),
        params: nameParams,
        querystring: z.object({
          ...readQuery(v3Reads),
          version: optionalInteger(1)
            .describe('A past version of the secret (from 1); the current one when absent.')
            // zod leaves `examples` of a transformed input out of its JSON schema, `example` not
            .meta({ example: '2' }),
          type: secretType,
        }),
        response: secretResponse,
      },
    },
    async (request) => {
      const query = request.query;
      const secret = await secretReader.get(request.actor, {
        ...projectRef(query),
        environment: query.environment,
        secretPath: query.secretPath,
        secretName: request.params.secretName,
        type: query.type,
        version: query.version,
        includeImports: includeImportsOf(query, v3Reads.includeImports),
        expandSecretReferences: query.expandSecretReferences,
      });
      return { secret };
    },
  );

  app.post(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.create),
        params: nameParams,
        body: createSecretBody,
        response: writeResponse,
      },
    },
    async (request) => {
      const input = { ...request.body, ...projectRef(request.body), secretName: request.params.secretName };
      const approval = await approvalRequests.proposeIfProtected(request.actor, input, [{ ...input, op: 'create' }]);
      return approval ? { approval } : { secret: await secrets.create(request.actor, input) };
    },
  );

  app.patch(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.update),
        params: nameParams,
        body: updateSecretBody,
        response: writeResponse,
      },
    },
    async (request) => {
      const input = { ...request.body, ...projectRef(request.body), secretName: request.params.secretName };
      const approval = await approvalRequests.proposeIfProtected(request.actor, input, [{ ...input, op: 'update' }]);
      return approval ? { approval } : { secret: await secrets.update(request.actor, input) };
    },
  );

  app.delete(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.delete),
        params: nameParams,
        body: deleteSecretBody,
        response: writeResponse,
      },
    },
    async (request) => {
      const input = { ...request.body, ...projectRef(request.body), secretName: request.params.secretName };
      const approval = await approvalRequests.proposeIfProtected(request.actor, input, [{ ...input, op: 'delete' }]);
      return approval ? { approval } : { secret: await secrets.delete(request.actor, input) };
    },
  );
}

/** A batch answers the secrets, or (a user's shared batch at a place an approval policy protects) the one change request it became. */
const batchResponse = { 200: z.union([z.object({ secrets: z.array(rawSecretSchema) }), z.object({ approval: approvalRequestSchema })]) };

function batchRoutes(app: ZodApp, { secretBatch, approvalRequests }: Services): void {
  app.post(
    '/api/v3/secrets/batch/raw',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.createMany),
        body: createSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => {
      const location = { ...request.body, ...projectRef(request.body) };
      const approval = await approvalRequests.proposeIfProtected(request.actor, location, proposedWrites('create', request.body.secrets));
      return approval ? { approval } : { secrets: await secretBatch.createMany(request.actor, location, request.body.secrets) };
    },
  );

  app.patch(
    '/api/v3/secrets/batch/raw',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.updateMany),
        body: updateSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => {
      const location = { ...request.body, ...projectRef(request.body) };
      const approval = await approvalRequests.proposeIfProtected(request.actor, location, proposedWrites('update', request.body.secrets));
      return approval ? { approval } : { secrets: await secretBatch.updateMany(request.actor, location, request.body.secrets) };
    },
  );

  app.delete(
    '/api/v3/secrets/batch/raw',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.deleteMany),
        body: deleteSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => {
      const location = { ...request.body, ...projectRef(request.body) };
      const approval = await approvalRequests.proposeIfProtected(request.actor, location, proposedWrites('delete', request.body.secrets));
      return approval ? { approval } : { secrets: await secretBatch.deleteMany(request.actor, location, request.body.secrets) };
    },
  );
}

const tagBody = z.object({
  projectSlug: id().describe("The project's slug."),
  environment: environmentSlug(),
  secretPath: secretPathField(),
  type: secretType,
  tagSlugs: z.array(required().toLowerCase()).min(1).describe("Slugs of the project's tags."),
});

const tagDocs = {
  post: {
    summary: 'Attach tags to a secret',
    description:
      "Adds the project's tags named by `tagSlugs` to a secret (tags it already has stay). Answers the secret in the reference's encrypted shape, without its value.",
    permission: projectPermission('edit', 'secrets', 'path'),
    effects: changes('Adds the tags to the secret.', 'attach-secret-tags'),
  },
  delete: {
    summary: 'Detach tags from a secret',
    description: "Removes the tags named by `tagSlugs` from a secret. Answers the secret in the reference's encrypted shape, without its value.",
    permission: projectPermission('edit', 'secrets', 'path'),
    effects: changes('Removes the tags from the secret.', 'detach-secret-tags'),
  },
} satisfies Record<string, OperationDoc>;

function tagRoutes(app: ZodApp, { secretTagging }: Services): void {
  for (const method of ['post', 'delete'] as const) {
    app[method](
      '/api/v3/secrets/tags/:secretName',
      { schema: { tags, ...describeRoute(tagDocs[method]), params: nameParams, body: tagBody, response: { 200: z.object({ secret: encryptedSecretSchema }) } } },
      async (request) => {
        const input = { ...request.body, secretName: request.params.secretName };
        return { secret: method === 'post' ? await secretTagging.attach(request.actor, input) : await secretTagging.detach(request.actor, input) };
      },
    );
  }
}
