import { z } from 'zod';
import { auditLogSchema, USER_AGENT_TYPES } from '../../audit/audit-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';
import { id, optional, optionalInteger, text } from '../../validation/input.ts';

const tags = ['Audit logs'];
const auditQuery = {
  eventType: optional(z.string().regex(/^[a-z0-9-]+(,[a-z0-9-]+)*$/, 'one event type, or several separated by commas')),
  userAgentType: optional(z.enum(USER_AGENT_TYPES)),
  startDate: optional(z.iso.datetime({ offset: true })),
  endDate: optional(z.iso.datetime({ offset: true })),
  offset: optionalInteger(0).transform((value) => value ?? 0),
  limit: optionalInteger(1, 1000).transform((value) => value ?? 20),
  actor: optional(id()).describe('a user id or an identity id'),
  cursor: optional(text(1024)).describe('nextCursor of the previous page: stable paging while new entries arrive'),
};
const pageResponse = { 200: z.object({ auditLogs: z.array(auditLogSchema), nextCursor: z.string().optional() }) };

export function auditRoutes(app: ZodApp, { auditExport }: Services): void {
  app.get(
    '/api/v1/workspace/:workspaceId/audit-logs',
    {
      schema: {
        tags,
        summary: "Export a project's audit log, newest first",
        params: z.object({ workspaceId: id() }),
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
        summary: "Export the organization's audit log, newest first",
        querystring: z.object({
          ...auditQuery,
          projectId: optional(id()),
          actorType: optional(z.enum(['user', 'identity', 'service', 'unknownUser'])),
          eventMetadata: optional(text(4096)).describe("'key1=value1,key2=value2': entries whose metadata holds these"),
        }),
        response: pageResponse,
      },
    },
    async (request) => auditExport.organizationLogs(request.actor, request.query),
  );
}
