import { z } from 'zod';
import { auditLogSchema, USER_AGENT_TYPES } from '../../audit/audit-schema.ts';
import type { Services } from '../../app/container.ts';
import type { ZodApp } from '../zod-app.ts';
import { dateTime, id, optional, optionalInteger, TEXT_MAX, text } from '../../validation/input.ts';
import { describeRoute, orgPermission, projectPermission, reads } from '../docs/operation-doc.ts';

const tags = ['Audit logs'];
const auditQuery = {
  eventType: optional(text(TEXT_MAX).regex(/^[a-z0-9-]+(,[a-z0-9-]+)*$/, 'one event type, or several separated by commas')).describe(
    'Only entries of this event type, or of these (comma-separated), such as `create-secret,update-secret`.',
  ),
  userAgentType: optional(z.enum(USER_AGENT_TYPES)).describe('Only entries made by this kind of client (`ServiceNodeSDK` and `InfisicalNodeSDK` match each other).'),
  startDate: optional(dateTime()).describe('Only entries from this time on (ISO 8601); the oldest retained entry when absent.'),
  endDate: optional(dateTime()).describe('Only entries up to this time (ISO 8601).'),
  offset: optionalInteger(0)
    .transform((value) => value ?? 0)
    .describe('How many entries to skip (default 0).'),
  limit: optionalInteger(1, 1000)
    .transform((value) => value ?? 20)
    .describe('How many entries to answer, 1 to 1000 (default 20).'),
  actor: optional(id()).describe('Only entries made by this user or identity (its id).'),
  cursor: optional(text(1024)).describe('The `nextCursor` of the previous page: the next page stays stable while new entries arrive.'),
};
const auditFacts = 'Newest first (ties by id). Entries expire after `COFFER_AUDIT_RETENTION_DAYS`. Metadata holds names, ids and paths, never a value or a credential.';
const pageResponse = {
  200: z.object({
    auditLogs: z.array(auditLogSchema),
    nextCursor: z.string().optional().describe('Pass it as `cursor` for the next page; absent on the last page.'),
  }),
};

export function auditRoutes(app: ZodApp, { auditExport }: Services): void {
  app.get(
    '/api/v1/workspace/:workspaceId/audit-logs',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Export a project's audit log",
          description: `The audit entries of a project. ${auditFacts}`,
          permission: projectPermission('read', 'audit-logs'),
          effects: reads(),
        }),
        params: z.object({ workspaceId: id().describe("The project's id.") }),
        querystring: z.object(auditQuery),
        response: pageResponse,
      },
    },
    async (request) => auditExport.projectLogs(request.actor, request.params.workspaceId, request.query),
  );

  app.get(
    '/api/v1/organization/audit-logs',
    {
      schema: {
        tags,
        ...describeRoute({
          summary: "Export the organization's audit log",
          description: `The audit entries of the caller's organization that it may read: of the projects whose audit log it may read, and the organization's own entries when its organization role may read them (organization admins: everything). ${auditFacts}`,
          permission: `any member of the organization; what it sees follows ${orgPermission('read', 'audit-logs').replace(/\.$/, '')} and \`read\` on \`audit-logs\` in each project.`,
          effects: reads(),
        }),
        querystring: z.object({
          ...auditQuery,
          projectId: optional(id()).describe('Only entries of this project (its id); the caller must be able to read its audit log (403 otherwise).'),
          actorType: optional(z.enum(['user', 'identity', 'service', 'unknownUser'])).describe(
            'Only entries made by users, identities, Coffer itself (`service`), or nobody signed in (`unknownUser`: login lockouts and guards).',
          ),
          eventMetadata: optional(text(4096)).describe('`key1=value1,key2=value2`: only entries whose metadata holds these.'),
        }),
        response: pageResponse,
      },
    },
    async (request) => auditExport.organizationLogs(request.actor, request.query),
  );
}
