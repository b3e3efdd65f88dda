import { z } from 'zod';
import type { Services } from '../../app/container.ts';
import { changes, describeRoute, projectPermission, reads } from '../docs/operation-doc.ts';
import type { ZodApp } from '../zod-app.ts';
import { bigInteger, dateTime, environmentSlug, id, optionalInteger, path, required } from '../../validation/input.ts';

const tags = ['Change control'];
const snapshotSchema = z.object({
  id: z.string().describe("The snapshot's id: the change-feed revision of the write it follows."),
  revision: z.number().int(),
  envId: z.string(),
  folderId: z.string(),
  parentFolderId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const countsSchema = z.object({ folderId: z.string(), secretPath: z.string(), created: z.number().int(), updated: z.number().int(), deleted: z.number().int() });
const placeQuery = {
  environment: environmentSlug(),
  path: path(),
};
const snapshotParams = z.object({ snapshotId: required(32).describe("The snapshot's id (a revision).") });
const readPermission = `${projectPermission('read', 'secret-rollback')}, and \`secrets: read\` at the folder`;
const restorePermission = `${projectPermission('create', 'secret-rollback')}, and \`secrets: edit\` at the folder`;

export function snapshotRoutes(app: ZodApp, { snapshots }: Services): void {
  app.get(
    '/api/v1/workspace/:workspaceId/secret-snapshots',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "List a folder's snapshots",
          description: "The folder's states over time, one per committed secret write to it, newest first.",
          permission: readPermission,
          effects: reads(),
        }),
        params: z.object({ workspaceId: id().describe("The project's id.") }),
        querystring: z.object({
          ...placeQuery,
          limit: optionalInteger(1, 100).describe('At most this many (default 20).'),
          offset: optionalInteger(0, 1_000_000).describe('Skip this many (default 0).'),
        }),
        response: { 200: z.object({ secretSnapshots: z.array(snapshotSchema) }) },
      },
    },
    async (request) => {
      const { environment, path: secretPath, limit, offset } = request.query;
      return { secretSnapshots: await snapshots.list(request.actor, request.params.workspaceId, { environment, secretPath, limit: limit ?? 20, offset: offset ?? 0 }) };
    },
  );

  app.get(
    '/api/v1/workspace/:workspaceId/secret-snapshots/count',
    {
      schema: {
        tags,
        ...describeRoute({ summary: "Count a folder's snapshots", description: 'How many snapshots the folder has.', permission: readPermission, effects: reads() }),
        params: z.object({ workspaceId: id().describe("The project's id.") }),
        querystring: z.object(placeQuery),
        response: { 200: z.object({ count: z.number().int() }) },
      },
    },
    async (request) => ({
      count: await snapshots.count(request.actor, request.params.workspaceId, { environment: request.query.environment, secretPath: request.query.path }),
    }),
  );

  app.get(
    '/api/v1/secret-snapshot/:snapshotId',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Get a snapshot',
          description: "The folder's shared secrets as they stood at the snapshot, with values.",
          permission: readPermission,
          effects: reads(),
        }),
        params: snapshotParams,
        response: {
          200: z.object({
            secretSnapshot: snapshotSchema.extend({
              environment: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
              secretPath: z.string(),
              secretVersions: z.array(
                z.object({
                  id: z.string(),
                  secretId: z.string(),
                  version: z.number().int(),
                  secretKey: z.string(),
                  secretValue: z.string(),
                  secretComment: z.string(),
                  skipMultilineEncoding: z.boolean(),
                  tagIds: z.array(z.string()),
                }),
              ),
            }),
          }),
        },
      },
    },
    async (request) => ({ secretSnapshot: await snapshots.get(request.actor, request.params.snapshotId) }),
  );

  app.post(
    '/api/v1/secret-snapshot/:snapshotId/rollback',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Roll a folder back to a snapshot',
          description:
            'Restores the folder of the snapshot (not its subfolders) to its state then, as one new change; reversible by rolling back to the snapshot before it.',
          permission: restorePermission,
          effects: changes('Writes the secrets back as new versions.', 'restore-secrets'),
        }),
        params: snapshotParams,
        response: { 200: z.object({ secretSnapshot: snapshotSchema.extend({ restored: countsSchema }) }) },
      },
    },
    async (request) => ({ secretSnapshot: await snapshots.rollback(request.actor, request.params.snapshotId) }),
  );

  app.post(
    '/api/v1/workspace/:workspaceId/secrets/restore',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: 'Restore to a point in time',
          description:
            'Restores a folder (with `recursive`, every folder below it too) to its secrets at a revision or a time, as one new change synced like any write. With `recursive`, folders below the path deleted since are recreated (same paths, new ids) with their secrets then, and folders made since are removed (`recreatedFolders`, `removedFolders`; these also need `secret-folders` create or delete at the path). The path itself must exist now.',
          permission: restorePermission,
          effects: changes('Writes the secrets back as new versions.', 'restore-secrets'),
          errors: [400],
        }),
        params: z.object({ workspaceId: id().describe("The project's id.") }),
        body: z.object({
          environment: environmentSlug(),
          secretPath: path(),
          recursive: z.boolean().default(false).describe('Every folder below the path too (20 levels at most).'),
          revision: bigInteger(0, Number.MAX_SAFE_INTEGER).optional().describe('The change-feed revision to go back to.'),
          at: dateTime().optional().describe('Or a time: the newest revision committed at or before it.'),
        }),
        response: {
          200: z.object({
            revision: z.number().int(),
            environment: z.string(),
            secretPath: z.string(),
            folders: z.array(countsSchema),
            recreatedFolders: z
              .array(z.string())
              .describe('Paths of the folders deleted since the revision that the restore made again.')
              .meta({ examples: [['/app/db']] }),
            removedFolders: z
              .array(z.string())
              .describe('Paths of the folders made since the revision that the restore removed.')
              .meta({ examples: [['/app/tmp']] }),
          }),
        },
      },
    },
    async (request) => {
      const { at, ...input } = request.body;
      return snapshots.restore(request.actor, request.params.workspaceId, { ...input, at: at === undefined ? undefined : new Date(at) });
    },
  );
}
