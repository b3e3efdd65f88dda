import { z } from 'zod';
import { RevisionCache } from '../../changes/revision-cache.ts';
import { encryptedSecretSchema, importedGroupSchema, listedSecretSchema, rawSecretSchema } from '../../secrets/secret-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { commaList, flag, id, optionalInteger, projectRef, required, path as secretPathField } from '../../validation/input.ts';
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
} from './secret-fields.ts';

const tags = ['Secrets'];
const SERIALIZED_LISTING_BYTES = 16 * 1024 * 1024;
const v3Reads = { includeImports: false, expandSecretReferences: false };
export function secretRoutes(app: ZodApp, services: Services): void {
  singleSecretRoutes(app, services);
  batchRoutes(app, services);
  tagRoutes(app, services);
}

const listingResponse = z.object({ secrets: z.array(listedSecretSchema), imports: z.array(importedGroupSchema).optional() });

function singleSecretRoutes(app: ZodApp, { secrets, secretReader }: Services): void {
  // The JSON of plain listings, by listing version: a repeated listing is sent as it was last serialised.
  const serializedListings = new RevisionCache<Buffer>({ maxWeight: SERIALIZED_LISTING_BYTES, weigh: (body) => body.byteLength });
  app.get(
    '/api/v3/secrets/raw',
    {
      schema: {
        tags,
        summary: 'List secrets (recursive to depth 20, with imports, references expanded on request)',
        querystring: z.object({
          ...readQuery(v3Reads),
          recursive: flag(false),
          tagSlugs: commaList().describe('comma-separated tag slugs'),
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
      const body = await serializedListings.get(key, revision, async () => Buffer.from(JSON.stringify(listingResponse.parse(listing))));
      // Fastify sends a Buffer as it is, past the response serialiser (the body was validated when it was made)
      return reply.type('application/json; charset=utf-8').send(body as never);
    },
  );

  app.get(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        summary: 'Get a secret, optionally at a past version or through imports',
        params: nameParams,
        querystring: z.object({ ...readQuery(v3Reads), version: optionalInteger(1), type: secretType }),
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
        summary: 'Create a secret',
        params: nameParams,
        body: createSecretBody,
        response: secretResponse,
      },
    },
    async (request) => ({ secret: await secrets.create(request.actor, { ...request.body, ...projectRef(request.body), secretName: request.params.secretName }) }),
  );

  app.patch(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        summary: 'Update a secret: value, comment, tags, or its name (newSecretName)',
        params: nameParams,
        body: updateSecretBody,
        response: secretResponse,
      },
    },
    async (request) => ({ secret: await secrets.update(request.actor, { ...request.body, ...projectRef(request.body), secretName: request.params.secretName }) }),
  );

  app.delete(
    '/api/v3/secrets/raw/:secretName',
    {
      schema: {
        tags,
        summary: 'Delete a secret (a shared secret takes its personal overrides with it)',
        params: nameParams,
        body: deleteSecretBody,
        response: secretResponse,
      },
    },
    async (request) => ({ secret: await secrets.delete(request.actor, { ...request.body, ...projectRef(request.body), secretName: request.params.secretName }) }),
  );
}

const batchResponse = { 200: z.object({ secrets: z.array(rawSecretSchema) }) };

function batchRoutes(app: ZodApp, { secretBatch }: Services): void {
  app.post(
    '/api/v3/secrets/batch/raw',
    {
      schema: {
        tags,
        summary: 'Create several secrets, all or none',
        body: createSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => ({ secrets: await secretBatch.createMany(request.actor, { ...request.body, ...projectRef(request.body) }, request.body.secrets) }),
  );

  app.patch(
    '/api/v3/secrets/batch/raw',
    {
      schema: {
        tags,
        summary: 'Update several secrets, all or none',
        body: updateSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => ({ secrets: await secretBatch.updateMany(request.actor, { ...request.body, ...projectRef(request.body) }, request.body.secrets) }),
  );

  app.delete(
    '/api/v3/secrets/batch/raw',
    {
      schema: {
        tags,
        summary: 'Delete several secrets, all or none',
        body: deleteSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => ({ secrets: await secretBatch.deleteMany(request.actor, { ...request.body, ...projectRef(request.body) }, request.body.secrets) }),
  );
}

const tagBody = z.object({
  projectSlug: id(),
  environment: required(),
  secretPath: secretPathField(),
  type: secretType,
  tagSlugs: z.array(required().toLowerCase()).min(1),
});

function tagRoutes(app: ZodApp, { secretTagging }: Services): void {
  for (const [method, summary] of [
    ['post', 'Attach tags to a secret'],
    ['delete', 'Detach tags from a secret'],
  ] as const) {
    app[method](
      '/api/v3/secrets/tags/:secretName',
      { schema: { tags, summary, params: nameParams, body: tagBody, response: { 200: z.object({ secret: encryptedSecretSchema }) } } },
      async (request) => {
        const input = { ...request.body, secretName: request.params.secretName };
        return { secret: method === 'post' ? await secretTagging.attach(request.actor, input) : await secretTagging.detach(request.actor, input) };
      },
    );
  }
}
