import { z } from 'zod';
import { importedGroupSchema, listedSecretSchema, rawSecretSchema, withValueVisibility } from '../../secrets/secret-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
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
  secretDocs,
  v4Doc,
  proposedWrites,
} from './secret-fields.ts';
import { approvalRequestSchema } from '../../approvals/approval-schema.ts';
import { describeRoute } from '../docs/operation-doc.ts';

/**
 * The v4 secrets API (the current Infisical CLI and operator): the v3 operations under new
 * paths with `projectId`, `includeImports`, `includePersonalOverrides` and `viewSecretValue`,
 * and the v4 defaults (imports included, references expanded). Same services as v3.
 */
const tags = ['Secrets (v4)'];
const v4Reads = { includeImports: true, expandSecretReferences: true };
const visible = { secretValueHidden: z.boolean().describe('Whether `secretValue` was masked (`viewSecretValue=false`).') };
const viewSecretValue = flag(true).describe('`false`: values are masked and `secretValueHidden` is true. Default: true.');
const v4Secret = rawSecretSchema.extend(visible);

/** A write's answer shows the value, but not to the console: it shows a value only when its user reveals one. */
const shownTo = (request: { viaConsole: boolean }) => !request.viaConsole;
/** A single write answers the secret, or (a user's shared write at a place an approval policy protects) the change request it became. */
const v4WriteResponse = { 200: z.union([z.object({ secret: v4Secret }), z.object({ approval: approvalRequestSchema })]) };
/** A batch answers the secrets, or (a user's shared batch at a place an approval policy protects) the one change request it became. */
const batchResponse = { 200: z.union([z.object({ secrets: z.array(v4Secret) }), z.object({ approval: approvalRequestSchema })]) };

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
        ...describeRoute(
          v4Doc(
            secretDocs.list,
            "v4 reads include imports and expand references unless `includeImports=false` / `expandSecretReferences=false`; `viewSecretValue=false` masks the values (`secretValueHidden`). With `includePersonalOverrides=true` a user's overrides replace the shared values; without, they are left out.",
          ),
        ),
        querystring: z.object({
          ...readQuery(v4Reads),
          recursive: flag(false).describe('`true`: the secrets of every folder below the path too (20 levels at most). Default: false.'),
          viewSecretValue,
          includePersonalOverrides: flag(false).describe("`true`: a user's personal overrides replace the shared values; `false` (default): they are left out."),
          tagSlugs: commaList().describe('Comma-separated tag slugs: only secrets that carry all of them.'),
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
        ...describeRoute(
          v4Doc(
            secretDocs.get,
            'v4 reads include imports and expand references unless `includeImports=false` / `expandSecretReferences=false`; `viewSecretValue=false` masks the values (`secretValueHidden`).',
          ),
        ),
        params: nameParams,
        querystring: z.object({
          ...readQuery(v4Reads),
          version: optionalInteger(1)
            .describe('A past version of the secret (from 1); the current one when absent.')
            // zod leaves `examples` of a transformed input out of its JSON schema, `example` not
            .meta({ example: '2' }),
          type: secretType,
          viewSecretValue,
        }),
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
        // the console reads a value only when its user reveals it
        reveal: request.viaConsole && query.viewSecretValue,
      });
      return { secret: { ...withValueVisibility(secret, query.viewSecretValue), secretPath: query.secretPath } };
    },
  );
}

function writeRoutes(app: ZodApp, { secrets, approvalRequests }: Services): void {
  app.post(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.create),
        params: nameParams,
        body: createSecretBody,
        response: v4WriteResponse,
      },
    },
    async (request) => {
      const input = { ...request.body, ...projectRef(request.body), secretName: request.params.secretName };
      const approval = await approvalRequests.proposeIfProtected(request.actor, input, [{ ...input, op: 'create' }]);
      if (approval) return { approval };
      return { secret: withValueVisibility(await secrets.create(request.actor, input), shownTo(request)) };
    },
  );

  app.patch(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.update),
        params: nameParams,
        body: updateSecretBody,
        response: v4WriteResponse,
      },
    },
    async (request) => {
      const input = { ...request.body, ...projectRef(request.body), secretName: request.params.secretName };
      const approval = await approvalRequests.proposeIfProtected(request.actor, input, [{ ...input, op: 'update' }]);
      if (approval) return { approval };
      return { secret: withValueVisibility(await secrets.update(request.actor, input), shownTo(request)) };
    },
  );

  app.delete(
    '/api/v4/secrets/:secretName',
    {
      schema: {
        tags,
        ...describeRoute(secretDocs.delete),
        params: nameParams,
        body: deleteSecretBody,
        response: v4WriteResponse,
      },
    },
    async (request) => {
      const input = { ...request.body, ...projectRef(request.body), secretName: request.params.secretName };
      const approval = await approvalRequests.proposeIfProtected(request.actor, input, [{ ...input, op: 'delete' }]);
      if (approval) return { approval };
      return { secret: withValueVisibility(await secrets.delete(request.actor, input), shownTo(request)) };
    },
  );
}

function batchRoutes(app: ZodApp, { secretBatch, approvalRequests }: Services): void {
  app.post(
    '/api/v4/secrets/batch',
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
      if (approval) return { approval };
      const created = await secretBatch.createMany(request.actor, location, request.body.secrets);
      return { secrets: created.map((secret) => withValueVisibility(secret, shownTo(request))) };
    },
  );

  app.patch(
    '/api/v4/secrets/batch',
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
      if (approval) return { approval };
      const updated = await secretBatch.updateMany(request.actor, location, request.body.secrets);
      return { secrets: updated.map((secret) => withValueVisibility(secret, shownTo(request))) };
    },
  );

  app.delete(
    '/api/v4/secrets/batch',
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
      if (approval) return { approval };
      const deleted = await secretBatch.deleteMany(request.actor, location, request.body.secrets);
      return { secrets: deleted.map((secret) => withValueVisibility(secret, shownTo(request))) };
    },
  );
}
