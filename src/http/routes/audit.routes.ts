import { z } from 'zod';
import { auditLogSchema, USER_AGENT_TYPES } from '../../audit/audit-schema.ts';
import type { Services } from '../../services/container.ts';
import type { ZodApp } from '../app.ts';

const tags = ['Audit logs'];
const auditQuery = {
  eventType: z.string().regex(/^[a-z0-9-]+(,[a-z0-9-]+)*$/, 'one event type, or several separated by commas').optional(),
  userAgentType: z.enum(USER_AGENT_TYPES).optional(),
  startDate: z.iso.datetime({ offset: true }).optional(),
  endDate: z.iso.datetime({ offset: true }).optional(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(20),
  actor: z.string().trim().min(1).optional().describe('a user id or an identity id'),
  cursor: z.string().optional().describe('nextCursor of the previous page: stable paging while new entries arrive'),
};
const pageResponse = { 200: z.object({ auditLogs: z.array(auditLogSchema), nextCursor: z.string().optional() }) };

export function auditRoutes(app: ZodApp, { auditExport }: Services): void {
  app.get(
    '/api/v1/workspace/:workspaceId/audit-logs',
    {
      schema: {
        tags,
        summary: "Export a project's audit log, newest first",
        params: z.object({ workspaceId: z.string().trim() }),
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
          projectId: z.string().trim().optional(),
          actorType: z.enum(['user', 'identity', 'service']).optional(),
          eventMetadata: z.string().optional().describe("'key1=value1,key2=value2': entries whose metadata holds these"),
        }),
        response: pageResponse,
      },
    },
    async (request) => auditExport.organizationLogs(request.actor, request.query),
  );
}
