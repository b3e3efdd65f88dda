import { z } from 'zod';
import { importedGroupSchema, listedSecretSchema, rawSecretSchema, withValueVisibility } from '../../secrets/secret-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { commaList, flag, optionalInteger, projectRef } from '../../validation/input.ts';
import {
  createSecretBody,
  createSecretsBody,
  deleteSecretBody,
  deleteSecretsBody,
  includeImportsOf,
  nameParams,
  readQuery,
  secretType,
  updateSecretBody,
  updateSecretsBody,
} from './secret-fields.ts';

/**
 * The v4 secrets API (the current Infisical CLI and operator): the v3 operations under new
 * paths with `projectId`, `includeImports`, `includePersonalOverrides` and `viewSecretValue`,
 * and the v4 defaults (imports included, references expanded). Same services as v3.
 */
const tags = ['Secrets (v4)'];
const v4Reads = { includeImports: true, expandSecretReferences: true };
const visible = { secretValueHidden: z.boolean() };
const v4Secret = rawSecretSchema.extend(visible);
const v4Response = { 200: z.object({ secret: v4Secret }) };
const batchResponse = { 200: z.object({ secrets: z.array(v4Secret) }) };

export function secretV4Routes(app: ZodApp, services: Services): void {
  readRoutes(app, services);
  writeRoutes(app, services);
  batchRoutes(app, services);
}

function readRoutes(app: ZodApp, { secretReader }: Services): void {
  app.get(
    '/api/v4/secrets',
    {
      schema: {
        tags,
        summary: 'List secrets (imports included and references expanded unless turned off)',
        querystring: z.object({
          ...readQuery(v4Reads),
          recursive: flag(false),
          viewSecretValue: flag(true),
          includePersonalOverrides: flag(false).describe("true: a user's personal overrides replace the shared values"),
          tagSlugs: commaList().describe('comma-separated tag slugs'),
        }),
        response: {
          200: z.object({
            secrets: z.array(listedSecretSchema.extend(visible)),
            imports: z.array(importedGroupSchema.extend({ secrets: z.array(importedGroupSchema.shape.secrets.element.extend(visible)) })).optional(),
          }),
        },
      },
    },
    async (request) => {
      const { query } = request;
      const listing = await secretReader.list(request.actor, {
        ...projectRef(query),
        environment: query.environment,
        secretPath: query.secretPath,
        recursive: query.recursive,
        includeImports: includeImportsOf(query, v4Reads.includeImports),
        expandSecretReferences: query.expandSecretReferences,
        tagSlugs: query.tagSlugs.map((slug) => slug.toLowerCase()),
        personalOverrides: query.includePersonalOverrides ? 'priority' : 'none',
      });
      const view = query.viewSecretValue;
      return {
        secrets: listing.secrets.map((secret) => withValueVisibility(secret, view)),
        imports: listing.imports?.map((group) => ({ ...group, secrets: group.secrets.map((secret) => withValueVisibility(secret, view)) })),
      };
    },
  );

  app.get(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        summary: 'Get a secret (through imports and with references expanded unless turned off)',
        params: nameParams,
        querystring: z.object({ ...readQuery(v4Reads), version: optionalInteger(1), type: secretType, viewSecretValue: flag(true) }),
        response: { 200: z.object({ secret: v4Secret.extend({ secretPath: z.string() }) }) },
      },
    },
    async (request) => {
      const { query } = request;
      const secret = await secretReader.get(request.actor, {
        ...projectRef(query),
        environment: query.environment,
        secretPath: query.secretPath,
        secretName: request.params.secretName,
        type: query.type,
        version: query.version,
        includeImports: includeImportsOf(query, v4Reads.includeImports),
        expandSecretReferences: query.expandSecretReferences,
      });
      return { secret: { ...withValueVisibility(secret, query.viewSecretValue), secretPath: query.secretPath } };
    },
  );
}

function writeRoutes(app: ZodApp, { secrets }: Services): void {
  app.post(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        summary: 'Create a secret',
        params: nameParams,
        body: createSecretBody,
        response: v4Response,
      },
    },
    async (request) => {
      const secret = await secrets.create(request.actor, { ...request.body, ...projectRef(request.body), secretName: request.params.secretName });
      return { secret: withValueVisibility(secret, true) };
    },
  );

  app.patch(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        summary: 'Update a secret: value, comment, tags, or its name (newSecretName)',
        params: nameParams,
        body: updateSecretBody,
        response: v4Response,
      },
    },
    async (request) => {
      const secret = await secrets.update(request.actor, { ...request.body, ...projectRef(request.body), secretName: request.params.secretName });
      return { secret: withValueVisibility(secret, true) };
    },
  );

  app.delete(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        summary: 'Delete a secret (a shared secret takes its personal overrides with it)',
        params: nameParams,
        body: deleteSecretBody,
        response: v4Response,
      },
    },
    async (request) => {
      const secret = await secrets.delete(request.actor, { ...request.body, ...projectRef(request.body), secretName: request.params.secretName });
      return { secret: withValueVisibility(secret, true) };
    },
  );
}

function batchRoutes(app: ZodApp, { secretBatch }: Services): void {
  app.post(
    '/api/v4/secrets/batch',
    {
      schema: {
        tags,
        summary: 'Create several secrets, all or none',
        body: createSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => {
      const created = await secretBatch.createMany(request.actor, { ...request.body, ...projectRef(request.body) }, request.body.secrets);
      return { secrets: created.map((secret) => withValueVisibility(secret, true)) };
    },
  );

  app.patch(
    '/api/v4/secrets/batch',
    {
      schema: {
        tags,
        summary: 'Update several secrets, all or none',
        body: updateSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => {
      const updated = await secretBatch.updateMany(request.actor, { ...request.body, ...projectRef(request.body) }, request.body.secrets);
      return { secrets: updated.map((secret) => withValueVisibility(secret, true)) };
    },
  );

  app.delete(
    '/api/v4/secrets/batch',
    {
      schema: {
        tags,
        summary: 'Delete several secrets, all or none',
        body: deleteSecretsBody,
        response: batchResponse,
      },
    },
    async (request) => {
      const deleted = await secretBatch.deleteMany(request.actor, { ...request.body, ...projectRef(request.body) }, request.body.secrets);
      return { secrets: deleted.map((secret) => withValueVisibility(secret, true)) };
    },
  );
}
